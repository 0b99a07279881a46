import type { EntityManager } from '@mikro-orm/postgresql';
import { TargetActivationSchema, WorkflowTargetSchema, type Workflow, type WorkflowTarget, type WorkflowVersion } from '../../db/entities';
import { newId } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { ensureProductionTarget, touch } from './model';

/**
 * The legacy paths on top of the destinations model. `POST /deploy` (and `PATCH status:
 * deployed`) is the production publication of the synchronized candidate: the pinned draft
 * becomes Production's candidate and active version with a `deploy` activation (no session
 * approval: API calls cannot grant one). Other status moves keep Production's pointers in step
 * with the workflow row, which stays the one the runnable rule reads.
 */

/**
 * Records a deploy on the Production destination. Called inside the deploy's transaction,
 * which holds the workflow row's lock. A redeploy of the version already live records nothing new.
 */
export async function recordProductionDeploy(
  tx: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  version: WorkflowVersion,
): Promise<WorkflowTarget> {
  // The pinned version must be stored before a destination row refers to it.
  await tx.flush();
  const production = await ensureProductionTarget(tx, wf);
  const alreadyLive = production.enabled && production.activeVersionId === version.id && production.activeActivationId !== null;
  if (alreadyLive && production.candidateVersionId === version.id) return production;
  production.candidateVersionId = version.id;
  if (!alreadyLive) {
    const generation = production.generation + 1;
    const activation = tx.create(TargetActivationSchema, {
      id: newId('act'),
      workspaceId: wf.workspaceId,
      workflowId: wf.id,
      targetId: production.id,
      versionId: version.id,
      generation,
      source: 'deploy',
      approvalId: null,
      requestId: null,
      connectionBindings: production.connectionBindings,
      createdById: principal.userId,
      createdAt: new Date(),
    });
    production.activeVersionId = version.id;
    production.activeActivationId = activation.id;
    production.generation = generation;
    production.enabled = true;
  }
  touch(production);
  return production;
}

/**
 * After a status move of the workflow row (draft, disabled, import-replace, trash), Production
 * follows: its active pointer is the workflow's active version and it is enabled only while
 * the workflow is deployed. The caller flushes.
 */
export async function syncProductionWithWorkflow(em: EntityManager, wf: Workflow): Promise<void> {
  const production = await ensureProductionTarget(em, wf);
  const enabled = wf.status === 'deployed' && wf.activeVersionId !== null && !wf.trashed;
  if (production.activeVersionId === wf.activeVersionId && production.enabled === enabled) return;
  if (production.activeVersionId !== wf.activeVersionId) {
    production.activeVersionId = wf.activeVersionId;
    production.activeActivationId = null;
  }
  production.enabled = enabled;
  touch(production);
}

/** The version Production's candidate points at, if the workflow has a Production destination yet. */
export async function productionCandidateVersionId(em: EntityManager, workflowId: string): Promise<string | null> {
  const production = await em.findOne(WorkflowTargetSchema, { workflowId, kind: 'production' });
  return production?.candidateVersionId ?? null;
}
