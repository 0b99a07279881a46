import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowSchema, WorkflowVersionSchema, type Workflow, type WorkflowStatus, type WorkflowVersion } from '../db/entities';
import { deploymentReadiness, validateGraph } from '../engine/validate';
import { findTemplate } from '../engine/templates';
import type { GraphEdge, GraphNode, ValidationReport, WorkflowGraph } from '../engine/types';
import { recordAudit } from './audit';
import { invalidInput, forbidden, notFound } from './errors';
import { canonicalJson } from '../engine/canonicalJson';
import { newId, sha256Hex } from './ids';
import type { WorkspacePrincipal } from './principal';

export const WORKFLOW_FORBIDDEN = 'API key cannot access this workflow';

export interface Readiness {
  ready: boolean;
  blockers: string[];
}

export interface WorkflowView {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  status: WorkflowStatus;
  trashed: boolean;
  nodes: GraphNode[];
  edges: GraphEdge[];
  activeVersionId: string | null;
  activeVersion: number | null;
  /** Identity of the current draft: changes whenever nodes or edges change. */
  candidateVersionId: string;
  templateKey: string | null;
  sourceWorkflowId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The id live candidate execution must name in `expectedVersionId`: a digest of the draft graph. */
export function candidateVersionId(graph: WorkflowGraph): string {
  return `cand_${sha256Hex(canonicalJson({ nodes: graph.nodes, edges: graph.edges })).slice(0, 32)}`;
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
export async function loadWorkflow(em: EntityManager, principal: WorkspacePrincipal, id: string, opts: { includeTrashed?: boolean } = {}): Promise<Workflow> {
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
  const workflows = await em.find(WorkflowSchema, { workspaceId: principal.workspaceId, trashed: false }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  const versionIds = workflows.map((w) => w.activeVersionId).filter((v): v is string => v !== null);
  const versions = versionIds.length > 0 ? await em.find(WorkflowVersionSchema, { id: { $in: versionIds } }) : [];
  const numbers = new Map(versions.map((v) => [v.id, v.version]));
  return workflows.map((w) => workflowView(w, w.activeVersionId ? (numbers.get(w.activeVersionId) ?? null) : null));
}

export interface ImportResult {
  graph: WorkflowGraph & { name?: string; description?: string };
  importReadiness: { report: ValidationReport; deploymentReadiness: Readiness };
}

/**
 * Parses `importJson` in our portable shape. The external tool's format (nodes with
 * `parameters`/`typeVersion` and a `connections` map) is recognised and refused clearly until
 * its importer exists. Nothing is written.
 */
export function parseImportJson(importJson: string): ImportResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(importJson);
  } catch {
    throw invalidInput('importJson is not valid JSON.');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalidInput('importJson must be a JSON object { name, description, nodes, edges }.');
  const obj = parsed as Record<string, unknown>;
  if ('connections' in obj || (Array.isArray(obj.nodes) && obj.nodes.some((n) => n && typeof n === 'object' && 'typeVersion' in n))) {
    throw invalidInput('This looks like an external workflow tool export; importing that format is not supported yet. Import the portable shape { name, description, nodes, edges }.');
  }
  if (!Array.isArray(obj.nodes) || !Array.isArray(obj.edges ?? [])) throw invalidInput('importJson must contain nodes[] and edges[].');
  if (obj.name !== undefined && typeof obj.name !== 'string') throw invalidInput('importJson.name must be a string.');
  if (obj.description !== undefined && typeof obj.description !== 'string') throw invalidInput('importJson.description must be a string.');
  const graph = { nodes: obj.nodes as GraphNode[], edges: (obj.edges ?? []) as GraphEdge[] };
  const report = validateGraph(graph);
  // Shape errors (e.g. a node without id) make the graph unusable, so they are a 400 rather than a draft.
  if (report.errors.some((e) => !e.nodeId && !e.edgeId && e.code === 'invalid_config')) {
    throw invalidInput(`importJson graph is malformed: ${report.errors.map((e) => e.message).join('; ')}`);
  }
  return {
    graph: { ...graph, name: obj.name as string | undefined, description: obj.description as string | undefined },
    importReadiness: { report, deploymentReadiness: deploymentReadiness(report) },
  };
}

export interface CreateWorkflowInput {
  name?: string;
  description?: string;
  templateKey?: string;
  sourceWorkflowId?: string;
  importJson?: string;
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
): Promise<{ workflow: WorkflowView; importReadiness?: ImportResult['importReadiness'] }> {
  const sources = (['templateKey', 'sourceWorkflowId', 'importJson', 'subWorkflowPlaceholder'] as const).filter((k) => input[k] !== undefined);
  if (sources.length > 1) throw invalidInput(`Give at most one of templateKey, sourceWorkflowId, importJson, subWorkflowPlaceholder (got ${sources.join(', ')}).`);
  if (sources.length === 1 && (input.nodes || input.edges)) throw invalidInput(`nodes and edges cannot be combined with ${sources[0]}.`);

  let base: { name: string; description: string; nodes: GraphNode[]; edges: GraphEdge[] };
  let importReadiness: ImportResult['importReadiness'] | undefined;
  let templateKey: string | null = null;
  let sourceWorkflowId: string | null = null;
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
    const imported = parseImportJson(input.importJson);
    base = { name: imported.graph.name ?? 'Imported workflow', description: imported.graph.description ?? '', nodes: imported.graph.nodes, edges: imported.graph.edges };
    importReadiness = imported.importReadiness;
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
    createdById: principal.userId,
    createdAt: now,
    updatedAt: now,
  });
  recordAudit(em, principal, { action: 'workflow.create', severity: 'info', workspaceId: principal.workspaceId, targetType: 'workflow', targetId: wf.id });
  await em.flush();
  return { workflow: workflowView(wf, null), ...(importReadiness ? { importReadiness } : {}) };
}

function startNode(): GraphNode {
  return { id: 'start', type: 'start', name: 'Start', config: {}, position: { x: 0, y: 0 } };
}

export interface ValidationResult {
  report: ValidationReport;
  deploymentReadiness: Readiness;
}

export function validateWorkflowGraph(graph: unknown): ValidationResult {
  const report = validateGraph(graph);
  return { report, deploymentReadiness: deploymentReadiness(report) };
}

export class DeployRefused extends Error {
  constructor(readonly validation: ValidationResult) {
    super('Workflow is not ready to deploy.');
  }
}

/**
 * Deploys the draft: validates it, pins it as the next numbered version and makes that
 * version active. A draft identical to the active version is not pinned again.
 * Throws DeployRefused with the readiness payload when validation fails.
 */
export async function deployWorkflow(em: EntityManager, principal: WorkspacePrincipal, wf: Workflow): Promise<{ workflow: Workflow; version: WorkflowVersion }> {
  if (wf.trashed) throw invalidInput('A trashed workflow cannot be deployed; restore it first (PATCH trashed: false).');
  const validation = validateWorkflowGraph({ nodes: wf.nodes, edges: wf.edges });
  if (!validation.report.valid) throw new DeployRefused(validation);
  return em.transactional(async (tx) => {
    // Lock the workflow row so two concurrent deploys cannot claim the same version number.
    await tx.getConnection().execute('select id from workflows where id = ? for update', [wf.id], 'all', tx.getTransactionContext());
    // Re-read under the lock: a concurrent deploy may have pinned a version since `wf` was loaded.
    const managed = await tx.findOneOrFail(WorkflowSchema, { id: wf.id }, { refresh: true });
    const current = managed.activeVersionId ? await tx.findOne(WorkflowVersionSchema, { id: managed.activeVersionId }) : null;
    const sameAsActive = current && candidateVersionId(current) === candidateVersionId(managed);
    let version = sameAsActive ? current : null;
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
    await tx.flush();
    return { workflow: managed, version };
  });
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

/**
 * Applies a PATCH except `status: deployed` (the caller deploys after saving). `draft`
 * undeploys (no active version); `disabled` keeps the active version but refuses runs.
 * importJson replaces the draft graph and returns the workflow to `draft`.
 */
export async function patchWorkflow(
  em: EntityManager,
  principal: WorkspacePrincipal,
  wf: Workflow,
  patch: WorkflowPatch,
): Promise<{ workflow: Workflow; importReadiness?: ImportResult['importReadiness'] }> {
  if (patch.importJson !== undefined && (patch.nodes || patch.edges)) throw invalidInput('importJson cannot be combined with nodes or edges.');
  let importReadiness: ImportResult['importReadiness'] | undefined;
  if (patch.name !== undefined) {
    if (!patch.name.trim()) throw invalidInput('name cannot be blank.');
    wf.name = patch.name.trim();
  }
  if (patch.description !== undefined) wf.description = patch.description;
  if (patch.nodes !== undefined) wf.nodes = patch.nodes;
  if (patch.edges !== undefined) wf.edges = patch.edges;
  if (patch.importJson !== undefined) {
    const imported = parseImportJson(patch.importJson);
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
  recordAudit(em, principal, {
    action: patch.trashed === true ? 'workflow.trash' : 'workflow.update',
    severity: 'info',
    workspaceId: wf.workspaceId,
    targetType: 'workflow',
    targetId: wf.id,
    metadata: { fields: Object.keys(patch) },
  });
  await em.flush();
  return { workflow: wf, ...(importReadiness ? { importReadiness } : {}) };
}

/** Deletes a workflow and its versions; its runs stay readable in the run history. */
export async function deleteWorkflow(em: EntityManager, principal: WorkspacePrincipal, wf: Workflow): Promise<void> {
  recordAudit(em, principal, { action: 'workflow.delete', severity: 'warning', workspaceId: wf.workspaceId, targetType: 'workflow', targetId: wf.id });
  em.remove(wf);
  await em.flush();
}

export async function listVersions(em: EntityManager, wf: Workflow) {
  const versions = await em.find(WorkflowVersionSchema, { workflowId: wf.id }, { orderBy: { version: 'desc' } });
  return versions.map((v) => ({
    id: v.id,
    version: v.version,
    name: v.name,
    description: v.description,
    active: v.id === wf.activeVersionId,
    nodeCount: v.nodes.length,
    edgeCount: v.edges.length,
    createdById: v.createdById,
    createdAt: v.createdAt,
  }));
}

/** Copies a version's graph (and name, description) into the draft; the active version is unchanged. */
export async function restoreVersion(em: EntityManager, principal: WorkspacePrincipal, wf: Workflow, versionNumber: number): Promise<{ workflow: Workflow; restoredVersion: number }> {
  const version = await em.findOne(WorkflowVersionSchema, { workflowId: wf.id, version: versionNumber });
  if (!version) throw notFound(`Version ${versionNumber} not found`);
  wf.nodes = structuredClone(version.nodes);
  wf.edges = structuredClone(version.edges);
  wf.name = version.name;
  wf.description = version.description;
  wf.updatedAt = new Date();
  recordAudit(em, principal, { action: 'workflow.restore_version', severity: 'info', workspaceId: wf.workspaceId, targetType: 'workflow', targetId: wf.id, metadata: { version: versionNumber } });
  await em.flush();
  return { workflow: wf, restoredVersion: versionNumber };
}

/** True when every id names a non-trashed workflow of the workspace (end-user gateway key allowlists). */
export async function workflowIdsExist(em: EntityManager, workspaceId: string, ids: string[]): Promise<boolean> {
  const found = await em.count(WorkflowSchema, { id: { $in: ids }, workspaceId, trashed: false });
  return found === new Set(ids).size;
}
