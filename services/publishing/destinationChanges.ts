import { hasRepository, reviewGraph, type RepositoryDeps } from '../repository';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  TargetActivationSchema,
  WorkflowSchema,
  WorkflowTargetSchema,
  WorkflowVersionSchema,
  type Workflow,
  type WorkflowTarget,
  type WorkflowVersion,
} from '../../db/entities';
import type { GraphEdge, GraphNode } from '../../engine/types';
import { recordAudit } from '../kernel/audit';
import { destinationNameTaken } from './store';
import { conflict, invalidInput, notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { ScheduleSync } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { syncWebhooks, webhookData, type WebhookData } from '../webhooks/registry';
import { candidateVersionId } from '../workflows/graph';
import { credentialBelongsToWorkspace } from '../destinations/credentials';
import {
  ACTIVATION_NOT_FOUND,
  DESTINATION_NOT_FOUND,
  loadScopedWorkflow,
  lockedTarget,
  PRODUCTION_NAME,
  targetView,
  touch,
  versionOf,
  withLockedWorkflow,
  type TargetView,
} from '../destinations/model';
import { assessPublication, type PublishFields } from '../destinations/publication';
import { syncTargetSchedules } from '../destinations/schedules';
import { configureSource, type SourceInput } from '../destinations/sources';

/** One change of `POST /workflows/{id}/targets` (`change` in the body), validated at the edge. */
export type TargetChange =
  | { action: 'prepare-production' }
  | { action: 'create-preview'; versionId: string; name: string }
  | { action: 'rename-preview'; targetId: string; expectedRevision: number; name: string }
  | { action: 'rename-version'; versionId: string; displayLabel: string }
  | {
      action: 'save-candidate';
      targetId: string;
      expectedRevision: number;
      name: string;
      nodes: GraphNode[];
      edges: GraphEdge[];
      description?: string;
    }
  | {
      action: 'save-connections';
      targetId: string;
      expectedRevision: number;
      bindings: Record<string, string>;
      childDependencies?: Record<string, string>;
      allowProductionReactivation?: boolean;
    }
  | { action: 'restore-candidate'; targetId: string; expectedRevision: number; versionId: string }
  | { action: 'request-git-review'; targetId: string; expectedRevision: number }
  | {
      action: 'prepare-promotion';
      sourceTargetId: string;
      sourceActivationId: string;
      productionTargetId: string;
      expectedRevision: number;
      stopAfter?: boolean;
    }
  | { action: 'prepare-rollback'; targetId: string; expectedRevision: number; activationId: string }
  | ({ action: 'publish' } & PublishFields)
  | { action: 'stop'; targetId: string; expectedRevision: number }
  | { action: 'configure-source'; expectedRevision: number; source: SourceInput };

export type TargetAction = TargetChange['action'];

/** What a change needs besides the database: the Temporal Schedules port and SECRET_KEY (webhook URLs). */
export interface TargetChangeDeps {
  scheduler: ScheduleSync;
  secretKey: string | undefined;
  /** The workspace repository (services/repository), for request-git-review. */
  repository?: RepositoryDeps;
}

/** The receipt of an applied change; an idempotent replay returns it unchanged. */
export interface ChangeReceipt {
  id: string;
  action: TargetAction;
  workflowId: string;
  targetId: string;
  /** The destination's revision after the change. */
  revision: number;
  versionId?: string;
  activationId?: string;
  generation?: number;
  requestId?: string;
  preparedPublicationVersionId?: string;
  sourceId?: string;
  approvalId?: string;
  stoppedTargetIds?: string[];
  /** request-git-review: the review branch head and the pull request. */
  reviewHeadSha?: string;
  pullRequestNumber?: number;
  createdAt: Date;
}

export interface ChangeResult {
  receipt: ChangeReceipt;
  target: TargetView;
  /** publish: the destination's webhooks, one URL per webhook trigger. */
  webhooks?: WebhookData[];
}

interface Applied {
  targetId: string;
  fields?: Omit<ChangeReceipt, 'id' | 'action' | 'workflowId' | 'targetId' | 'revision' | 'createdAt'>;
  webhooks?: WebhookData[];
  /** Temporal side effects, run once the transaction committed. */
  afterCommit?: Array<() => Promise<unknown>>;
}

/**
 * Applies one change to the destinations of a workflow of the principal's workspace, in one
 * transaction holding the workflow row's lock: stale `expectedRevision`s are 409
 * `workflow_target_revision_conflict` and leave everything unchanged. Schedules follow once it
 * committed.
 */
export async function changeTarget(
  em: EntityManager,
  principal: WorkspacePrincipal,
  workflowId: string,
  change: TargetChange,
  deps: TargetChangeDeps,
): Promise<ChangeResult> {
  const wf = await loadScopedWorkflow(em, principal, workflowId);
  const applied = await withLockedWorkflow(em, wf.id, async (tx, lockedWf, production) => {
    const result = await apply(tx, principal, lockedWf, production, change, deps);
    recordAudit(tx, principal, {
      action: `workflow.target.${change.action}`,
      severity: change.action === 'publish' || change.action === 'stop' ? 'warning' : 'info',
      workspaceId: lockedWf.workspaceId,
      targetType: 'workflow_target',
      targetId: result.targetId,
      metadata: { workflowId: lockedWf.id, ...(result.fields ?? {}) },
    });
    await tx.flush();
    return result;
  });
  for (const effect of applied.afterCommit ?? []) await effect();
  const fresh = em.fork();
  const freshWf = await fresh.findOneOrFail(WorkflowSchema, { id: wf.id });
  const target = await targetView(fresh, freshWf, applied.targetId);
  return {
    receipt: {
      id: newId('rcpt'),
      action: change.action,
      workflowId: wf.id,
      targetId: applied.targetId,
      revision: target.revision,
      ...(applied.fields ?? {}),
      createdAt: new Date(),
    },
    target,
    ...(applied.webhooks ? { webhooks: applied.webhooks } : {}),
  };
}

async function apply(
  tx: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  production: WorkflowTarget,
  change: TargetChange,
  deps: TargetChangeDeps,
): Promise<Applied> {
  switch (change.action) {
    case 'prepare-production':
      return prepareProduction(tx, principal, wf, production);
    case 'create-preview':
      return createPreview(tx, principal, wf, change);
    case 'rename-preview': {
      const target = await lockedTarget(tx, wf, change.targetId, change.expectedRevision);
      if (target.kind === 'production') throw invalidInput('The Production destination cannot be renamed.');
      const name = change.name.trim();
      await ensureNameFree(tx, wf, name, target.id);
      target.name = name;
      touch(target);
      return { targetId: target.id };
    }
    case 'rename-version': {
      const version = await versionOf(tx, wf, change.versionId);
      version.displayLabel = change.displayLabel.trim() === '' ? null : change.displayLabel.trim();
      return { targetId: production.id, fields: { versionId: version.id } };
    }
    case 'save-candidate': {
      const target = await lockedTarget(tx, wf, change.targetId, change.expectedRevision);
      const version = await pinVersion(tx, principal, wf, {
        name: change.name.trim(),
        description: change.description ?? (await currentDescription(tx, wf, target)),
        nodes: change.nodes,
        edges: change.edges,
        reuse: target.candidateVersionId,
      });
      setCandidate(wf, target, version);
      return { targetId: target.id, fields: { versionId: version.id } };
    }
    case 'save-connections': {
      const target = await lockedTarget(tx, wf, change.targetId, change.expectedRevision);
      for (const [alias, credentialId] of Object.entries(change.bindings)) {
        if (!(await credentialBelongsToWorkspace(tx, wf.workspaceId, credentialId))) {
          throw invalidInput(`Connection "${alias}": credential "${credentialId}" is not a credential of this workspace.`);
        }
      }
      const childDependencies = change.childDependencies ?? target.childDependencies;
      for (const [childId, childTargetId] of Object.entries(childDependencies)) {
        const child = await tx.findOne(WorkflowSchema, { id: childId, workspaceId: wf.workspaceId });
        if (!child) throw invalidInput(`Child dependency "${childId}" is not a workflow of this workspace.`);
        if (!(await tx.findOne(WorkflowTargetSchema, { id: childTargetId, workflowId: child.id }))) {
          throw invalidInput(`Child dependency "${childId}": "${childTargetId}" is not a destination of that workflow.`);
        }
      }
      target.connectionBindings = { ...change.bindings };
      target.childDependencies = { ...childDependencies };
      if (change.allowProductionReactivation !== undefined) target.allowProductionReactivation = change.allowProductionReactivation;
      touch(target);
      return { targetId: target.id };
    }
    case 'restore-candidate': {
      const target = await lockedTarget(tx, wf, change.targetId, change.expectedRevision);
      const version = await versionOf(tx, wf, change.versionId);
      setCandidate(wf, target, version);
      return { targetId: target.id, fields: { versionId: version.id } };
    }
    case 'request-git-review': {
      const target = await lockedTarget(tx, wf, change.targetId, change.expectedRevision);
      if (deps.repository && (await hasRepository(tx, wf.workspaceId))) {
        const version = target.candidateVersionId ? await tx.findOne(WorkflowVersionSchema, { id: target.candidateVersionId }) : null;
        if (!version)
          throw conflict(`Destination "${target.name}" has no candidate version to review.`, {
            code: 'workflow_target_unavailable',
            details: { targetId: target.id },
          });
        const { review } = await reviewGraph(tx, deps.repository, principal, wf, version, {});
        return {
          targetId: target.id,
          fields: { versionId: version.id, reviewHeadSha: review.headSha, pullRequestNumber: review.pullRequest.number },
        };
      }
      throw conflict('No repository is configured for this workflow: connect a repository before requesting a review.', {
        code: 'SETUP_REQUIRED',
        details: { targetId: change.targetId },
      });
    }
    case 'prepare-promotion':
      return preparePromotion(tx, wf, change);
    case 'prepare-rollback': {
      const target = await lockedTarget(tx, wf, change.targetId, change.expectedRevision);
      if (target.kind !== 'production') throw invalidInput('A rollback is prepared on the Production destination.');
      const activation = await tx.findOne(TargetActivationSchema, { id: change.activationId, targetId: target.id });
      if (!activation) throw notFound(ACTIVATION_NOT_FOUND);
      if (activation.id === target.activeActivationId)
        throw conflict('That activation is the one Production runs now; there is nothing to roll back to.');
      // The editor's candidate is preserved: the rollback is a prepared publication of its own.
      target.prepared = {
        kind: 'rollback',
        versionId: activation.versionId,
        restoreActivationId: activation.id,
        preparedAt: new Date().toISOString(),
      };
      touch(target);
      return { targetId: target.id, fields: { preparedPublicationVersionId: activation.versionId, activationId: activation.id } };
    }
    case 'publish':
      return publish(tx, principal, wf, change, deps);
    case 'stop':
      return stop(tx, wf, change, deps);
    case 'configure-source': {
      const target = await lockedTarget(tx, wf, change.source.targetId, change.expectedRevision);
      const source = await configureSource(tx, principal, wf, target, change.source);
      touch(target);
      return { targetId: target.id, fields: { sourceId: source.id } };
    }
  }
}

/** The description a save-candidate keeps when it sends none: the candidate's, else the workflow's. */
async function currentDescription(tx: EntityManager, wf: Workflow, target: WorkflowTarget): Promise<string> {
  const candidate = target.candidateVersionId ? await tx.findOne(WorkflowVersionSchema, { id: target.candidateVersionId }) : null;
  return candidate?.description ?? wf.description;
}

/** Points a destination's candidate at a version. Production's candidate is the editor's draft, so the draft follows. */
function setCandidate(wf: Workflow, target: WorkflowTarget, version: WorkflowVersion): void {
  if (target.candidateVersionId === version.id) return;
  target.candidateVersionId = version.id;
  if (target.kind === 'production') {
    wf.nodes = structuredClone(version.nodes);
    wf.edges = structuredClone(version.edges);
    wf.name = version.name;
    wf.description = version.description;
    wf.updatedAt = new Date();
  }
  touch(target);
}

/**
 * A numbered version holding this graph: `reuse` (a version id) when it holds exactly the same
 * name, description and graph, else the next number. The caller holds the workflow lock, so
 * numbers are never claimed twice.
 */
async function pinVersion(
  tx: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  draft: { name: string; description: string; nodes: GraphNode[]; edges: GraphEdge[]; reuse: string | null },
): Promise<WorkflowVersion> {
  if (!draft.name) throw invalidInput('name cannot be blank.');
  const reuse = draft.reuse ? await tx.findOne(WorkflowVersionSchema, { id: draft.reuse }) : null;
  if (
    reuse &&
    reuse.name === draft.name &&
    reuse.description === draft.description &&
    candidateVersionId(reuse) === candidateVersionId(draft)
  )
    return reuse;
  const latest = await tx.findOne(WorkflowVersionSchema, { workflowId: wf.id }, { orderBy: { version: 'desc' } });
  return tx.create(WorkflowVersionSchema, {
    id: newId('wfv'),
    workflowId: wf.id,
    workspaceId: wf.workspaceId,
    version: (latest?.version ?? 0) + 1,
    name: draft.name,
    description: draft.description,
    nodes: structuredClone(draft.nodes),
    edges: structuredClone(draft.edges),
    displayLabel: null,
    createdById: principal.userId,
    createdAt: new Date(),
  });
}

/** Production's candidate becomes the editor's draft, pinned as a version (the active deployment keeps running). */
async function prepareProduction(
  tx: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  production: WorkflowTarget,
): Promise<Applied> {
  const reuse = production.candidateVersionId ?? wf.activeVersionId;
  const version = await pinVersion(tx, principal, wf, {
    name: wf.name,
    description: wf.description,
    nodes: wf.nodes,
    edges: wf.edges,
    reuse,
  });
  if (production.candidateVersionId !== version.id) {
    production.candidateVersionId = version.id;
    touch(production);
  }
  return { targetId: production.id, fields: { versionId: version.id } };
}

async function ensureNameFree(tx: EntityManager, wf: Workflow, name: string, exceptId: string | null): Promise<void> {
  if (!name) throw invalidInput('name cannot be blank.');
  if (name.toLowerCase() === PRODUCTION_NAME.toLowerCase()) throw conflict(`"${PRODUCTION_NAME}" is the production destination's name.`);
  if (await destinationNameTaken(tx, wf.id, name, exceptId)) throw conflict(`This workflow already has a destination named "${name}".`);
}

async function createPreview(
  tx: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  change: { versionId: string; name: string },
): Promise<Applied> {
  const version = await versionOf(tx, wf, change.versionId);
  const name = change.name.trim();
  await ensureNameFree(tx, wf, name, null);
  const now = new Date();
  const target = tx.create(WorkflowTargetSchema, {
    id: newId('tgt'),
    workspaceId: wf.workspaceId,
    workflowId: wf.id,
    kind: 'preview',
    name,
    revision: 1,
    enabled: false,
    candidateVersionId: version.id,
    activeVersionId: null,
    activeActivationId: null,
    generation: 0,
    connectionBindings: {},
    childDependencies: {},
    allowProductionReactivation: false,
    prepared: null,
    createdById: principal.userId,
    createdAt: now,
    updatedAt: now,
  });
  return { targetId: target.id, fields: { versionId: version.id } };
}

async function preparePromotion(
  tx: EntityManager,
  wf: Workflow,
  change: { sourceTargetId: string; sourceActivationId: string; productionTargetId: string; expectedRevision: number; stopAfter?: boolean },
): Promise<Applied> {
  const production = await lockedTarget(tx, wf, change.productionTargetId, change.expectedRevision);
  if (production.kind !== 'production') throw invalidInput('productionTargetId must name the Production destination.');
  const source = await tx.findOne(WorkflowTargetSchema, { id: change.sourceTargetId, workflowId: wf.id });
  if (!source) throw notFound(DESTINATION_NOT_FOUND);
  if (source.kind !== 'preview') throw invalidInput('sourceTargetId must name a preview destination.');
  const activation = await tx.findOne(TargetActivationSchema, { id: change.sourceActivationId, targetId: source.id });
  if (!activation) throw notFound(ACTIVATION_NOT_FOUND);
  if (activation.id !== source.activeActivationId) {
    throw conflict(`Activation ${activation.id} is not what preview "${source.name}" runs now; promote its current publication.`, {
      details: { activeActivationId: source.activeActivationId },
    });
  }
  production.prepared = {
    kind: 'promotion',
    versionId: activation.versionId,
    sourceTargetId: source.id,
    sourceActivationId: activation.id,
    stopAfter: change.stopAfter ?? true,
    preparedAt: new Date().toISOString(),
  };
  touch(production);
  return { targetId: production.id, fields: { preparedPublicationVersionId: activation.versionId, activationId: activation.id } };
}

/**
 * Publishes a version on a destination after every check of assessPublication passed (the
 * first failure is the answer). A new activation records it; Production mirrors it on the
 * workflow row (active version, deployed). Webhooks of the destination are provisioned, its
 * schedules replaced once committed; a promotion with stopAfter stops its preview.
 */
async function publish(
  tx: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  fields: PublishFields,
  deps: TargetChangeDeps,
): Promise<Applied> {
  const target = await lockedTarget(tx, wf, fields.targetId, fields.expectedRevision);
  const assessment = await assessPublication(tx, wf, target, fields, { secretKey: deps.secretKey });
  if (assessment.failure) throw assessment.failure;
  const version = assessment.version!;
  const approval = assessment.approval!;
  const promotion = assessment.mode === 'promotion' && target.prepared?.kind === 'promotion' ? target.prepared : null;
  const now = new Date();

  let activation = assessment.resumed;
  if (!activation) {
    activation = tx.create(TargetActivationSchema, {
      id: newId('act'),
      workspaceId: wf.workspaceId,
      workflowId: wf.id,
      targetId: target.id,
      versionId: version.id,
      generation: target.generation + 1,
      source: assessment.mode === 'candidate' ? 'publish' : assessment.mode,
      approvalId: approval.id,
      requestId: fields.requestId,
      connectionBindings: { ...target.connectionBindings },
      createdById: principal.userId,
      createdAt: now,
    });
    if (!approval.permitsReactivation && approval.consumedByActivationId === null) approval.consumedByActivationId = activation.id;
    target.generation = activation.generation;
  }
  target.activeVersionId = version.id;
  target.activeActivationId = activation.id;
  target.enabled = true;
  if (assessment.mode === 'promotion' || assessment.mode === 'rollback') target.prepared = null;
  touch(target);
  if (target.kind === 'production') {
    wf.activeVersionId = version.id;
    wf.status = 'deployed';
    wf.updatedAt = now;
  }

  const afterCommit: Array<() => Promise<unknown>> = [];
  const stoppedTargetIds: string[] = [];
  if (promotion?.stopAfter) {
    const source = await tx.findOne(WorkflowTargetSchema, { id: promotion.sourceTargetId, workflowId: wf.id });
    if (source && source.enabled) {
      source.enabled = false;
      touch(source);
      stoppedTargetIds.push(source.id);
      const stoppedSource = { targetId: source.id, kind: source.kind };
      afterCommit.push(() => syncTargetSchedules(deps.scheduler, wf, null, stoppedSource));
    }
  }

  const graph = { nodes: version.nodes, edges: version.edges };
  const secretKey = deps.secretKey ?? '';
  const webhooks = await syncWebhooks(tx, secretKey, wf, graph, target.id);
  const scheduleTarget = { targetId: target.id, kind: target.kind };
  afterCommit.push(() => syncTargetSchedules(deps.scheduler, wf, graph, scheduleTarget));
  return {
    targetId: target.id,
    fields: {
      versionId: version.id,
      activationId: activation.id,
      generation: activation.generation,
      requestId: fields.requestId,
      approvalId: approval.id,
      ...(stoppedTargetIds.length > 0 ? { stoppedTargetIds } : {}),
    },
    webhooks: webhooks.map((w) => webhookData(w, deps.secretKey)),
    afterCommit,
  };
}

/** Stops a destination: its deployment is off (runs, webhooks, schedules and sources stop); the active pointer stays for resumption. */
async function stop(
  tx: EntityManager,
  wf: Workflow,
  change: { targetId: string; expectedRevision: number },
  deps: TargetChangeDeps,
): Promise<Applied> {
  const target = await lockedTarget(tx, wf, change.targetId, change.expectedRevision);
  if (!target.enabled) throw conflict(`Destination "${target.name}" is already stopped.`);
  target.enabled = false;
  touch(target);
  if (target.kind === 'production') {
    // The workflow row says so too, so every production path (webhooks, schedules, execute) refuses.
    wf.status = 'draft';
    wf.updatedAt = new Date();
  }
  const scheduleTarget = { targetId: target.id, kind: target.kind };
  return { targetId: target.id, afterCommit: [() => syncTargetSchedules(deps.scheduler, wf, null, scheduleTarget)] };
}
