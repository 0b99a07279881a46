import { assertReviewSynced, type RepositoryDeps } from '../repository';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowSchema, WorkflowVersionSchema, type Workflow, type WorkflowVersion } from '../../db/entities';
import { recordAudit } from '../kernel/audit';
import { lockWorkflowRow } from './store';
import { requireSecretKey } from '../kernel/config';
import { invalidInput } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { ScheduleSync } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { syncWebhooks, webhookData, type WebhookData } from '../webhooks/registry';
import { productionCandidateVersionId, recordProductionDeploy } from '../destinations/production';
import { syncTargetSchedules } from '../destinations/schedules';
import { candidateVersionId, validateWorkflowGraph } from '../workflows/graph';
import { loadWorkflow, viewOf, type WorkflowView } from '../workflows/views';

/** What a deploy needs besides the database: the Temporal Schedules port and SECRET_KEY. */
export interface DeployDeps {
  scheduler: ScheduleSync;
  /** SECRET_KEY as configured; required only when the graph has webhook triggers (their tokens derive from it). */
  secretKey: string | undefined;
  /** Reaches the workspace repository (services/repository) for the review rule of deploys. */
  repository?: RepositoryDeps;
}

/** A deployed workflow and what its triggers became: the pinned version, its webhooks (node order) and schedule ids. */
export interface Deployment {
  workflow: WorkflowView;
  versionId: string;
  version: number;
  webhooks: WebhookData[];
  scheduleIds: string[];
}

/**
 * Deploys the draft of a workflow of the principal's workspace: validates it, pins it as the
 * next numbered version (a draft identical to the active version is not pinned again), makes
 * that version active, then brings its webhooks and Temporal Schedules in step.
 * Refuses with `invalid` (details `{ report, deploymentReadiness }`) when the draft does not
 * validate, and with `unavailable` before pinning anything when the draft has webhook triggers
 * but SECRET_KEY is missing.
 */
export async function deployWorkflow(
  em: EntityManager,
  principal: WorkspacePrincipal,
  workflowId: string,
  deps: DeployDeps,
): Promise<Deployment> {
  return deployLoaded(em, principal, await loadWorkflow(em, principal, workflowId), deps);
}

/** deployWorkflow for a workflow already loaded (and access-checked) by the caller. */
export async function deployLoaded(em: EntityManager, principal: WorkspacePrincipal, wf: Workflow, deps: DeployDeps): Promise<Deployment> {
  if (wf.trashed) throw invalidInput('A trashed workflow cannot be deployed; restore it first (PATCH trashed: false).');
  const validation = validateWorkflowGraph({ nodes: wf.nodes, edges: wf.edges });
  if (!validation.report.valid) throw invalidInput('Workflow is not ready to deploy.', { details: { ...validation } });
  await assertReviewSynced(em, deps.repository, wf);
  // Checked before pinning so a missing key cannot leave a version active without its webhooks.
  const secretKey = wf.nodes.some((n) => n.type === 'webhook') ? requireSecretKey(deps.secretKey) : (deps.secretKey ?? '');

  const { workflow, version, productionTargetId } = await pinDraftAsActiveVersion(em, principal, wf);
  const graph = { nodes: version.nodes, edges: version.edges };
  const webhooks = await syncWebhooks(em, secretKey, workflow, graph, productionTargetId);
  const scheduleIds = await syncTargetSchedules(deps.scheduler, workflow, graph, { targetId: productionTargetId, kind: 'production' });
  return {
    workflow: await viewOf(em, workflow),
    versionId: version.id,
    version: version.version,
    webhooks: webhooks.map((w) => webhookData(w, secretKey)),
    scheduleIds,
  };
}

/**
 * Pins the draft and makes it the active version, in one transaction holding the workflow
 * row's lock; the Production destination records the deploy as its publication in the same
 * transaction (services/destinations/production.ts).
 */
async function pinDraftAsActiveVersion(
  em: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
): Promise<{ workflow: Workflow; version: WorkflowVersion; productionTargetId: string }> {
  return em.transactional(async (tx) => {
    // Lock the workflow row so two concurrent deploys cannot claim the same version number.
    await lockWorkflowRow(tx, wf.id);
    // Re-read under the lock: a concurrent deploy may have pinned a version since `wf` was loaded.
    const managed = await tx.findOneOrFail(WorkflowSchema, { id: wf.id }, { refresh: true });
    const current = managed.activeVersionId ? await tx.findOne(WorkflowVersionSchema, { id: managed.activeVersionId }) : null;
    // The draft may already be pinned: as the active version, or as Production's candidate (save-candidate, prepare-production).
    const productionCandidateId = await productionCandidateVersionId(tx, wf.id);
    const candidate =
      productionCandidateId && productionCandidateId !== current?.id
        ? await tx.findOne(WorkflowVersionSchema, { id: productionCandidateId })
        : null;
    let version = [current, candidate].find((v) => v && candidateVersionId(v) === candidateVersionId(managed)) ?? null;
    if (!version) {
      const latest = await tx.findOne(WorkflowVersionSchema, { workflowId: wf.id }, { orderBy: { version: 'desc' } });
      version = tx.create(WorkflowVersionSchema, {
        id: newId('wfv'),
        workflowId: wf.id,
        workspaceId: wf.workspaceId,
        version: (latest?.version ?? 0) + 1,
        name: managed.name,
        description: managed.description,
        nodes: structuredClone(managed.nodes),
        edges: structuredClone(managed.edges),
        createdById: principal.userId,
        createdAt: new Date(),
      });
    }
    managed.activeVersionId = version.id;
    managed.status = 'deployed';
    managed.updatedAt = new Date();
    recordAudit(tx, principal, {
      action: 'workflow.deploy',
      severity: 'info',
      workspaceId: wf.workspaceId,
      targetType: 'workflow',
      targetId: wf.id,
      metadata: { versionId: version.id, version: version.version },
    });
    const production = await recordProductionDeploy(tx, principal, managed, version);
    await tx.flush();
    return { workflow: managed, version, productionTargetId: production.id };
  });
}
