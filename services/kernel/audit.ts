import type { EntityManager } from '@mikro-orm/postgresql';
import { AuditLogSchema, type AuditSeverity } from '../../db/entities';
import { newId } from './ids';
import type { Principal, WorkspacePrincipal } from './principal';

export interface AuditEntry {
  action: string;
  severity: AuditSeverity;
  workspaceId: string | null;
  targetType?: string;
  targetId?: string;
  metadata?: Record<string, unknown>;
}

/**
 * Queues an audit record in the unit of work of `em`, so it commits (or not) together with
 * the change it describes. The caller flushes.
 */
export function recordAudit(em: EntityManager, actor: Principal | null, entry: AuditEntry): void {
  em.create(AuditLogSchema, {
    id: newId('aud'),
    workspaceId: entry.workspaceId,
    action: entry.action,
    severity: entry.severity,
    actorUserId: actor?.userId ?? null,
    actorApiKeyId: actor?.kind === 'api_key' ? actor.apiKeyId : null,
    targetType: entry.targetType ?? null,
    targetId: entry.targetId ?? null,
    metadata: entry.metadata ?? {},
    createdAt: new Date(),
  });
}

/** Queues the audit record of an action on the caller's workspace as a whole: the workspace is its target. */
export function recordWorkspaceAudit(
  em: EntityManager,
  principal: WorkspacePrincipal,
  action: string,
  severity: AuditSeverity,
  metadata?: Record<string, unknown>,
): void {
  recordAudit(em, principal, {
    action,
    severity,
    workspaceId: principal.workspaceId,
    targetType: 'workspace',
    targetId: principal.workspaceId,
    metadata,
  });
}
