import { deploymentReadiness, validateGraph } from '../../engine/validate';
import type { GraphEdge, GraphNode, WorkflowGraph } from '../../engine/types';
import { invalidInput } from '../errors';
import type { ValidationResult } from './graph';

export interface ImportResult {
  graph: WorkflowGraph & { name?: string; description?: string };
  importReadiness: ValidationResult;
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

/**
 * What the import-preview endpoint shows: the workflow an import would create and its
 * readiness. Bundles (several workflows) are previewed by bundle.ts `previewBundle`.
 */
export function previewImport(input: { importJson?: string; importBundleJson?: string }) {
  if (input.importBundleJson !== undefined) throw invalidInput('Give either importJson or importBundleJson, not both.');
  if (input.importJson === undefined) throw invalidInput('importJson or importBundleJson is required.');
  const { graph, importReadiness } = parseImportJson(input.importJson);
  return {
    preview: { name: graph.name ?? 'Imported workflow', description: graph.description ?? '', nodes: graph.nodes, edges: graph.edges },
    importReadiness,
    persisted: false as const,
  };
}
