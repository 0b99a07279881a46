import type { EntityManager } from '@mikro-orm/postgresql';
import {
  WebhookOutboxSchema,
  WebhookSchema,
  WorkflowSchema,
  WorkflowVersionSchema,
  type Run,
  type Webhook,
  type Workflow,
  type WorkflowVersion,
} from '../../db/entities';
import { DEFAULT_OUTBOX_START_PARALLELISM, requireSecretKey } from '../kernel/config';
import { invalidInput, notFound, unauthenticated } from '../kernel/errors';
import { newId, randomToken, sha256Hex } from '../kernel/ids';
import { toStorable } from '../kernel/storableText';
import type { WorkspacePrincipal } from '../kernel/principal';
import type { RunLauncher } from '../kernel/ports';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { decryptSecret, encryptSecret } from '../kernel/secrets';
import { CredentialUseError, errtrackerSigningSecret, type CredentialKeySettings } from '../credentials';
import { loadWorkflow } from '../workflows/views';
import { webhookData, type WebhookData } from './registry';
import {
  activeConnectionBindings,
  failOutboxEntries,
  insertOutboxEntry,
  lockPendingOutbox,
  markOutboxDispatched,
  recordOutboxStartFailures,
} from './store';
import { writeRunRow, writeRunRows } from '../runs/runRows';
import { findTargetOf, runnableVersionForTrigger } from '../destinations/runtime';
import { ensureProductionTarget } from '../destinations/model';
import type { GraphNode } from '../../engine/types';
import type { RunExecutionTarget } from '../../db/entities';

/** Headers never passed into a run: credentials and session material. */
const STRIPPED_HEADERS = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'proxy-authorization',
  'x-auth-token',
  'x-csrf-token',
]);
/** Provider delivery ids recognised for deduplication, besides a node's own `dedupeHeader`. */
const DELIVERY_ID_HEADERS = ['x-github-delivery', 'idempotency-key', 'x-delivery-id', 'x-gitlab-event-uuid', 'x-request-id'];

export interface InboundRequest {
  method: string;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed body: JSON, form fields, or text; undefined when there was none. */
  body: unknown;
}

/**
 * The run input of a webhook call: the body's fields (or the query's for GET) plus `_webhook`
 * without credentials. A body that has no fields to merge (a JSON array, text, a number) is
 * the input's `body` itself, and `_webhook.bodyWrapped` says so: without it an object body
 * `{ "body": [...] }` and an array body `[...]` would be the same input, and an item built from
 * the input (the external tool's `{ headers, query, body }`) could not tell which it was.
 */
export function webhookPayload(req: InboundRequest): Record<string, unknown> {
  const headers = Object.fromEntries(
    Object.entries(req.headers)
      .filter(([k, v]) => v !== undefined && !STRIPPED_HEADERS.has(k.toLowerCase()))
      .map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : v]),
  );
  const meta = { method: req.method, query: req.query, headers };
  const source = req.method === 'GET' || req.method === 'HEAD' ? req.query : req.body;
  if (source === undefined) return { _webhook: meta };
  if (source && typeof source === 'object' && !Array.isArray(source)) return { ...(source as Record<string, unknown>), _webhook: meta };
  return { body: source, _webhook: { ...meta, bodyWrapped: true } };
}

/**
 * The methods a webhook takes: those its trigger node declares in `config.method`, HEAD going
 * with GET; null when it takes every method (`ANY`, the default, or no trigger node of its own).
 */
export function declaredMethods(resolved: ResolvedWebhook): string[] | null {
  const node = resolved.version.nodes.find((n) => n.id === resolved.webhook.nodeId && n.type === 'webhook');
  const method = (node?.config as { method?: unknown } | undefined)?.method;
  if (typeof method !== 'string' || method === 'ANY') return null;
  return method === 'GET' ? ['GET', 'HEAD'] : [method];
}

export interface ResolvedWebhook {
  webhook: Webhook;
  workflow: Workflow;
  version: WorkflowVersion;
  /** Set for webhooks of a preview destination (`run.executionTarget`). */
  executionTarget: RunExecutionTarget | null;
  /** Error-tracker endpoints start at the trigger their `nodeId` selected. */
  startNodeId: string | null;
}

/**
 * Finds the enabled webhook of a token and the active version of its destination.
 * Unknown tokens, disabled webhooks, workflows that may not run (services/workflows/runnable.ts) and
 * preview destinations that are not published under an approval (services/destinations) are
 * all not found, so a URL reveals nothing once it stops working.
 */
export async function resolveWebhookToken(em: EntityManager, token: string, kind: Webhook['kind'] = 'generic'): Promise<ResolvedWebhook> {
  const missing = () => notFound('Webhook not found');
  if (!/^[A-Za-z0-9_-]{8,100}$/.test(token)) throw missing();
  const webhook = await em.findOne(WebhookSchema, { tokenDigest: sha256Hex(token), kind });
  if (!webhook || !webhook.enabled) throw missing();
  const resolved = await resolveWebhook(em, webhook);
  if (!resolved) throw missing();
  return resolved;
}

/** The version a webhook runs now, or null when its workflow or destination cannot run. */
async function resolveWebhook(em: EntityManager, webhook: Webhook): Promise<ResolvedWebhook | null> {
  const workflow = await em.findOne(WorkflowSchema, { id: webhook.workflowId });
  const runnable = await runnableVersionForTrigger(em, workflow, webhook.targetId);
  if (runnable.kind === 'refused') return null;
  if (webhook.kind === 'errtracker' && !(await endpointConnectionPublished(em, webhook))) return null;
  const startNodeId =
    (webhook.kind === 'errtracker' || webhook.kind === 'ci') && runnable.version.nodes.some((n) => n.id === webhook.nodeId)
      ? webhook.nodeId
      : null;
  return { webhook, workflow: workflow!, version: runnable.version, executionTarget: runnable.executionTarget ?? null, startNodeId };
}

/** An error-tracker endpoint that names a connection works only once its destination was published with that credential bound. */
async function endpointConnectionPublished(em: EntityManager, webhook: Webhook): Promise<boolean> {
  const credentialId = webhook.config.credentialId;
  if (!credentialId) return true;
  const rows = await activeConnectionBindings(em, webhook.targetId);
  return Object.values(rows[0]?.bindings ?? {}).includes(credentialId);
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
  const inserted = await insertOutboxEntry(em, {
    id,
    workspaceId: resolved.webhook.workspaceId,
    webhookId: resolved.webhook.id,
    workflowId: resolved.workflow.id,
    payload: JSON.stringify(toStorable(payload)),
    dedupeKey,
    runId: outboxRunId(id),
  });
  if (inserted.length > 0) return { outboxId: id, deduplicated: false };
  const first = await em.findOneOrFail(WebhookOutboxSchema, { webhookId: resolved.webhook.id, dedupeKey });
  return { outboxId: first.id, deduplicated: true };
}

/** Creates the queued run row of a webhook-triggered run (idempotent on its id). */
export async function createWebhookRun(
  em: EntityManager,
  args: {
    runId: string;
    workflow: Workflow;
    version: WorkflowVersion;
    input: unknown;
    executionTarget?: RunExecutionTarget | null;
    startNodeId?: string | null;
    trigger?: 'webhook' | 'email' | 'rss' | 'api';
  },
): Promise<Run> {
  return writeRunRow(em, {
    startNodeId: args.startNodeId ?? null,
    id: args.runId,
    workflow: args.workflow,
    trigger: args.trigger ?? 'webhook',
    input: args.input,
    versionId: args.version.id,
    requestedTarget: 'active',
    executionTarget: args.executionTarget ?? null,
  });
}

/** The trigger a run started from a webhook of this kind records. */
function triggerOf(webhook: Webhook): 'webhook' | 'email' | 'rss' | 'api' {
  return webhook.kind === 'mailer' ? 'email' : webhook.kind === 'rss' ? 'rss' : webhook.kind === 'ci' ? 'api' : 'webhook';
}

/** What one dispatch pass did. */
export interface DispatchPass {
  /** Entries handed to the engine. */
  dispatched: number;
  /** Entries whose start failed (Temporal unreachable); they stay pending. */
  startFailures: number;
  /** Run ids of the entries handed over. */
  startedRunIds: string[];
}

/**
 * Hands pending outbox entries to the durable engine, oldest first. Rows are locked with
 * SKIP LOCKED, so several API instances never dispatch the same entry. Each webhook of the
 * batch is resolved once; up to `parallelism` entries at once (OUTBOX_START_PARALLELISM) get their run row
 * (committed first) and their run started, and the batch is marked in one statement. An entry whose start fails
 * (Temporal down) stays pending for the next pass, and because its run id is derived from the
 * outbox id a repeated start cannot create a second run.
 */
export async function dispatchOutbox(
  em: EntityManager,
  launcher: RunLauncher,
  limit = 100,
  parallelism = DEFAULT_OUTBOX_START_PARALLELISM,
): Promise<DispatchPass> {
  const pass: DispatchPass = { dispatched: 0, startFailures: 0, startedRunIds: [] };
  await em.transactional(async (tx) => {
    const rows = await lockPendingOutbox(tx, limit);
    if (rows.length === 0) return;
    const webhooks = await tx.find(WebhookSchema, { id: { $in: [...new Set(rows.map((r) => r.webhook_id))] } });
    const resolutions = new Map<string, ResolvedWebhook | null>();
    for (const webhook of webhooks) resolutions.set(webhook.id, await resolveWebhook(tx, webhook));

    const refused = rows.filter((r) => !resolutions.get(r.webhook_id));
    if (refused.length > 0) {
      await failOutboxEntries(tx, JSON.stringify(refused.map((r) => r.id)), "The webhook's workflow or destination cannot run now.");
    }
    const starts = rows.flatMap((row) => {
      const resolved = resolutions.get(row.webhook_id);
      return resolved ? [{ row, resolved }] : [];
    });
    // The run rows are written in one statement and committed (on their own fork, outside this
    // transaction) before the runs start: the worker's first progress write references them.
    // The outbox rows stay locked meanwhile.
    const runs = await writeRunRows(
      em.fork(),
      starts.map(({ row, resolved }) => ({
        id: row.run_id,
        workflow: resolved.workflow,
        trigger: triggerOf(resolved.webhook),
        input: row.payload,
        versionId: resolved.version.id,
        requestedTarget: 'active' as const,
        executionTarget: resolved.executionTarget ?? null,
        startNodeId: resolved.startNodeId ?? null,
      })),
    );
    const errors = await inParallel(starts, parallelism, ({ resolved }, i) =>
      // writeRunRows gives one run per start, in order.
      launcher.start(runs.at(i)!, { nodes: resolved.version.nodes, edges: resolved.version.edges }),
    );
    const started = starts.filter((_, i) => errors[i] === undefined).map((s) => s.row.id);
    const failures = starts.flatMap((s, i) => (errors[i] === undefined ? [] : [{ id: s.row.id, error: errors[i].message.slice(0, 1000) }]));
    if (started.length > 0) {
      await markOutboxDispatched(tx, JSON.stringify(started));
    }
    if (failures.length > 0) {
      await recordOutboxStartFailures(tx, JSON.stringify(toStorable(failures)));
    }
    pass.dispatched = started.length;
    pass.startedRunIds = starts.filter((_, i) => errors[i] === undefined).map((s) => s.row.run_id);
    pass.startFailures = failures.length;
  });
  return pass;
}

/** Calls `fn` on every item with at most `limit` calls pending; returns each item's error (undefined when it succeeded). */
async function inParallel<T>(
  items: T[],
  limit: number,
  fn: (item: T, index: number) => Promise<unknown>,
): Promise<Array<Error | undefined>> {
  const errors: Array<Error | undefined> = new Array(items.length).fill(undefined);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        await fn(items.at(i)!, i); // i < items.length, checked by the loop
      } catch (err) {
        errors[i] = err instanceof Error ? err : new Error(String(err));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return errors;
}

export interface ErrtrackerWebhookInput {
  provider: 'errtracker';
  workflowId: string;
  organizationSlug: string;
  projectSlug: string;
  credentialId?: string;
  signingSecret?: string;
  /** A named destination: the endpoint runs that destination's published version. */
  executionTargetId?: string;
  /** The trigger (Start or Webhook node) the endpoint starts; required with executionTargetId. */
  nodeId?: string;
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
  credentialKeys: CredentialKeySettings,
): Promise<{ webhook: WebhookData; token: string }> {
  const secretKey = requireSecretKey(secretKeySetting);
  if (input.credentialId !== undefined) {
    // The endpoint verifies with the credential's signing secret, read at delivery time (a rotated secret applies at once).
    try {
      await errtrackerSigningSecret(em, credentialKeys, principal.workspaceId, input.credentialId);
    } catch (err) {
      if (err instanceof CredentialUseError) throw invalidInput(`credentialId: ${err.message}`);
      throw err;
    }
  } else if (!input.signingSecret) throw invalidInput('signingSecret is required.');
  const workflow = await loadWorkflow(em, principal, input.workflowId, { includeTrashed: false });
  // Production's endpoint follows the deployed workflow; a named destination's stays off until that
  // destination is published under an approval (resolveWebhook), and starts at the saved trigger `nodeId`.
  let targetId: string;
  let nodes: GraphNode[];
  if (input.executionTargetId !== undefined) {
    const target = await findTargetOf(em, workflow, input.executionTargetId);
    if (!input.nodeId) throw invalidInput("nodeId (the destination's saved Start or Webhook trigger) is required with executionTargetId.");
    const saved = target.candidateVersionId ? await em.findOne(WorkflowVersionSchema, { id: target.candidateVersionId }) : null;
    targetId = target.id;
    nodes = saved?.nodes ?? [];
  } else {
    targetId = (await ensureProductionTarget(em, workflow)).id;
    nodes = workflow.nodes;
  }
  const isTrigger = (n: GraphNode) => n.type === 'webhook' || n.type === 'start';
  const trigger =
    input.nodeId !== undefined
      ? nodes.find((n) => n.id === input.nodeId && isTrigger(n))
      : (nodes.find((n) => n.type === 'webhook') ?? nodes.find((n) => n.type === 'start'));
  if (!trigger)
    throw invalidInput('The workflow needs a start or webhook trigger to receive error-tracker events.', {
      code: 'event_source_trigger_not_found',
    });
  const token = `etk_${randomToken(24)}`;
  const now = new Date();
  const config = {
    organizationSlug: input.organizationSlug,
    projectSlug: input.projectSlug,
    ...(input.credentialId ? { credentialId: input.credentialId } : {}),
  };
  const signingSecretEncrypted = input.signingSecret ? encryptSecret(secretKey, input.signingSecret) : null;
  let webhook = await em.findOne(WebhookSchema, { workflowId: workflow.id, targetId, nodeId: trigger.id, kind: 'errtracker' });
  if (webhook) {
    Object.assign(webhook, { tokenDigest: sha256Hex(token), config, enabled: true, signingSecretEncrypted, updatedAt: now });
  } else {
    webhook = em.create(WebhookSchema, {
      id: newId('wh'),
      workspaceId: workflow.workspaceId,
      workflowId: workflow.id,
      targetId,
      nodeId: trigger.id,
      kind: 'errtracker',
      tokenDigest: sha256Hex(token),
      enabled: true,
      config,
      signingSecretEncrypted,
      createdAt: now,
      updatedAt: now,
    });
  }
  await em.flush();
  return { webhook: webhookData(webhook, secretKey), token };
}

/**
 * The secret a delivery to `webhook` must be signed with: its bound errtracker credential's
 * signing secret, else the signing secret stored with it; null when neither can be read (every
 * delivery is then refused as unsigned).
 */
export async function errtrackerSecretOf(
  em: EntityManager,
  webhook: Webhook,
  secretKey: string,
  credentialKeys: CredentialKeySettings,
): Promise<string | null> {
  if (webhook.config.credentialId) {
    return errtrackerSigningSecret(em, credentialKeys, webhook.workspaceId, webhook.config.credentialId).catch((err: unknown) => {
      if (err instanceof CredentialUseError) return null;
      throw err;
    });
  }
  return webhook.signingSecretEncrypted ? decryptSecret(secretKey, webhook.signingSecretEncrypted) : null;
}

/** Requests older than this (by the tracker's own timestamp header) are refused as replays. */
const ERRTRACKER_MAX_AGE_MS = 5 * 60_000;

/**
 * Checks an error-tracker delivery: `sentry-hook-signature` must be the hex HMAC-SHA256 of the
 * exact raw body with the endpoint's signing secret (compared in constant time), and a
 * `sentry-hook-timestamp`, when sent, must be recent. 401 otherwise.
 */
export function verifyErrtrackerSignature(
  signingSecret: string | null,
  rawBody: string,
  headers: InboundRequest['headers'],
  now = Date.now(),
): void {
  const invalid = () => unauthenticated('Invalid error-tracker signature.');
  const signature = headers['sentry-hook-signature'];
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/i.test(signature) || !signingSecret) throw invalid();
  const expected = createHmac('sha256', signingSecret).update(rawBody, 'utf8').digest();
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
