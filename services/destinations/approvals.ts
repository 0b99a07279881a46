import type { EntityManager } from '@mikro-orm/postgresql';
import { TargetApprovalSchema, type TargetApproval } from '../../db/entities';
import { recordAudit } from '../kernel/audit';
import { conflict, forbidden } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { isAdminRole, type WorkspacePrincipal } from '../kernel/principal';
import { loadScopedWorkflow, versionOf, withLockedWorkflow } from './model';
import { findTargetOf } from './runtime';

export interface ApprovalView {
  id: string;
  workflowId: string;
  targetId: string;
  versionId: string;
  version: number;
  permitsReactivation: boolean;
  approvedBy: string;
  createdAt: Date;
}

/**
 * An Admin's or Owner's approval of a prepared publication, given with a session (API calls
 * cannot grant approval): recorded with the approver, the exact version and whether it permits
 * reactivation of that snapshot later (a production rollback reuses only such an approval).
 * The version must be one the destination can publish: its candidate, its prepared promotion
 * or rollback, or its active version.
 */
export async function approvePublication(
  em: EntityManager,
  principal: WorkspacePrincipal,
  workflowId: string,
  targetId: string,
  input: { versionId: string; permitsReactivation?: boolean },
): Promise<ApprovalView> {
  if (principal.kind !== 'session')
    throw forbidden('Approvals are granted by an Admin or Owner with a session; API calls cannot grant approval.');
  if (!isAdminRole(principal.role)) throw forbidden('Admin or Owner role required.');
  const wf = await loadScopedWorkflow(em, principal, workflowId);
  const approval = await withLockedWorkflow(em, wf.id, async (tx, lockedWf) => {
    const target = await findTargetOf(tx, lockedWf, targetId);
    const version = await versionOf(tx, lockedWf, input.versionId);
    const publishable = [target.candidateVersionId, target.prepared?.versionId, target.activeVersionId];
    if (!publishable.includes(version.id)) {
      throw conflict(
        `Version ${version.version} is not prepared for publication on destination "${target.name}" (approve its candidate or its prepared publication).`,
        {
          details: { candidateVersionId: target.candidateVersionId, preparedPublicationVersionId: target.prepared?.versionId ?? null },
        },
      );
    }
    const created: TargetApproval = tx.create(TargetApprovalSchema, {
      id: newId('apr'),
      workspaceId: lockedWf.workspaceId,
      workflowId: lockedWf.id,
      targetId: target.id,
      versionId: version.id,
      permitsReactivation: input.permitsReactivation ?? false,
      approvedById: principal.userId,
      consumedByActivationId: null,
      createdAt: new Date(),
    });
    recordAudit(tx, principal, {
      action: 'workflow.target.approve',
      severity: 'warning',
      workspaceId: lockedWf.workspaceId,
      targetType: 'workflow_target',
      targetId: target.id,
      metadata: {
        workflowId: lockedWf.id,
        versionId: version.id,
        version: version.version,
        permitsReactivation: created.permitsReactivation,
      },
    });
    await tx.flush();
    return { created, number: version.version };
  });
  const { created, number } = approval;
  return {
    id: created.id,
    workflowId: created.workflowId,
    targetId: created.targetId,
    versionId: created.versionId,
    version: number,
    permitsReactivation: created.permitsReactivation,
    approvedBy: created.approvedById,
    createdAt: created.createdAt,
  };
}
