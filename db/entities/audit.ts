import { EntitySchema } from '@mikro-orm/core';

export type AuditSeverity = 'info' | 'warning' | 'critical';

export interface AuditLog {
  id: string;
  workspaceId: string | null;
  action: string;
  severity: AuditSeverity;
  actorUserId: string | null;
  actorApiKeyId: string | null;
  targetType: string | null;
  targetId: string | null;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

export const AuditLogSchema = new EntitySchema<AuditLog>({
  name: 'AuditLog',
  tableName: 'audit_logs',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true, nullable: true },
    action: { type: 'string' },
    severity: { type: 'string' },
    actorUserId: { type: 'string', fieldName: 'actor_user_id', nullable: true },
    actorApiKeyId: { type: 'string', fieldName: 'actor_api_key_id', nullable: true },
    targetType: { type: 'string', fieldName: 'target_type', nullable: true },
    targetId: { type: 'string', fieldName: 'target_id', nullable: true },
    metadata: { type: 'json' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
  },
});
