import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowSchema, WorkflowVersionSchema, type Workflow } from '../../db/entities';
import { forbidden, notFound } from '../kernel/errors';
import { projectionFor, type WorkspacePrincipal } from '../kernel/principal';
import { candidateVersionId, validateWorkflowGraph, type ValidationResult } from './graph';

export const WORKFLOW_FORBIDDEN = 'API key cannot access this workflow';

export interface WorkflowView extends Pick<
  Workflow,
  | 'id'
  | 'workspaceId'
  | 'name'
  | 'description'
  | 'status'
  | 'trashed'
  | 'nodes'
  | 'edges'
  | 'activeVersionId'
  | 'templateKey'
  | 'sourceWorkflowId'
  | 'createdAt'
  | 'updatedAt'
> {
  activeVersion: number | null;
  /** Identity of the current draft: changes whenever nodes or edges change. */
  candidateVersionId: string;
}

export function workflowView(wf: Workflow, activeVersion: number | null): WorkflowView {
  return {
    id: wf.id,
    workspaceId: wf.workspaceId,
    name: wf.name,
    description: wf.description,
    status: wf.status,
    trashed: wf.trashed,
    nodes: wf.nodes,
    edges: wf.edges,
    activeVersionId: wf.activeVersionId,
    activeVersion,
    candidateVersionId: candidateVersionId(wf),
    templateKey: wf.templateKey,
    sourceWorkflowId: wf.sourceWorkflowId,
    createdAt: wf.createdAt,
    updatedAt: wf.updatedAt,
  };
}

/** The portable export shape `{ name, description, nodes, edges }`, accepted back by importJson. */
export function portableShape(wf: Pick<Workflow, 'name' | 'description' | 'nodes' | 'edges'>) {
  return { name: wf.name, description: wf.description, nodes: wf.nodes, edges: wf.edges };
}

/**
 * Loads a workflow for a principal: 404 when it does not exist, 403 (`API key cannot access
 * this workflow`) when it belongs to another workspace. Trashed workflows are found (they can
 * be restored) unless `includeTrashed` is false.
 */
export async function loadWorkflow(
  em: EntityManager,
  principal: WorkspacePrincipal,
  id: string,
  opts: { includeTrashed?: boolean } = {},
): Promise<Workflow> {
  const wf = await em.findOne(WorkflowSchema, { id });
  if (!wf || (opts.includeTrashed === false && wf.trashed)) throw notFound('Workflow not found');
  if (wf.workspaceId !== principal.workspaceId) throw forbidden(WORKFLOW_FORBIDDEN);
  return wf;
}

export async function activeVersionNumber(em: EntityManager, wf: Workflow): Promise<number | null> {
  if (!wf.activeVersionId) return null;
  return (await em.findOne(WorkflowVersionSchema, { id: wf.activeVersionId }))?.version ?? null;
}

export async function viewOf(em: EntityManager, wf: Workflow): Promise<WorkflowView> {
  return workflowView(wf, await activeVersionNumber(em, wf));
}

/** Non-trashed workflows of the principal's workspace, newest first. */
export async function listWorkflows(em: EntityManager, principal: WorkspacePrincipal): Promise<WorkflowView[]> {
  const workflows = await em.find(
    WorkflowSchema,
    { workspaceId: principal.workspaceId, trashed: false },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  const versionIds = workflows.map((w) => w.activeVersionId).filter((v): v is string => v !== null);
  const versions = versionIds.length > 0 ? await em.find(WorkflowVersionSchema, { id: { $in: versionIds } }) : [];
  const numbers = new Map(versions.map((v) => [v.id, v.version]));
  return workflows.map((w) => workflowView(w, w.activeVersionId ? (numbers.get(w.activeVersionId) ?? null) : null));
}

/** A workflow of the principal's workspace as its view (404/403 as loadWorkflow). */
export async function getWorkflow(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<WorkflowView> {
  return viewOf(em, await loadWorkflow(em, principal, id));
}

/**
 * The portable export of a workflow. It includes node configs (URLs, headers, code), so safe
 * readers are refused.
 */
export async function exportWorkflow(em: EntityManager, principal: WorkspacePrincipal, id: string) {
  const wf = await loadWorkflow(em, principal, id);
  if (projectionFor(principal) === 'safe') {
    throw forbidden('The portable export includes node configs and needs a workspace key with write permission.');
  }
  return portableShape(wf);
}

/**
 * Validates a workflow's saved draft, or `draft` in its place (each of nodes and edges falls
 * back to the saved one when absent); nothing is written.
 */
export async function validateWorkflow(
  em: EntityManager,
  principal: WorkspacePrincipal,
  id: string,
  draft: { nodes?: unknown; edges?: unknown } = {},
): Promise<ValidationResult> {
  const wf = await loadWorkflow(em, principal, id);
  return validateWorkflowGraph({ nodes: draft.nodes ?? wf.nodes, edges: draft.edges ?? wf.edges });
}

/** Deployed versions of a workflow of the principal's workspace, newest first. */
export async function listVersions(em: EntityManager, principal: WorkspacePrincipal, workflowId: string) {
  const wf = await loadWorkflow(em, principal, workflowId);
  const versions = await em.find(WorkflowVersionSchema, { workflowId: wf.id }, { orderBy: { version: 'desc' } });
  return versions.map((v) => ({
    id: v.id,
    version: v.version,
    displayLabel: v.displayLabel,
    name: v.name,
    description: v.description,
    active: v.id === wf.activeVersionId,
    nodeCount: v.nodes.length,
    edgeCount: v.edges.length,
    createdById: v.createdById,
    createdAt: v.createdAt,
  }));
}

/** True when every id names a non-trashed workflow of the workspace (end-user gateway key allowlists). */
export async function workflowIdsExist(em: EntityManager, workspaceId: string, ids: string[]): Promise<boolean> {
  const found = await em.count(WorkflowSchema, { id: { $in: ids }, workspaceId, trashed: false });
  return found === new Set(ids).size;
}
