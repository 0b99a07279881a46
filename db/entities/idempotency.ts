import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, timestamptz, workspaceScoped } from './columns';

export const IdempotencyRecordSchema = entity('IdempotencyRecord', 'idempotency_records', {
  ...workspaceScoped(),
  key: p.string(),
  /** Who used the key first (api key id or session user id); another principal gets 409. */
  principalId: p.string(),
  /** SHA-256 of method, route and body: the same key with another request gets 409. */
  fingerprint: p.string(),
  state: p.string().$type<'in_progress' | 'completed'>(),
  responseStatus: p.integer().nullable(),
  responseBody: p.json<unknown>().nullable(),
  responseHeaders: p.json<Record<string, string>>().nullable(),
  ...createdAt(),
  expiresAt: timestamptz('expires_at'),
});
export type IdempotencyRecord = InferEntity<typeof IdempotencyRecordSchema>;
