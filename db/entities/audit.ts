import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, references } from './columns';
import { WorkspaceSchema } from './workspaces';

export type AuditSeverity = 'info' | 'warning' | 'critical';

export const AuditLogSchema = entity('AuditLog', 'audit_logs', {
  id: p.string().primary(),
  workspaceId: references(WorkspaceSchema, 'workspace_id').nullable(),
  action: p.string(),
  severity: p.string().$type<AuditSeverity>(),
  actorUserId: p.string().nullable(),
  actorApiKeyId: p.string().nullable(),
  targetType: p.string().nullable(),
  targetId: p.string().nullable(),
  metadata: p.json<Record<string, unknown>>(),
  ...createdAt(),
});
export type AuditLog = InferEntity<typeof AuditLogSchema>;
