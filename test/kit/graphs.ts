/**
 * Graph builders: the workflow bodies tests deploy, without spelling out nodes and edges.
 * `chain(...)` is a start trigger followed by the given nodes in a line; `webhookChain(...)`
 * the same behind a webhook trigger. The `node` helpers build the common node types.
 */
import type { GraphEdge, GraphNode, WorkflowGraph } from '../../engine/types';

export type { GraphEdge, GraphNode, WorkflowGraph };

/** A node as tests send it: id and type, and anything else as is (tests also send malformed nodes). */
export type NodeInput = { id: string; type: string; config?: Record<string, unknown> } & Record<string, unknown>;

/** A workflow body as tests send it: a graph with optional name and other fields; loose on purpose. */
export interface WorkflowBody {
  name?: string;
  description?: string;
  /** Absent: the API's default graph. */
  nodes?: object[];
  edges?: object[];
  [field: string]: unknown;
}

/** What the builders return: a body whose nodes and edges are typed. */
export interface BuiltGraph extends WorkflowBody {
  nodes: NodeInput[];
  edges: GraphEdge[];
}

/** `nodes` in a line: an edge `e<i>` from each node to the next. */
export function line(...nodes: NodeInput[]): BuiltGraph {
  return { nodes, edges: nodes.slice(1).map((n, i) => ({ id: `e${i}`, source: nodes[i].id, target: n.id })) };
}

/** start → the given nodes in a line. */
export function chain(...nodes: NodeInput[]): BuiltGraph {
  return line(node.start(), ...nodes);
}

/** webhook trigger (`hook`) → the given nodes in a line. */
export function webhookChain(...nodes: NodeInput[]): BuiltGraph {
  return line(node.webhook(), ...nodes);
}

/** The common nodes; `id` first so a chain reads as the run's steps. */
export const node = {
  start: (id = 'start'): NodeInput => ({ id, type: 'start', config: {} }),
  webhook: (id = 'hook', config: Record<string, unknown> = {}): NodeInput => ({ id, type: 'webhook', config }),
  /** A JSONata transform of its input. */
  transform: (id: string, expression: string): NodeInput => ({ id, type: 'transform', config: { expression } }),
  /** A sandboxed code node; `retry: false` runs it once (a failure is the node's, not a retry's). */
  code: (id: string, source: string, opts: { retry?: false } = {}): NodeInput => ({
    id,
    type: 'code',
    config: { source },
    ...(opts.retry === false ? { retry: { maxAttempts: 1, backoffSeconds: 0 } } : {}),
  }),
  log: (id: string, message: string, level: 'debug' | 'info' | 'warn' | 'error' = 'info'): NodeInput => ({
    id,
    type: 'log',
    config: { level, message },
  }),
  fail: (id: string, message: string): NodeInput => ({ id, type: 'fail', config: { message } }),
  wait: (id: string, seconds: number): NodeInput => ({ id, type: 'wait', config: { seconds } }),
  approval: (id: string, prompt: string): NodeInput => ({ id, type: 'approval', config: { prompt } }),
  /** Any other node type. */
  of: (type: string, id: string, config: Record<string, unknown> = {}, extra: Partial<GraphNode> = {}): NodeInput => ({
    id,
    type,
    config,
    ...extra,
  }),
};

/** A saved workflow's nodes, as tests read them (the API declares saved nodes as loose objects). */
export function nodesOf(workflow: { nodes: object[] }): NodeInput[] {
  return workflow.nodes as NodeInput[];
}

/** The saved node `id` of a workflow; fails the test when it has none. */
export function savedNode(workflow: { nodes: object[] }, id: string): NodeInput {
  const found = nodesOf(workflow).find((n) => n.id === id);
  if (!found) throw new Error(`no node ${id} in ${JSON.stringify(workflow.nodes)}`);
  return found;
}
