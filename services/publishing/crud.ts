import type { EntityManager } from '@mikro-orm/postgresql';
import { savePinnedData } from '../extflow/pinned';
import { recordImportProvenance } from '../extflow/store';
import { WorkflowSchema, WorkflowVersionSchema, type WorkflowStatus } from '../../db/entities';
import { findTemplate } from '../../engine/templates';
import type { GraphEdge, GraphNode } from '../../engine/types';
import { recordAudit } from '../kernel/audit';
import { invalidInput, notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { ScheduleSync } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { deployLoaded, type DeployDeps, type Deployment } from './deploy';
import { syncProductionWithWorkflow } from '../destinations/production';
import { removeAllTargetSchedules } from '../destinations/schedules';
import { candidateVersionId, type ValidationResult } from '../workflows/graph';
import { credentialNamesOf, externalIdsOf, parseImportJson } from './import';
import { loadWorkflow, viewOf, workflowView, type WorkflowView } from '../workflows/views';

export interface CreateWorkflowInput {
  name?: string;
  description?: string;
  templateKey?: string;
  sourceWorkflowId?: string;
  importJson?: string;
  /** Multi-workflow bundles go through bundle.ts `importBundle`; here only the conflict check. */
  importBundleJson?: string;
  subWorkflowPlaceholder?: { name: string; workflowId?: string; sourceNodeId?: string; sourceNodeLabel?: string };
  nodes?: GraphNode[];
  edges?: GraphEdge[];
}

/**
 * Creates a workflow as a draft: blank (a single start trigger), from a template, a
 * duplicate of another workflow of the workspace, an import, or a subworkflow placeholder.
 * Exactly one source may be given.
 */
export async function createWorkflow(
  em: EntityManager,
  principal: WorkspacePrincipal,
  input: CreateWorkflowInput,
): Promise<{ workflow: WorkflowView; importReadiness?: ValidationResult }> {
  if (input.importBundleJson !== undefined) {
    throw invalidInput('importBundleJson cannot be combined with other fields.');
  }
  const sources = (['templateKey', 'sourceWorkflowId', 'importJson', 'subWorkflowPlaceholder'] as const).filter(
    (k) => input[k] !== undefined,
  );
  if (sources.length > 1)
    throw invalidInput(
      `Give at most one of templateKey, sourceWorkflowId, importJson, subWorkflowPlaceholder (got ${sources.join(', ')}).`,
    );
  if (sources.length === 1 && (input.nodes || input.edges)) throw invalidInput(`nodes and edges cannot be combined with ${sources[0]}.`);

  let base: { name: string; description: string; nodes: GraphNode[]; edges: GraphEdge[] };
  let importReadiness: ValidationResult | undefined;
  let templateKey: string | null = null;
  let sourceWorkflowId: string | null = null;
  let externalId: string | null = null;
  let pinned: Record<string, unknown> | undefined;
  if (input.templateKey !== undefined) {
    const template = findTemplate(input.templateKey);
    if (!template) throw invalidInput(`Unknown templateKey "${input.templateKey}".`);
    base = { name: template.name, description: template.description, nodes: template.nodes, edges: template.edges };
    templateKey = template.key;
  } else if (input.sourceWorkflowId !== undefined) {
    const source = await loadWorkflow(em, principal, input.sourceWorkflowId);
    base = { name: `${source.name} (copy)`, description: source.description, nodes: source.nodes, edges: source.edges };
    sourceWorkflowId = source.id;
  } else if (input.importJson !== undefined) {
    const externalIds = await externalIdsOf(em, principal.workspaceId);
    const imported = parseImportJson(input.importJson, externalIds, await credentialNamesOf(em, principal.workspaceId));
    base = {
      name: imported.graph.name ?? 'Imported workflow',
      description: imported.graph.description ?? '',
      nodes: imported.graph.nodes,
      edges: imported.graph.edges,
    };
    importReadiness = imported.importReadiness;
    // An external-tool import keeps its externalId (bundles and subworkflow links find it) unless another workflow has it.
    if (imported.externalId && !externalIds.has(imported.externalId)) externalId = imported.externalId;
    pinned = imported.pinned;
  } else if (input.subWorkflowPlaceholder !== undefined) {
    const p = input.subWorkflowPlaceholder;
    const label = p.sourceNodeLabel ? ` for "${p.sourceNodeLabel}"` : '';
    base = { name: p.name, description: `Subworkflow placeholder${label}`, nodes: [startNode()], edges: [] };
  } else {
    base = { name: 'Untitled workflow', description: '', nodes: input.nodes ?? [startNode()], edges: input.edges ?? [] };
  }

  const now = new Date();
  const wf = em.create(WorkflowSchema, {
    id: newId('wf'),
    workspaceId: principal.workspaceId,
    name: input.name?.trim() || base.name,
    description: input.description ?? base.description,
    status: 'draft',
    trashed: false,
    nodes: structuredClone(base.nodes),
    edges: structuredClone(base.edges),
    activeVersionId: null,
    templateKey,
    sourceWorkflowId,
    ...(externalId ? { externalId } : {}),
    createdById: principal.userId,
    createdAt: now,
    updatedAt: now,
  });
  recordAudit(em, principal, {
    action: 'workflow.create',
    severity: 'info',
    workspaceId: principal.workspaceId,
    targetType: 'workflow',
    targetId: wf.id,
  });
  await em.flush();
  if (externalId && pinned) await savePinnedData(em, principal.workspaceId, externalId, pinned);
  // The draft an import wrote: a later bundle import of the same externalId may update it while it stays so.
  if (externalId) await recordImportProvenance(em, principal.workspaceId, externalId, wf.id, candidateVersionId(wf));
  return { workflow: workflowView(wf, null), ...(importReadiness ? { importReadiness } : {}) };
}

function startNode(): GraphNode {
  return { id: 'start', type: 'start', name: 'Start', config: {}, position: { x: 0, y: 0 } };
}

export interface WorkflowPatch {
  name?: string;
  description?: string;
  status?: WorkflowStatus;
  nodes?: GraphNode[];
  edges?: GraphEdge[];
  importJson?: string;
  trashed?: boolean;
}

/** PATCH either saved the workflow or, for `status: deployed`, saved and deployed it. */
export type WorkflowUpdate =
  { kind: 'updated'; workflow: WorkflowView; importReadiness?: ValidationResult } | { kind: 'deployed'; deployment: Deployment };

/**
 * Applies a PATCH to a workflow of the principal's workspace. `draft` undeploys (no active
 * version); `disabled` keeps the active version but refuses runs; importJson replaces the
 * draft graph and returns the workflow to `draft`; `deployed` (without importJson) saves the
 * other fields, then deploys as deployWorkflow does (and refuses as it does, after saving).
 * A workflow left undeployed, disabled or trashed has its Temporal Schedules removed.
 */
export async function updateWorkflow(
  em: EntityManager,
  principal: WorkspacePrincipal,
  id: string,
  patch: WorkflowPatch,
  deps: DeployDeps,
): Promise<WorkflowUpdate> {
  const wf = await loadWorkflow(em, principal, id);
  if (patch.importJson !== undefined && (patch.nodes || patch.edges))
    throw invalidInput('importJson cannot be combined with nodes or edges.');
  let importReadiness: ValidationResult | undefined;
  if (patch.name !== undefined) {
    if (!patch.name.trim()) throw invalidInput('name cannot be blank.');
    wf.name = patch.name.trim();
  }
  if (patch.description !== undefined) wf.description = patch.description;
  if (patch.nodes !== undefined) wf.nodes = patch.nodes;
  if (patch.edges !== undefined) wf.edges = patch.edges;
  if (patch.importJson !== undefined) {
    const imported = parseImportJson(
      patch.importJson,
      await externalIdsOf(em, principal.workspaceId),
      await credentialNamesOf(em, principal.workspaceId),
    );
    wf.nodes = imported.graph.nodes;
    wf.edges = imported.graph.edges;
    if (imported.graph.name) wf.name = imported.graph.name;
    if (imported.graph.description !== undefined) wf.description = imported.graph.description;
    wf.status = 'draft';
    importReadiness = imported.importReadiness;
  }
  if (patch.trashed !== undefined) wf.trashed = patch.trashed;
  if (patch.status === 'draft') {
    wf.status = 'draft';
    wf.activeVersionId = null;
  } else if (patch.status === 'disabled') {
    wf.status = 'disabled';
  }
  wf.updatedAt = new Date();
  // Production's pointers follow the workflow row's status moves (undeploy, disable, import-replace, trash).
  await syncProductionWithWorkflow(em, wf);
  recordAudit(em, principal, {
    action: patch.trashed === true ? 'workflow.trash' : 'workflow.update',
    severity: 'info',
    workspaceId: wf.workspaceId,
    targetType: 'workflow',
    targetId: wf.id,
    metadata: { fields: Object.keys(patch) },
  });
  await em.flush();

  if (patch.status === 'deployed' && patch.importJson === undefined) {
    return { kind: 'deployed', deployment: await deployLoaded(em, principal, wf, deps) };
  }
  // Undeployed, disabled or trashed workflows must stop firing on their schedules.
  if (wf.status !== 'deployed' || wf.trashed) await deps.scheduler.sync(wf, null);
  return { kind: 'updated', workflow: await viewOf(em, wf), ...(importReadiness ? { importReadiness } : {}) };
}

/**
 * Deletes a workflow of the principal's workspace and its versions, after removing its
 * Temporal Schedules; its runs stay readable in the run history.
 */
export async function deleteWorkflow(
  em: EntityManager,
  principal: WorkspacePrincipal,
  id: string,
  deps: { scheduler: ScheduleSync },
): Promise<void> {
  const wf = await loadWorkflow(em, principal, id);
  await removeAllTargetSchedules(em, deps.scheduler, wf);
  recordAudit(em, principal, {
    action: 'workflow.delete',
    severity: 'warning',
    workspaceId: wf.workspaceId,
    targetType: 'workflow',
    targetId: wf.id,
  });
  em.remove(wf);
  await em.flush();
}

/** Copies a version's graph (and name, description) into the draft; the active version is unchanged. */
export async function restoreVersion(
  em: EntityManager,
  principal: WorkspacePrincipal,
  id: string,
  versionNumber: number,
): Promise<{ workflow: WorkflowView; restoredVersion: number }> {
  const wf = await loadWorkflow(em, principal, id);
  const version = await em.findOne(WorkflowVersionSchema, { workflowId: wf.id, version: versionNumber });
  if (!version) throw notFound(`Version ${versionNumber} not found`);
  wf.nodes = structuredClone(version.nodes);
  wf.edges = structuredClone(version.edges);
  wf.name = version.name;
  wf.description = version.description;
  wf.updatedAt = new Date();
  recordAudit(em, principal, {
    action: 'workflow.restore_version',
    severity: 'info',
    workspaceId: wf.workspaceId,
    targetType: 'workflow',
    targetId: wf.id,
    metadata: { version: versionNumber },
  });
  await em.flush();
  return { workflow: await viewOf(em, wf), restoredVersion: versionNumber };
}
