import type { CredentialKeySettings } from '../credentials';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { RunSchema, WebhookOutboxSchema } from '../../db/entities';
import { requireSecretKey } from '../kernel/config';
import { notFound } from '../kernel/errors';
import type { RunLauncher } from '../kernel/ports';
import type { WebhookIntake } from './intake';
import { loadRunViews, type RunView } from '../runs';
import {
  acceptIntoOutbox,
  createWebhookRun,
  declaredMethods,
  deliveryId,
  errtrackerDeliveryId,
  outboxRunId,
  resolveWebhookToken,
  errtrackerSecretOf,
  verifyErrtrackerSignature,
  webhookPayload,
  type InboundRequest,
} from './inbound';

/** What the synchronous webhook call needs besides the database. */
export interface WebhookCallDeps {
  launcher: RunLauncher;
  /** How long the caller may wait for a Response node's reply. */
  syncBudgetMs: number;
  log: Pick<Logger, 'warn'>;
  /** The token cache and the group-commit outbox writer (services/webhooks/intake.ts). */
  intake: WebhookIntake;
}

/**
 * How a webhook call ended for its caller:
 * - `accepted`: written to the outbox (or `deduplicated` onto an earlier entry); the dispatcher runs it;
 * - `reply`: the Response node's answer, status and headers included;
 * - `waiting`: the run reached a durable wait before replying;
 * - `processing`: the synchronous budget passed first; the run goes on;
 * - `finished`: the run ended without reaching a Response node;
 * - `method_not_allowed`: the webhook's trigger declares other methods (`allow`); nothing was accepted.
 */
export type WebhookCallOutcome =
  | { kind: 'accepted'; outboxId: string; deduplicated: boolean }
  | { kind: 'reply'; status: number; headers: Record<string, string>; body: unknown }
  | { kind: 'waiting'; runId: string }
  | { kind: 'processing'; runId: string }
  | { kind: 'finished'; run: RunView }
  | { kind: 'method_not_allowed'; allow: string[] };

/**
 * The public webhook call. Every request is first accepted into the durable outbox (a group
 * commit with the requests arriving at the same time; the token's resolution comes from a
 * short-lived cache). Without
 * an enabled Response node that is the answer; with one, the run is started here with an
 * update-with-start and the caller waits, within the synchronous budget, for its reply (no
 * polling). If Temporal cannot be reached the entry stays pending for the outbox dispatcher
 * and the caller gets `accepted`. 404 for unknown tokens and workflows that cannot run; a method
 * the webhook's trigger does not declare is refused before anything is written.
 * `emOf` gives the request's entity manager; it is only asked for when needed.
 */
export async function callWebhook(
  emOf: () => EntityManager,
  deps: WebhookCallDeps,
  token: string,
  request: InboundRequest,
): Promise<WebhookCallOutcome> {
  const resolved = await deps.intake.tokens.resolve(token, () => resolveWebhookToken(emOf().fork(), token));
  const allow = declaredMethods(resolved);
  if (allow && !allow.includes(request.method)) return { kind: 'method_not_allowed', allow };
  const payload = webhookPayload(request);
  const { webhook, workflow } = resolved;
  const { outboxId, deduplicated } = await deps.intake.outbox.accept({
    workspaceId: webhook.workspaceId,
    webhookId: webhook.id,
    workflowId: workflow.id,
    payload,
    dedupeKey: deliveryId(webhook, request.headers),
  });
  const accepted = { kind: 'accepted', outboxId, deduplicated } as const;
  const replies = resolved.version.nodes.some((n) => n.type === 'response' && !n.disabled);
  if (deduplicated || !replies) return accepted;
  const em = emOf();

  const run = await createWebhookRun(em, {
    runId: outboxRunId(outboxId),
    workflow: resolved.workflow,
    version: resolved.version,
    input: payload,
    executionTarget: resolved.executionTarget,
    startNodeId: resolved.startNodeId,
  });
  let reply;
  try {
    reply = await deps.launcher.startWithReply(run, { nodes: resolved.version.nodes, edges: resolved.version.edges }, deps.syncBudgetMs);
  } catch (err) {
    deps.log.warn({ err, outboxId }, 'synchronous webhook start failed; left in the outbox');
    return accepted;
  }
  await markDispatched(em, outboxId);
  switch (reply.kind) {
    case 'response':
      return { kind: 'reply', status: reply.status, headers: reply.headers, body: reply.body };
    case 'waiting':
      return { kind: 'waiting', runId: run.id };
    case 'timeout':
      return { kind: 'processing', runId: run.id };
    default: {
      // A fresh fork: the run row was written by the engine since this request loaded anything.
      const fork = em.fork();
      // loadRunViews gives one view per run.
      const view = (await loadRunViews(fork, [await fork.findOneOrFail(RunSchema, { id: run.id })])).at(0)!;
      return { kind: 'finished', run: view };
    }
  }
}

/** The outbox entry was started here, so the dispatcher must not start it again (it would be a no-op, but costs a call). */
async function markDispatched(em: EntityManager, outboxId: string): Promise<void> {
  await em.nativeUpdate(WebhookOutboxSchema, { id: outboxId, status: 'pending' }, { status: 'dispatched', dispatchedAt: new Date() });
}

/** Error-tracker ingress settings from the configuration. */
export interface ErrtrackerIngressSettings {
  enabled: boolean;
  /** SECRET_KEY as configured; the endpoints' signing secrets are encrypted with it. */
  secretKey: string | undefined;
  /** Keys of workspace credentials, for endpoints bound to an errtracker credential. */
  credentialKeys: CredentialKeySettings;
}

/**
 * An error-tracker delivery: checks its HMAC signature over the exact raw body (401 when
 * missing, forged or stale) and accepts it into the outbox, deduplicated by the tracker's
 * request id (else the body). 404 while the ingress is switched off or for unknown tokens.
 */
export async function receiveErrtrackerDelivery(
  em: EntityManager,
  settings: ErrtrackerIngressSettings,
  token: string,
  request: InboundRequest & { rawBody: string },
): Promise<{ outboxId: string; deduplicated: boolean }> {
  if (!settings.enabled) throw notFound('Not found');
  const resolved = await resolveWebhookToken(em, token, 'errtracker');
  const signingSecret = await errtrackerSecretOf(em, resolved.webhook, requireSecretKey(settings.secretKey), settings.credentialKeys);
  verifyErrtrackerSignature(signingSecret, request.rawBody, request.headers);
  return acceptIntoOutbox(em, resolved, webhookPayload(request), errtrackerDeliveryId(request.rawBody, request.headers));
}
