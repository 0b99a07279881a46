import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, WorkflowSchema } from '../../db/entities';
import type { WorkspacePrincipal } from '../kernel/principal';
import { deploymentReadiness, validateGraph } from '../../engine/validate';
import type { GraphEdge, GraphNode, WorkflowGraph } from '../../engine/types';
import { invalidInput } from '../kernel/errors';
import { convertExtflowWorkflow, looksLikeExtflow } from '../extflow/convert';
import { linkSubworkflows, withConversion } from '../extflow/readiness';
import { validateWorkflowGraph, type ValidationResult } from '../workflows/graph';

export interface ImportResult {
  graph: WorkflowGraph & { name?: string; description?: string };
  importReadiness: ValidationResult;
  /** External-tool imports: the externalId (`extflow-<id>`) the workflow is stored under. */
  externalId?: string;
  /** External-tool imports: the export's pinned data by our node id (kept for the extflow smoke test). */
  pinned?: Record<string, unknown>;
}

/**
 * Parses `importJson`: our portable shape, or the external tool's export (nodes with
 * `parameters`/`typeVersion` and a `connections` map), which services/extflow converts; its
 * subworkflow references are linked through `externalIds` (externalId → workflow id of the
 * workspace) and its credential aliases judged against `credentialNames` (see withConversion).
 * Nothing is written.
 */
export function parseImportJson(
  importJson: string,
  externalIds: ReadonlyMap<string, string> = new Map(),
  credentialNames?: ReadonlySet<string>,
): ImportResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(importJson);
  } catch {
    throw invalidInput('importJson is not valid JSON.');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalidInput('importJson must be a JSON object { name, description, nodes, edges }.');
  const obj = parsed as Record<string, unknown>;
  if (looksLikeExtflow(obj)) {
    const converted = convertExtflowWorkflow(obj);
    const { nodes, unresolved } = linkSubworkflows(converted.nodes, converted.conversion, (ref) => externalIds.get(ref));
    const graph = { nodes, edges: converted.edges };
    return {
      graph: { ...graph, name: converted.name, description: converted.description },
      importReadiness: withConversion(validateWorkflowGraph(graph), converted.conversion, unresolved, credentialNames),
      externalId: converted.externalId,
      pinned: converted.pinned,
    };
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
    graph: { ...graph, name: obj.name, description: obj.description },
    importReadiness: { report, deploymentReadiness: deploymentReadiness(report) },
  };
}

/**
 * What the import-preview endpoint shows: the workflow an import would create and its
 * readiness. Bundles (several workflows) are previewed by bundle.ts `previewBundle`.
 */
export function previewImport(
  input: { importJson?: string; importBundleJson?: string },
  externalIds?: ReadonlyMap<string, string>,
  credentialNames?: ReadonlySet<string>,
) {
  if (input.importBundleJson !== undefined) throw invalidInput('Give either importJson or importBundleJson, not both.');
  if (input.importJson === undefined) throw invalidInput('importJson or importBundleJson is required.');
  const { graph, importReadiness } = parseImportJson(input.importJson, externalIds, credentialNames);
  return {
    preview: { name: graph.name ?? 'Imported workflow', description: graph.description ?? '', nodes: graph.nodes, edges: graph.edges },
    importReadiness,
    persisted: false as const,
  };
}

/** externalId → id of the workspace's (non-trashed) workflows that have one: how imports link subworkflows. */
export async function externalIdsOf(em: EntityManager, workspaceId: string): Promise<Map<string, string>> {
  const rows = await em.find(WorkflowSchema, { workspaceId, trashed: false, externalId: { $ne: null } }, { fields: ['id', 'externalId'] });
  return new Map(rows.map((w) => [w.externalId as string, w.id]));
}

/** import-preview of one workflow in a workspace (its subworkflow references linked as an import would). */
export async function previewImportIn(
  em: EntityManager,
  principal: WorkspacePrincipal,
  input: { importJson?: string; importBundleJson?: string },
) {
  return previewImport(input, await externalIdsOf(em, principal.workspaceId), await credentialNamesOf(em, principal.workspaceId));
}

/** The names of the workspace's credentials in lower case: what an imported node's credential alias must name. */
export async function credentialNamesOf(em: EntityManager, workspaceId: string): Promise<Set<string>> {
  const rows = await em.find(CredentialSchema, { workspaceId }, { fields: ['name'] });
  return new Set(rows.map((c) => c.name.trim().toLowerCase()));
}
