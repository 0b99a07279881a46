import { EntitySchema } from '@mikro-orm/core';

export interface IdempotencyRecord {
  id: string;
  workspaceId: string;
  key: string;
  /** Who used the key first (api key id or session user id); another principal gets 409. */
  principalId: string;
  /** SHA-256 of method, route and body: the same key with another request gets 409. */
  fingerprint: string;
  state: 'in_progress' | 'completed';
  responseStatus: number | null;
  responseBody: unknown;
  responseHeaders: Record<string, string> | null;
  createdAt: Date;
  expiresAt: Date;
}

export const IdempotencyRecordSchema = new EntitySchema<IdempotencyRecord>({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_records',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    key: { type: 'string' },
    principalId: { type: 'string', fieldName: 'principal_id' },
    fingerprint: { type: 'string' },
    state: { type: 'string' },
    responseStatus: { type: 'integer', fieldName: 'response_status', nullable: true },
    responseBody: { type: 'json', fieldName: 'response_body', nullable: true },
    responseHeaders: { type: 'json', fieldName: 'response_headers', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    expiresAt: { type: 'Date', fieldName: 'expires_at', columnType: 'timestamptz' },
  },
});
