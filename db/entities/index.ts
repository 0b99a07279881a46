import { ApiKeySchema, SessionSchema } from './auth';
import { AuditLogSchema } from './audit';
import { IdempotencyRecordSchema } from './idempotency';
import { MembershipSchema, UserSchema, WorkspaceSchema } from './workspaces';

/** Every entity the ORM knows; add new areas' schemas here. */
export const entities = [
  WorkspaceSchema,
  UserSchema,
  MembershipSchema,
  ApiKeySchema,
  SessionSchema,
  AuditLogSchema,
  IdempotencyRecordSchema,
];

export * from './auth';
export * from './audit';
export * from './idempotency';
export * from './workspaces';
