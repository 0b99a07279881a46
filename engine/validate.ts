/**
 * Static validation of workflow graphs, run before saving/deploying and by the interpreter's
 * callers. Pure and deterministic (bundled into workflow code): the same graph always gives
 * the same report, issues in a stable order.
 *
 * Disabled nodes are validated exactly like enabled ones: the interpreter passes a disabled
 * node's input through unchanged (along its unnamed/default output), so the node still sits
 * on the graph's paths, and re-enabling it must not surface new errors. Caveat: a disabled
 * condition or approval node has no unnamed output, so everything behind it is skipped.
 */
import { compileExpression } from './expressions';
import {
  MAX_EDGES,
  MAX_NODES,
  NODE_CONFIG_SCHEMAS,
  collectExpressions,
  edgeSchema,
  formatZodIssues,
  isNodeType,
  isTriggerType,
  isValidSourceHandle,
  nodeSchema,
  outputHandles,
} from './nodes';
import { NODE_TYPES, type GraphNode, type ValidationIssue, type ValidationReport, type WorkflowGraph } from './types';

/**
 * Longest expression validation compiles. Validation runs on the API's event loop and JSONata's
 * parser is linear but not free (a 1 MB expression took ~2 s on a busy 2-core machine); a
 * 64 KiB cap keeps one graph's compile time small while no real expression comes near it.
 */
export const MAX_EXPRESSION_CHARS = 64 * 1024;

type Code = ValidationIssue['code'];

/** What validation could salvage of a node, even when its shape is partly wrong. */
interface SalvagedNode {
  id: string;
  index: number;
  type: string | undefined;
  config: Record<string, unknown>;
  onError: GraphNode['onError'];
}

interface SalvagedEdge {
  edgeId: string;
  label: string;
  source: string;
  target: string;
  sourceHandle: string | undefined;
  /** A loop-back edge (`loop: true`): not part of the graph's forward order. */
  loop: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Validates an untrusted graph and reports every problem found (never just the first), each
 * with the node id or edge id (`edges[3]` when the edge has none). Never throws, whatever
 * the input. `valid` is true when there are no errors; warnings do not block deployment.
 */
export function validateGraph(graph: unknown): ValidationReport {
  const errors: ValidationIssue[] = [];
  const warnings: ValidationIssue[] = [];
  const counts = { nodes: 0, edges: 0 };
  const add = (code: Code, message: string, ids: { nodeId?: string; edgeId?: string } = {}, severity: 'error' | 'warning' = 'error') => {
    const issue: ValidationIssue = { code, message, severity };
    if (ids.nodeId !== undefined) issue.nodeId = ids.nodeId;
    if (ids.edgeId !== undefined) issue.edgeId = ids.edgeId;
    (severity === 'error' ? errors : warnings).push(issue);
  };
  try {
    checkGraph(graph, add, counts);
  } catch (err) {
    // Last resort for hostile input (throwing getters, proxies): report instead of throwing.
    add('invalid_config', `graph could not be validated: ${errorText(err)}`);
  }
  return { valid: errors.length === 0, errors, warnings, nodeCount: counts.nodes, edgeCount: counts.edges };
}

type Add = (code: Code, message: string, ids?: { nodeId?: string; edgeId?: string }) => void;

function checkGraph(graph: unknown, add: Add, counts: { nodes: number; edges: number }): void {
  if (!isRecord(graph)) {
    add('invalid_config', 'graph: expected an object with "nodes" and "edges" arrays');
    add('no_trigger', 'the workflow has no trigger node (start, webhook or schedule)');
    return;
  }
  const rawNodes = Array.isArray(graph.nodes) ? (graph.nodes as unknown[]) : [];
  const rawEdges = Array.isArray(graph.edges) ? (graph.edges as unknown[]) : [];
  if (!Array.isArray(graph.nodes)) add('invalid_config', 'graph.nodes: expected an array of nodes');
  if (!Array.isArray(graph.edges)) add('invalid_config', 'graph.edges: expected an array of edges');
  counts.nodes = rawNodes.length;
  counts.edges = rawEdges.length;
  if (rawNodes.length > MAX_NODES) add('invalid_config', `graph.nodes: ${rawNodes.length} nodes, at most ${MAX_NODES} are allowed`);
  if (rawEdges.length > MAX_EDGES) add('invalid_config', `graph.edges: ${rawEdges.length} edges, at most ${MAX_EDGES} are allowed`);

  const nodes = new Map<string, SalvagedNode>();
  rawNodes.forEach((raw, index) => checkNode(raw, index, nodes, add));

  const edges: SalvagedEdge[] = [];
  rawEdges.forEach((raw, index) => {
    const edge = checkEdge(raw, index, nodes, add);
    if (edge) edges.push(edge);
  });

  checkStructure([...nodes.values()], edges, add);
}

function checkNode(raw: unknown, index: number, nodes: Map<string, SalvagedNode>, add: Add): void {
  const label = `nodes[${index}]`;
  if (!isRecord(raw)) {
    add('invalid_config', `${label}: expected a node object`);
    return;
  }
  const id = typeof raw.id === 'string' ? raw.id : undefined;
  const ids = { nodeId: id };
  const shape = nodeSchema.safeParse(raw);
  if (!shape.success) {
    // config problems are reported below with the type's schema; here only the envelope.
    for (const message of formatZodIssues(shape.error.issues, label, raw)) add('invalid_config', message, ids);
  }
  if (id === undefined) return; // nothing can refer to it; its problems are reported above
  if (nodes.has(id)) {
    add('duplicate_node_id', `${label}: node id "${id}" is already used by nodes[${nodes.get(id)!.index}]`, ids);
    return;
  }
  const type = typeof raw.type === 'string' ? raw.type : undefined;
  const config = raw.config === undefined ? {} : isRecord(raw.config) ? raw.config : undefined;
  const onError = raw.onError === 'stop' || raw.onError === 'continue' || raw.onError === 'branch' ? raw.onError : undefined;
  nodes.set(id, { id, index, type, config: config ?? {}, onError });

  if (type !== undefined && !isNodeType(type)) {
    add('unknown_type', `node "${id}" has unknown type "${type}" (known types: ${NODE_TYPES.join(', ')})`, ids);
    return;
  }
  if (type === undefined || config === undefined) return; // shape issues already reported
  const parsed = NODE_CONFIG_SCHEMAS[type].safeParse(config);
  if (!parsed.success) {
    for (const message of formatZodIssues(parsed.error.issues, 'config', config))
      add('invalid_config', `node "${id}" (${type}): ${message}`, ids);
  }
  for (const { path, expression } of collectExpressions({ type, config })) {
    if (expression.length > MAX_EXPRESSION_CHARS) {
      add(
        'invalid_expression',
        `node "${id}": ${path}: the expression is ${expression.length} characters long; the limit is ${MAX_EXPRESSION_CHARS}`,
        ids,
      );
      continue;
    }
    try {
      compileExpression(expression);
    } catch (err) {
      add('invalid_expression', `node "${id}": ${path}: ${errorText(err)}`, ids);
    }
  }
}

function checkEdge(raw: unknown, index: number, nodes: Map<string, SalvagedNode>, add: Add): SalvagedEdge | null {
  const hasId = isRecord(raw) && typeof raw.id === 'string';
  const edgeId = hasId ? (raw.id as string) : `edges[${index}]`;
  const label = hasId ? `edge "${edgeId}"` : edgeId;
  if (!isRecord(raw)) {
    add('dangling_edge', `${label}: expected an edge object with source and target`, { edgeId });
    return null;
  }
  const shape = edgeSchema.safeParse(raw);
  if (!shape.success) {
    for (const issue of shape.error.issues) {
      const field = issue.path[0];
      const code: Code =
        field === 'source' || field === 'target' ? 'dangling_edge' : field === 'sourceHandle' ? 'invalid_handle' : 'invalid_config';
      add(code, `${label}: ${formatZodIssues([issue], 'edge', raw)[0]}`, { edgeId });
    }
  }
  if (typeof raw.source !== 'string' || typeof raw.target !== 'string') return null;
  const source = nodes.get(raw.source);
  const target = nodes.get(raw.target);
  if (!source) add('dangling_edge', `${label}: source "${raw.source}" is not a node of this graph`, { edgeId });
  if (!target) add('dangling_edge', `${label}: target "${raw.target}" is not a node of this graph`, { edgeId });
  if (!source || !target) return null;

  const sourceHandle = typeof raw.sourceHandle === 'string' ? raw.sourceHandle : undefined;
  // A handle of the wrong type was reported with the shape; null means "no handle".
  const handleShapeOk = raw.sourceHandle == null || sourceHandle !== undefined;
  if (isNodeType(source.type) && handleShapeOk) {
    const node = { type: source.type, config: source.config, onError: source.onError };
    if (!isValidSourceHandle(node, sourceHandle)) {
      const handles = outputHandles(node) ?? [];
      const valid = handles.length ? handles.map((h) => `"${h}"`).join(', ') : 'none (leave sourceHandle empty)';
      const what = sourceHandle === undefined ? 'has no sourceHandle' : `uses unknown output "${sourceHandle}"`;
      add('invalid_handle', `${label}: ${what} of ${source.type} node "${source.id}"; valid outputs: ${valid}`, {
        nodeId: source.id,
        edgeId,
      });
    }
  }
  if (isTriggerType(target.type)) {
    // No dedicated code in the contract: "multiple_inputs" covers "more inputs than this node type takes" (triggers take none).
    add('multiple_inputs', `${label}: trigger node "${target.id}" cannot have incoming edges`, { nodeId: target.id, edgeId });
  }
  const loop = raw.loop === true;
  if (!loop && raw.maxIterations !== undefined)
    add('invalid_config', `${label}: maxIterations applies only to a loop-back edge ("loop": true)`, { edgeId });
  return { edgeId, label, source: source.id, target: target.id, sourceHandle, loop };
}

function checkStructure(nodes: SalvagedNode[], edges: SalvagedEdge[], add: Add): void {
  // The forward graph (without loop-back edges) must be acyclic; loop-back edges are checked on their own below.
  const successors = new Map<string, string[]>(nodes.map((n) => [n.id, []]));
  const incoming = new Map<string, SalvagedEdge[]>(nodes.map((n) => [n.id, []]));
  const loopsInto = new Map<string, SalvagedEdge[]>(nodes.map((n) => [n.id, []]));
  for (const e of edges) {
    if (e.loop) {
      loopsInto.get(e.target)!.push(e);
      continue;
    }
    successors.get(e.source)!.push(e.target);
    incoming.get(e.target)!.push(e);
  }

  for (const node of nodes) {
    const inputs = incoming.get(node.id)!;
    // Triggers are reported per edge in checkEdge; merge nodes exist to take several inputs.
    if (inputs.length > 1 && node.type !== 'merge' && !isTriggerType(node.type)) {
      const from = inputs.map((e) => `"${e.source}"`).join(', ');
      add('multiple_inputs', `node "${node.id}" has ${inputs.length} incoming edges (from ${from}); use a merge node to join branches`, {
        nodeId: node.id,
      });
    }
    const loops = loopsInto.get(node.id)!;
    if (loops.length > 1 && node.type !== 'merge' && !isTriggerType(node.type)) {
      const from = loops.map((e) => `"${e.source}"`).join(', ');
      add(
        'multiple_inputs',
        `node "${node.id}" has ${loops.length} loop-back edges (from ${from}); join them in a merge node and loop back once`,
        { nodeId: node.id },
      );
    }
  }
  checkLoopEdges(edges, successors, add);

  const triggers = nodes.filter((n) => isTriggerType(n.type));
  if (triggers.length === 0) {
    add('no_trigger', 'the workflow has no trigger node (start, webhook or schedule)');
  } else {
    // Every node must be reachable from some trigger; a run starts at one of them.
    const seen = new Set(triggers.map((t) => t.id));
    const stack = triggers.map((t) => t.id);
    while (stack.length > 0) {
      for (const next of successors.get(stack.pop()!)!) {
        if (!seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
      }
    }
    for (const node of nodes) {
      if (!seen.has(node.id)) add('unreachable_node', `node "${node.id}" is not reachable from any trigger`, { nodeId: node.id });
    }
  }

  for (const cycle of findCycles(
    nodes.map((n) => n.id),
    successors,
  )) {
    add('cycle', `cycle: ${cycle.join(' → ')} without a loop-back edge (mark the edge that goes back with "loop": true)`, {
      nodeId: cycle[0],
    });
  }
}

/**
 * A loop-back edge must go back: its target (the loop's head) reaches its source through
 * forward edges, so the edge closes a loop. One that does not (it jumps forward or sideways,
 * out of any loop) would restart a part of the graph its source never ran in.
 */
function checkLoopEdges(edges: SalvagedEdge[], successors: Map<string, string[]>, add: Add): void {
  for (const e of edges) {
    if (!e.loop || e.source === e.target) continue;
    if (reachableIds(e.target, successors).has(e.source)) continue;
    add(
      'cycle',
      `${e.label}: loop-back edge from "${e.source}" to "${e.target}" does not close a loop: "${e.source}" does not come after "${e.target}"`,
      { nodeId: e.source, edgeId: e.edgeId },
    );
  }
}

/** Ids reachable from `start` over `successors`, `start` included. */
function reachableIds(start: string, successors: Map<string, string[]>): Set<string> {
  const seen = new Set([start]);
  const stack = [start];
  while (stack.length > 0) {
    for (const next of successors.get(stack.pop()!) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        stack.push(next);
      }
    }
  }
  return seen;
}

/**
 * Kahn's topological sort over `ids` (array order breaks ties, so the order is stable).
 * `stuck` holds the nodes that never became ready: those on a cycle or downstream of one.
 */
function kahn(ids: string[], successors: Map<string, string[]>): { order: string[]; stuck: Set<string> } {
  const position = new Map(ids.map((id, i) => [id, i]));
  const indegree = new Map(ids.map((id) => [id, 0]));
  for (const id of ids) for (const next of successors.get(id)!) indegree.set(next, indegree.get(next)! + 1);
  // Kept sorted by array position; graphs are small (validated size limits), so a sorted insert is enough.
  const ready = ids.filter((id) => indegree.get(id) === 0);
  const order: string[] = [];
  while (ready.length > 0) {
    const id = ready.shift()!;
    order.push(id);
    for (const next of successors.get(id)!) {
      const left = indegree.get(next)! - 1;
      indegree.set(next, left);
      if (left > 0) continue;
      const at = ready.findIndex((other) => position.get(other)! > position.get(next)!);
      ready.splice(at === -1 ? ready.length : at, 0, next);
    }
  }
  const done = new Set(order);
  return { order, stuck: new Set(ids.filter((id) => !done.has(id))) };
}

/**
 * Concrete cycles, earliest node (array order) first: for each node left over by Kahn's sort
 * and not yet part of a reported cycle, the shortest cycle through it, if any (a node merely
 * downstream of a cycle has none).
 */
function findCycles(order: string[], successors: Map<string, string[]>): string[][] {
  const { stuck } = kahn(order, successors);
  const reported = new Set<string>();
  const cycles: string[][] = [];
  for (const id of order) {
    if (!stuck.has(id) || reported.has(id)) continue;
    const cycle = shortestCycleThrough(id, stuck, successors);
    if (!cycle) continue;
    cycles.push(cycle);
    for (const member of cycle) reported.add(member);
  }
  return cycles;
}

/** Shortest path start → … → start through `members` (BFS), or null when there is none. */
function shortestCycleThrough(start: string, members: Set<string>, successors: Map<string, string[]>): string[] | null {
  const parent = new Map<string, string>();
  const queue = [start];
  // for-of sees the ids pushed while it runs: a breadth-first walk.
  for (const id of queue) {
    for (const next of successors.get(id)!) {
      if (next === start) {
        const path = [start];
        for (let at = id; at !== start; at = parent.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (members.has(next) && !parent.has(next)) {
        parent.set(next, id);
        queue.push(next);
      }
    }
  }
  return null;
}

/**
 * Whether a validated graph may be deployed, and why not: one line per error, prefixed with
 * its node id when it has one (edge messages already name the edge). Deterministic — derived
 * from the report only, no timestamp.
 */
export function deploymentReadiness(report: ValidationReport): { ready: boolean; blockers: string[]; checkedAt?: never } {
  const errors = Array.isArray(report?.errors) ? report.errors : [];
  const blockers = errors.map((e) => (e.nodeId ? `${e.nodeId}: ${e.message}` : e.message));
  return { ready: report?.valid === true && blockers.length === 0, blockers };
}

/**
 * Node ids in topological order; among nodes that are ready at the same time, the one earlier
 * in `graph.nodes` comes first, so the order is stable. Edges to or from unknown nodes are
 * ignored and a duplicated id counts once (its first occurrence); loop-back edges are not part of
 * the order. Throws when the forward graph has a cycle — validate first.
 */
export function topologicalOrder(graph: WorkflowGraph): string[] {
  const ids = [...new Set(graph.nodes.map((n) => n.id))];
  const successors = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const e of graph.edges) {
    if (!e.loop && successors.has(e.source) && successors.has(e.target)) successors.get(e.source)!.push(e.target);
  }
  const { order, stuck } = kahn(ids, successors);
  if (stuck.size > 0) throw new Error(`graph has a cycle; nodes not orderable: ${[...stuck].join(', ')}`);
  return order;
}
