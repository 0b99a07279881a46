import type { EntityManager } from '@mikro-orm/postgresql';
import {
  WebhookOutboxSchema,
  WebhookSchema,
  WorkflowSchema,
  type Run,
  type Webhook,
  type Workflow,
  type WorkflowVersion,
} from '../../db/entities';
import { requireSecretKey } from '../config';
import { invalidInput, notFound, unauthenticated } from '../errors';
import { newId, randomToken, sha256Hex } from '../ids';
import type { WorkspacePrincipal } from '../principal';
import type { RunLauncher } from '../ports';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { decryptSecret, encryptSecret } from '../secrets';
import { loadWorkflow } from '../workflows/views';
import { webhookData, type WebhookData } from './registry';
import { runnableActiveVersion } from '../runs/runnable';
import { writeRunRow } from '../runs/runRows';

/** Headers never passed into a run: credentials and session material. */
const STRIPPED_HEADERS = new Set(['authorization', 'cookie', 'set-cookie', 'x-api-key', 'proxy-authorization', 'x-auth-token', 'x-csrf-token']);
/** Provider delivery ids recognised for deduplication, besides a node's own `dedupeHeader`. */
const DELIVERY_ID_HEADERS = ['x-github-delivery', 'idempotency-key', 'x-delivery-id', 'x-gitlab-event-uuid', 'x-request-id'];

export interface InboundRequest {
  method: string;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed body: JSON, form fields, or text; undefined when there was none. */
  body: unknown;
}

/** The run input of a webhook call: the body (or the query for GET) plus `_webhook` without credentials. */
export function webhookPayload(req: InboundRequest): Record<string, unknown> {
  const headers = Object.fromEntries(
    Object.entries(req.headers)
      .filter(([k, v]) => v !== undefined && !STRIPPED_HEADERS.has(k.toLowerCase()))
      .map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : v]),
  );
  const meta = { method: req.method, query: req.query, headers };
  const source = req.method === 'GET' || req.method === 'HEAD' ? req.query : req.body;
  const base = source && typeof source === 'object' && !Array.isArray(source) ? (source as Record<string, unknown>) : source === undefined ? {} : { body: source };
  return { ...base, _webhook: meta };
}

export interface ResolvedWebhook {
  webhook: Webhook;
  workflow: Workflow;
  version: WorkflowVersion;
}

/**
 * Finds the enabled webhook of a token and the active version it runs. Unknown tokens,
 * disabled webhooks and workflows that may not run (services/runs/runnable.ts) are all not
 * found, so a URL reveals nothing once it stops working.
 */
export async function resolveWebhookToken(em: EntityManager, token: string, kind: Webhook['kind'] = 'generic'): Promise<ResolvedWebhook> {
  const missing = () => notFound('Webhook not found');
  if (!/^[A-Za-z0-9_-]{8,100}$/.test(token)) throw missing();
  const webhook = await em.findOne(WebhookSchema, { tokenDigest: sha256Hex(token), kind });
  if (!webhook || !webhook.enabled) throw missing();
  const workflow = await em.findOne(WorkflowSchema, { id: webhook.workflowId });
  const runnable = await runnableActiveVersion(em, workflow);
  if (runnable.kind === 'refused') throw missing();
  return { webhook, workflow: workflow!, version: runnable.version };
}

/** The delivery id of a provider event, from the node's configured header or a well-known one. */
export function deliveryId(webhook: Webhook, headers: InboundRequest['headers']): string | null {
  const names = webhook.config.dedupeHeader ? [webhook.config.dedupeHeader, ...DELIVERY_ID_HEADERS] : DELIVERY_ID_HEADERS;
  for (const name of names) {
    const value = headers[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (first && first.length <= 500) return first;
  }
  return null;
}

/** Run id of an outbox entry: derived, so every dispatch attempt names the same Temporal workflow. */
export function outboxRunId(outboxId: string): string {
  return `run_${sha256Hex(`outbox\0${outboxId}`).slice(0, 32)}`;
}

/**
 * Writes an accepted request to the durable outbox. A repeated provider event (same delivery
 * id for the same webhook) writes nothing and returns the first entry, `deduplicated`.
 */
export async function acceptIntoOutbox(
  em: EntityManager,
  resolved: ResolvedWebhook,
  payload: unknown,
  dedupeKey: string | null,
): Promise<{ outboxId: string; deduplicated: boolean }> {
  const id = newId('whe');
  const inserted: Array<{ id: string }> = await em.getConnection().execute(
    `insert into webhook_outbox (id, workspace_id, webhook_id, workflow_id, payload, dedupe_key, status, run_id, attempts, created_at)
     values (?, ?, ?, ?, ?::jsonb, ?, 'pending', ?, 0, now())
     on conflict (webhook_id, dedupe_key) where dedupe_key is not null do nothing
     returning id`,
    [id, resolved.webhook.workspaceId, resolved.webhook.id, resolved.workflow.id, JSON.stringify(payload), dedupeKey, outboxRunId(id)],
  );
  if (inserted.length > 0) return { outboxId: id, deduplicated: false };
  const first = await em.findOneOrFail(WebhookOutboxSchema, { webhookId: resolved.webhook.id, dedupeKey });
  return { outboxId: first.id, deduplicated: true };
}

/** Creates the queued run row of a webhook-triggered run (idempotent on its id). */
export async function createWebhookRun(em: EntityManager, args: { runId: string; workflow: Workflow; version: WorkflowVersion; input: unknown }): Promise<Run> {
  return writeRunRow(em, { id: args.runId, workflow: args.workflow, trigger: 'webhook', input: args.input, versionId: args.version.id, requestedTarget: 'active' });
}

/**
 * Hands pending outbox entries to the durable engine, oldest first. Rows are locked with
 * SKIP LOCKED, so several API instances never dispatch the same entry; an entry whose start
 * fails (Temporal down) stays pending for the next pass, and because its run id is derived
 * from the outbox id a repeated start cannot create a second run. Returns how many were
 * dispatched.
 */
export async function dispatchOutbox(em: EntityManager, launcher: RunLauncher, limit = 100): Promise<number> {
  let dispatched = 0;
  await em.transactional(async (tx) => {
    const conn = tx.getConnection();
    const ctx = tx.getTransactionContext();
    const rows: Array<{ id: string; workflow_id: string; payload: unknown; run_id: string }> = await conn.execute(
      `select id, workflow_id, payload, run_id from webhook_outbox where status = 'pending' order by created_at limit ? for update skip locked`,
      [limit],
      'all',
      ctx,
    );
    for (const row of rows) {
      try {
        const workflow = await tx.findOne(WorkflowSchema, { id: row.workflow_id });
        const runnable = await runnableActiveVersion(tx, workflow);
        if (runnable.kind === 'refused') {
          await conn.execute(`update webhook_outbox set status = 'failed', last_error = ? where id = ?`, [runnable.reason, row.id], 'run', ctx);
          continue;
        }
        const { version } = runnable;
        const run = await createWebhookRun(tx, { runId: row.run_id, workflow: workflow!, version, input: row.payload });
        await launcher.start(run, { nodes: version.nodes, edges: version.edges });
        await conn.execute(`update webhook_outbox set status = 'dispatched', dispatched_at = now(), attempts = attempts + 1 where id = ?`, [row.id], 'run', ctx);
        dispatched++;
      } catch (err) {
        await conn.execute(`update webhook_outbox set attempts = attempts + 1, last_error = ? where id = ?`, [(err as Error).message.slice(0, 1000), row.id], 'run', ctx);
        // Temporal is probably unavailable: stop this pass, the rows stay pending.
        break;
      }
    }
  });
  return dispatched;
}

export interface ErrtrackerWebhookInput {
  provider: 'errtracker';
  workflowId: string;
  organizationSlug: string;
  projectSlug: string;
  credentialId?: string;
  signingSecret?: string;
  /** Named destinations: refused until they exist. */
  executionTargetId?: string;
}

/**
 * Prepares a signed error-tracker endpoint for a workflow of the workspace (creating it again
 * rotates its URL and secret). The invoke URL carries a random token that is shown once: only
 * its digest is kept. The signing secret is stored encrypted with SECRET_KEY (`unavailable`
 * when it is not configured).
 */
export async function createErrtrackerWebhook(
  em: EntityManager,
  secretKeySetting: string | undefined,
  principal: WorkspacePrincipal,
  input: ErrtrackerWebhookInput,
): Promise<{ webhook: WebhookData; token: string }> {
  if (input.executionTargetId !== undefined) throw invalidInput('Named destinations are not available yet; omit executionTargetId.');
  const secretKey = requireSecretKey(secretKeySetting);
  if (input.credentialId !== undefined) {
    throw invalidInput('Credentials are not available yet; send signingSecret (the secret of the error tracker integration).');
  }
  if (!input.signingSecret) throw invalidInput('signingSecret is required.');
  const workflow = await loadWorkflow(em, principal, input.workflowId, { includeTrashed: false });
  const trigger = workflow.nodes.find((n) => n.type === 'webhook') ?? workflow.nodes.find((n) => n.type === 'start');
  if (!trigger) throw invalidInput('The workflow needs a start or webhook trigger to receive error-tracker events.', { code: 'event_source_trigger_not_found' });
  const token = `etk_${randomToken(24)}`;
  const now = new Date();
  const config = { organizationSlug: input.organizationSlug, projectSlug: input.projectSlug };
  let webhook = await em.findOne(WebhookSchema, { workflowId: workflow.id, nodeId: trigger.id, kind: 'errtracker' });
  if (webhook) {
    Object.assign(webhook, { tokenDigest: sha256Hex(token), config, enabled: true, signingSecretEncrypted: encryptSecret(secretKey, input.signingSecret), updatedAt: now });
  } else {
    webhook = em.create(WebhookSchema, {
      id: newId('wh'),
      workspaceId: workflow.workspaceId,
      workflowId: workflow.id,
      nodeId: trigger.id,
      kind: 'errtracker',
      tokenDigest: sha256Hex(token),
      enabled: true,
      config,
      signingSecretEncrypted: encryptSecret(secretKey, input.signingSecret),
      createdAt: now,
      updatedAt: now,
    });
  }
  await em.flush();
  return { webhook: webhookData(webhook, secretKey), token };
}

/** Requests older than this (by the tracker's own timestamp header) are refused as replays. */
const ERRTRACKER_MAX_AGE_MS = 5 * 60_000;

/**
 * Checks an error-tracker delivery: `sentry-hook-signature` must be the hex HMAC-SHA256 of the
 * exact raw body with the endpoint's signing secret (compared in constant time), and a
 * `sentry-hook-timestamp`, when sent, must be recent. 401 otherwise.
 */
export function verifyErrtrackerSignature(
  webhook: Webhook,
  secretKey: string,
  rawBody: string,
  headers: InboundRequest['headers'],
  now = Date.now(),
): void {
  const invalid = () => unauthenticated('Invalid error-tracker signature.');
  const signature = headers['sentry-hook-signature'];
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/i.test(signature) || !webhook.signingSecretEncrypted) throw invalid();
  const expected = createHmac('sha256', decryptSecret(secretKey, webhook.signingSecretEncrypted)).update(rawBody, 'utf8').digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) throw invalid();
  const timestamp = headers['sentry-hook-timestamp'];
  if (typeof timestamp === 'string' && timestamp !== '') {
    const sentAt = Number(timestamp) * 1000;
    if (!Number.isFinite(sentAt) || Math.abs(now - sentAt) > ERRTRACKER_MAX_AGE_MS) throw unauthenticated('Stale error-tracker delivery.');
  }
}

/** Error-tracker deliveries are deduplicated by their request id, else by the exact body. */
export function errtrackerDeliveryId(rawBody: string, headers: InboundRequest['headers']): string {
  const requestId = headers['request-id'];
  return typeof requestId === 'string' && requestId ? `request:${requestId}` : `body:${sha256Hex(rawBody)}`;
}
