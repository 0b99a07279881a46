/**
 * Pinned data of external-tool exports (`pinData`: node name → the items the node outputs
 * instead of running, in the tool's editor). The import keeps it per imported workflow (by
 * externalId); the extflow smoke test's dry runs use it: a pinned trigger's data is the run's
 * input, and any other pinned node outputs its data without running (it becomes a literal
 * transform for that dry run only). Live runs never use it, as in the external tool.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isTriggerType, outputHandles } from '../../engine/nodes';
import type { GraphNode, WorkflowGraph } from '../../engine/types';
import { toStorable } from '../kernel/storableText';
import { isRecord } from './nodes/context';
import { deletePinnedData, storedPinnedData, upsertPinnedData } from './store';
import type { ConversionWarning, ExtWorkflow, PinnedDataItem } from './types';

/** Longest pinned output a dry run substitutes (a transform expression's limit). */
const MAX_PINNED_CHARS = 20_000;

/**
 * The export's pinned data by our node id (the node that holds what the external node
 * outputs). Connections carry one value, so one item gives its `json` and several an array of
 * them (a warning says so). Pins of unknown nodes or without items are left out, with a warning.
 */
export function pinnedDataOf(
  wf: ExtWorkflow,
  idOf: (name: string) => string | undefined,
  warnings: ConversionWarning[],
): { pinned: Record<string, unknown>; report: PinnedDataItem[] } {
  const pinned: Record<string, unknown> = {};
  const report: PinnedDataItem[] = [];
  if (!isRecord(wf.pinData)) return { pinned, report };
  for (const [name, raw] of Object.entries(wf.pinData)) {
    const id = idOf(name);
    const items = Array.isArray(raw) ? raw.map((i) => (isRecord(i) && 'json' in i ? i.json : i)) : [];
    if (!id) {
      warnings.push({ node: name, message: 'Pinned data of a node that is not in the workflow was ignored.' });
      continue;
    }
    if (items.length === 0) {
      warnings.push({ node: name, message: 'Pinned data without items was ignored.' });
      continue;
    }
    if (items.length > 1)
      warnings.push({ node: name, message: `Pinned data has ${items.length} items; dry runs pass them on as one array.` });
    pinned[id] = items.length === 1 ? items[0] : items;
    report.push({ node: name, nodeId: id, items: items.length });
  }
  if (report.length > 0)
    warnings.push({
      node: '(workflow)',
      message: `Pinned data of ${report.length} node(s) is used by the extflow smoke test's dry runs; live runs execute every node.`,
    });
  return { pinned, report };
}

/** Stores (or, when empty, forgets) the pinned data of an imported workflow. */
export async function savePinnedData(
  em: EntityManager,
  workspaceId: string,
  externalId: string,
  pinned: Record<string, unknown>,
): Promise<void> {
  if (Object.keys(pinned).length === 0) {
    await deletePinnedData(em, workspaceId, externalId);
    return;
  }
  await upsertPinnedData(em, workspaceId, externalId, JSON.stringify(toStorable(pinned)));
}

/** The stored pinned data of these imported workflows, by externalId. */
export async function loadPinnedData(
  em: EntityManager,
  workspaceId: string,
  externalIds: string[],
): Promise<Map<string, Record<string, unknown>>> {
  if (externalIds.length === 0) return new Map();
  const rows = await storedPinnedData(em, workspaceId, externalIds);
  return new Map(rows.map((r) => [r.external_id, r.pin_data]));
}

/** The pinned node ids in the graph's node order (stored pinned data does not keep the export's key order); unknown ids last. */
export function pinnedNodeIds(nodes: GraphNode[], pinned: Record<string, unknown>): string[] {
  const order = (id: string) => {
    const i = nodes.findIndex((n) => n.id === id);
    return i < 0 ? nodes.length : i;
  };
  return Object.keys(pinned).sort((x, y) => order(x) - order(y) || x.localeCompare(y));
}

export interface PinnedApplication {
  /** The graph of the dry run: pinned nodes output their data. */
  graph: WorkflowGraph;
  /** A pinned trigger's data: the run's input. */
  input: unknown;
  applied: Array<{ node: string; as: 'input' | 'output' }>;
  skipped: Array<{ node: string; reason: string }>;
}

/**
 * Applies pinned data to a draft graph for a dry run: a pinned trigger gives the input; another
 * pinned node becomes a transform returning its data. Branching nodes (their outputs are
 * handles) and data over 20,000 characters are skipped with the reason.
 */
export function applyPinnedData(graph: WorkflowGraph, pinned: Record<string, unknown>): PinnedApplication {
  const applied: PinnedApplication['applied'] = [];
  const skipped: PinnedApplication['skipped'] = [];
  let input: unknown = {};
  const replaced = new Map<string, GraphNode>();
  for (const nodeId of pinnedNodeIds(graph.nodes, pinned)) {
    const value = pinned[nodeId];
    const node = graph.nodes.find((n) => n.id === nodeId);
    if (!node) {
      skipped.push({ node: nodeId, reason: 'The node is no longer in the draft.' });
      continue;
    }
    if (isTriggerType(node.type)) {
      input = value;
      applied.push({ node: nodeId, as: 'input' });
      continue;
    }
    if (outputHandles(node) !== null) {
      skipped.push({ node: nodeId, reason: 'A branching node chooses its output; it runs.' });
      continue;
    }
    const literal = JSON.stringify(value ?? null);
    if (literal.length > MAX_PINNED_CHARS) {
      skipped.push({ node: nodeId, reason: `The pinned data is longer than ${MAX_PINNED_CHARS} characters; the node runs.` });
      continue;
    }
    replaced.set(nodeId, {
      id: node.id,
      type: 'transform',
      name: `${node.name ?? node.id} (pinned data)`,
      config: { expression: literal },
      ...(node.position ? { position: node.position } : {}),
    });
    applied.push({ node: nodeId, as: 'output' });
  }
  return { graph: { nodes: graph.nodes.map((n) => replaced.get(n.id) ?? n), edges: graph.edges }, input, applied, skipped };
}
