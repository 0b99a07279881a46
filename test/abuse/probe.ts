/**
 * Workspace B's probe and the graph shapes of the abuse suite, without jest, so the abuse
 * benchmark (scripts/bench/abuse.ts) runs exactly what the tests run.
 */

/** A node as the API takes it (engine/nodes.ts). */
export interface GraphNode {
  id: string;
  type: string;
  config: Record<string, unknown>;
  retry?: { maxAttempts: number; backoffSeconds?: number };
  onError?: string;
}

export interface WorkflowBody {
  name?: string;
  nodes: GraphNode[];
  edges: Array<{ source: string; target: string; sourceHandle?: string; loop?: boolean; maxIterations?: number }>;
}

/** `nodes` in a line after a start node. */
export function chain(nodes: GraphNode[], name?: string): WorkflowBody {
  const all: GraphNode[] = [{ id: 'start', type: 'start', config: {} }, ...nodes];
  return { ...(name ? { name } : {}), nodes: all, edges: all.slice(1).map((n, i) => ({ source: all[i].id, target: n.id })) };
}

/** A code node running `source` once (no retries, so a failure is the node's, not a retry's). */
export function codeNode(source: string, id = 'code'): GraphNode {
  return { id, type: 'code', config: { source }, retry: { maxAttempts: 1, backoffSeconds: 0 } };
}

/** A transform node evaluating the JSONata `expression`. */
export function transformNode(expression: string, id = 'expr'): GraphNode {
  return { id, type: 'transform', config: { expression } };
}

export const PROBE_INPUT = { n: 21, tag: 'probe' };
export const PROBE_OUTPUT = { ok: true, sum: 43, tag: 'PROBE!' };

/**
 * B's probe: start → transform (JSONata) → code (sandbox) → transform (the end), so it needs
 * the expression evaluator, the sandbox host and the worker all to be healthy.
 */
export function probeGraph(): WorkflowBody {
  return chain(
    [
      transformNode('{ "doubled": n * 2, "tag": $uppercase(tag) }', 'shape'),
      codeNode('return { sum: input.doubled + 1, tag: input.tag + "!" };', 'compute'),
      transformNode('{ "ok": sum = 43, "sum": sum, "tag": tag }', 'end'),
    ],
    'Abuse probe',
  );
}
