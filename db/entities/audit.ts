import { p, type InferEntity } from '@mikro-orm/core';
import { entity, timestamptz } from './columns';
import { WorkspaceSchema } from './workspaces';

export type AuditSeverity = 'info' | 'warning' | 'critical';

export const AuditLogSchema = entity({
  name: 'AuditLog',
  tableName: 'audit_logs',
  properties: {
    id: p.string().primary(),
    workspaceId: p.manyToOne(WorkspaceSchema).fieldName('workspace_id').mapToPk().nullable(),
    action: p.string(),
    severity: p.string().$type<AuditSeverity>(),
    actorUserId: p.string().nullable(),
    actorApiKeyId: p.string().nullable(),
    targetType: p.string().nullable(),
    targetId: p.string().nullable(),
    metadata: p.json<Record<string, unknown>>(),
    createdAt: timestamptz('created_at'),
  },
});
export type AuditLog = InferEntity<typeof AuditLogSchema>;
