import { ApiKeySchema, SessionSchema } from './auth';
import { AuditLogSchema } from './audit';
import { IdempotencyRecordSchema } from './idempotency';
import { MembershipSchema, UserSchema, WorkspaceSchema } from './workspaces';
import { WorkflowSchema, WorkflowVersionSchema } from './workflows';
import { ResumeTokenSchema, RunLogSchema, RunSchema, RunStepSchema } from './runs';
import { WebhookOutboxSchema, WebhookSchema } from './webhooks';
import { SmokeTestSchema } from './smokeTests';

/** Every entity the ORM knows; add new areas' schemas here. */
export const entities = [
  WorkspaceSchema,
  UserSchema,
  MembershipSchema,
  ApiKeySchema,
  SessionSchema,
  AuditLogSchema,
  IdempotencyRecordSchema,
  WorkflowSchema,
  WorkflowVersionSchema,
  RunSchema,
  RunStepSchema,
  RunLogSchema,
  ResumeTokenSchema,
  WebhookSchema,
  WebhookOutboxSchema,
  SmokeTestSchema,
];

export * from './auth';
export * from './audit';
export * from './idempotency';
export * from './workspaces';
export * from './workflows';
export * from './runs';
export * from './webhooks';
export * from './smokeTests';
