import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, HIDDEN, references, timestamps, timestamptz, workspaceScoped } from './columns';
import { workspaceOwned } from './workspaces';

/** `mailer` rows back mailer routes (services/mailer), `rss` and `ci` rows RSS and CI sources (services/sources): never listed or invoked by token; their runs have trigger `email`, `rss`, `api` (CI, starting at the source's CI node). */
export type WebhookKind = 'generic' | 'errtracker' | 'mailer' | 'rss' | 'ci';

export type OutboxStatus = 'pending' | 'dispatched' | 'failed';

export const WebhookSchema = entity('Webhook', 'webhooks', {
  ...workspaceOwned(),
  workflowId: p.string(),
  /** The destination whose published version the webhook runs (null only for rows made before destinations). */
  targetId: p.string().nullable(),
  /** The trigger node the webhook invokes (a `webhook` node; for errtracker the start/webhook node). */
  nodeId: p.string(),
  kind: p.string().$type<WebhookKind>(),
  /** SHA-256 of the URL token. The token itself is derived from SECRET_KEY and never stored. */
  tokenDigest: p.string().unique().hidden(HIDDEN),
  enabled: p.boolean(),
  config: p.json<{ dedupeHeader?: string; organizationSlug?: string; projectSlug?: string; credentialId?: string }>(),
  /** errtracker only: the HMAC signing secret, encrypted with SECRET_KEY (AES-256-GCM). */
  signingSecretEncrypted: p.text().nullable().hidden(HIDDEN),
  ...timestamps(),
});
export type Webhook = InferEntity<typeof WebhookSchema>;

export const WebhookOutboxSchema = entity('WebhookOutboxEntry', 'webhook_outbox', {
  ...workspaceScoped(),
  webhookId: references(WebhookSchema, 'webhook_id'),
  workflowId: p.string(),
  payload: p.json<unknown>(),
  /** Provider delivery id (X-GitHub-Delivery, Idempotency-Key, …): a repeat is deduplicated. */
  dedupeKey: p.string().nullable(),
  status: p.string().$type<OutboxStatus>(),
  /** Derived from the outbox id, so a retried dispatch never starts a second run. */
  runId: p.string(),
  attempts: p.integer(),
  lastError: p.text().nullable(),
  ...createdAt(),
  dispatchedAt: timestamptz('dispatched_at').nullable(),
});
export type WebhookOutboxEntry = InferEntity<typeof WebhookOutboxSchema>;
