import { EntitySchema } from '@mikro-orm/core';

/** `mailer` rows back mailer routes (services/mailer), `rss` and `ci` rows RSS and CI sources (services/sources): never listed or invoked by token; their runs have trigger `email`, `rss`, `api` (CI, starting at the source's CI node). */
export type WebhookKind = 'generic' | 'errtracker' | 'mailer' | 'rss' | 'ci';

export interface Webhook {
  id: string;
  workspaceId: string;
  workflowId: string;
  /** The destination whose published version the webhook runs (null only for rows made before destinations). */
  targetId: string | null;
  /** The trigger node the webhook invokes (a `webhook` node; for errtracker the start/webhook node). */
  nodeId: string;
  kind: WebhookKind;
  /** SHA-256 of the URL token. The token itself is derived from SECRET_KEY and never stored. */
  tokenDigest: string;
  enabled: boolean;
  config: { dedupeHeader?: string; organizationSlug?: string; projectSlug?: string; credentialId?: string };
  /** errtracker only: the HMAC signing secret, encrypted with SECRET_KEY (AES-256-GCM). */
  signingSecretEncrypted: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export type OutboxStatus = 'pending' | 'dispatched' | 'failed';

export interface WebhookOutboxEntry {
  id: string;
  workspaceId: string;
  webhookId: string;
  workflowId: string;
  payload: unknown;
  /** Provider delivery id (X-GitHub-Delivery, Idempotency-Key, …): a repeat is deduplicated. */
  dedupeKey: string | null;
  status: OutboxStatus;
  /** Derived from the outbox id, so a retried dispatch never starts a second run. */
  runId: string;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  dispatchedAt: Date | null;
}

export const WebhookSchema = new EntitySchema<Webhook>({
  name: 'Webhook',
  tableName: 'webhooks',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true },
    workflowId: { type: 'string', fieldName: 'workflow_id' },
    targetId: { type: 'string', fieldName: 'target_id', nullable: true },
    nodeId: { type: 'string', fieldName: 'node_id' },
    kind: { type: 'string' },
    tokenDigest: { type: 'string', fieldName: 'token_digest', unique: true, hidden: true },
    enabled: { type: 'boolean' },
    config: { type: 'json' },
    signingSecretEncrypted: { type: 'text', fieldName: 'signing_secret_encrypted', nullable: true, hidden: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

export const WebhookOutboxSchema = new EntitySchema<WebhookOutboxEntry>({
  name: 'WebhookOutboxEntry',
  tableName: 'webhook_outbox',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    webhookId: { kind: 'm:1', entity: 'Webhook', fieldName: 'webhook_id', mapToPk: true },
    workflowId: { type: 'string', fieldName: 'workflow_id' },
    payload: { type: 'json' },
    dedupeKey: { type: 'string', fieldName: 'dedupe_key', nullable: true },
    status: { type: 'string' },
    runId: { type: 'string', fieldName: 'run_id' },
    attempts: { type: 'integer' },
    lastError: { type: 'text', fieldName: 'last_error', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    dispatchedAt: { type: 'Date', fieldName: 'dispatched_at', columnType: 'timestamptz', nullable: true },
  },
});
