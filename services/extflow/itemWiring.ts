/**
 * Where the two forms of a converted connection meet (docs/migrating.md, "Items"): nodes that
 * take and return the external tool's item list (item nodes, Code) and nodes that take and
 * return one item's JSON (everything else). Pure helpers of the converter.
 */
import type { GraphNode } from '../../engine/types';
import { jsonLiteral, nodeRef } from './expressions';
import { ITEM_ERROR_END, ITEM_ERROR_START } from './itemRuntime';

/** How many items a node returns for its input: one, at most as many as came in, or any number. */
export type ItemCount = 'one' | 'same' | 'many';

/**
 * Which nodes may return more than one item: those that return any number, and those that return
 * as many as they receive when something before them may. Nodes without a count return one.
 */
export function mayReturnSeveral(counts: Map<string, ItemCount | undefined>, sourcesOf: (name: string) => string[]): Set<string> {
  const several = new Set<string>();
  for (const [name, count] of counts) if (count === 'many') several.add(name);
  for (let changed = true; changed;) {
    changed = false;
    for (const [name, count] of counts) {
      if (count !== 'same' || several.has(name)) continue;
      if (sourcesOf(name).some((s) => several.has(s))) {
        several.add(name);
        changed = true;
      }
    }
  }
  return several;
}

/**
 * The two nodes between an item list and a node that takes one item's JSON: a condition that
 * lets nothing through when the list is empty (the external tool does not run a node that
 * receives no items), then a transform giving the item's JSON — the first item's with
 * `firstOnly` ("execute once"), else the only item's, failing the node with a message when
 * several arrive. A value that is not a list (one item's JSON) passes unchanged.
 */
export function oneItemAdapter(
  ids: { any: string; one: string },
  names: { source: string; target: string },
  firstOnly: boolean,
  position: GraphNode['position'],
): GraphNode[] {
  const message = `${jsonLiteral(`"${names.source}" passed `)} & $string($count($)) & ${jsonLiteral(
    ` items to "${names.target}", which runs once per item in the external tool but takes one item here (turn on its "execute once" to take the first)`,
  )}`;
  const item = '($i := $[0]; $type($i.json) = "object" ? $i.json : $i)';
  const pos = position ? { position: { x: position.x - 60, y: position.y + 40 } } : {};
  return [
    {
      id: ids.any,
      type: 'condition',
      name: `${names.target} (any items from ${names.source})`.slice(0, 200),
      config: { expression: '$type($) != "array" or $count($) > 0' },
      ...pos,
    },
    {
      id: ids.one,
      type: 'transform',
      name: `${names.target} (${firstOnly ? 'first item' : 'one item'} from ${names.source})`.slice(0, 200),
      config: {
        expression: firstOnly
          ? `$type($) != "array" ? $ : ${item}`
          : `$type($) != "array" ? $ : $count($) = 1 ? ${item} : $error(${message})`,
      },
      ...pos,
    },
  ];
}

/** The error output of an item node: the engine's `{ error: { message } }` as the tool's error item. */
export function errorItemNode(id: string, name: string, position: GraphNode['position']): GraphNode {
  return {
    id,
    type: 'transform',
    name: `${name} (error output)`.slice(0, 200),
    config: {
      expression: `($m := error.message; [{ "json": { "error": $contains($m, "${ITEM_ERROR_START}") ? $substringBefore($substringAfter($m, "${ITEM_ERROR_START}"), "${ITEM_ERROR_END}") : $m } }])`,
    },
    ...(position ? { position: { x: position.x + 40, y: position.y + 80 } } : {}),
  };
}

const EXPRESSION_KEYS = new Set(['expression']);

/**
 * Suffix of the transform giving a code node the items of the nodes its code names (nodes/code.ts).
 * Its `$nodes.<id>` references are not rewritten to a first item below: the code reads the lists.
 */
export const CODE_NODES_SUFFIX = '__nodes';

/**
 * Rewrites, in the expressions of non-code nodes, each reference to an item node's output
 * (`$nodes.<id>`, what `$('Name').item.json` translates to) so it reads the first item's JSON of
 * the list (or the value itself when it holds one item's JSON). Returns the ids it rewrote so.
 * Caveat: the external tool reads the item paired with the current one; with one item they agree.
 * Inside a per-item loop (`pairedIndexOf` answers the JSONata of the current item's index for the
 * nodes of a loop's body), the reference reads the item at that index instead, or the only one:
 * the paired item when items flowed one to one; those are not returned.
 */
export function rewriteListRefs(
  nodes: GraphNode[],
  listIds: Set<string>,
  pairedIndexOf: (nodeId: string) => string | undefined = () => undefined,
): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  if (listIds.size === 0) return found;
  const refs = [...listIds].map((id) => ({ id, ref: nodeRef(id) }));
  const rewrite = (text: string, nodeId: string): string => {
    let out = text;
    for (const { id, ref } of refs) {
      const re = new RegExp(`${ref.replace(/[.*+?^${}()|[\]\\`]/g, '\\$&')}(?![A-Za-z0-9_\`])`, 'g');
      if (!re.test(out)) continue;
      const index = pairedIndexOf(nodeId);
      if (index !== undefined) {
        out = out.replace(re, `($__l := ${ref}; $type($__l) = "array" ? ($count($__l) = 1 ? $__l[0].json : $__l[${index}].json) : $__l)`);
        continue;
      }
      out = out.replace(re, `($type(${ref}) = "array" ? ${ref}[0].json : ${ref})`);
      const users = found.get(id) ?? new Set<string>();
      users.add(nodeId);
      found.set(id, users);
    }
    return out;
  };
  const walk = (value: unknown, key: string | null, nodeId: string, depth: number): unknown => {
    if (depth > 64) return value;
    if (typeof value === 'string')
      return (key !== null && EXPRESSION_KEYS.has(key)) || value.startsWith('=') ? rewrite(value, nodeId) : value;
    if (Array.isArray(value)) return value.map((v) => walk(v, null, nodeId, depth + 1));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k, nodeId, depth + 1)]));
    return value;
  };
  for (const node of nodes) {
    if (node.type === 'code' || node.id.endsWith(CODE_NODES_SUFFIX)) continue;
    node.config = walk(node.config, null, node.id, 0) as Record<string, unknown>;
  }
  return found;
}

/** A condition true unless the input is an empty item list (or nothing). */
export const ANY_ITEMS = '$exists($) and $ != null and ($type($) != "array" or $count($) > 0)';

/**
 * JSONata giving a node's input as the external tool's item list, each item paired with its
 * index: an item list as is, one value as its one item, nothing as none.
 */
export const ITEMS_OF_INPUT =
  '[($type($) = "array" ? $ : $exists($) and $ != null ? [{"json": $}] : []) ~> $map(function($__it, $__i) { $merge([{"json": $__it.json}, $exists($__it.binary) ? {"binary": $__it.binary} : {}, {"pairedItem": {"item": $__i}}]) })]';

/**
 * Per-item routing (If, Filter, Switch over several items): `route` is JSONata evaluated for each
 * item with `$input` bound to the item's JSON, as the node's translated expressions read it,
 * giving the list of output indexes (as strings) the item goes to. The answer is an object with
 * one item list per output, `{"o0": […], "o1": […]}`.
 */
export function routeItemsExpression(route: string, outputs: number): string {
  const rows = `$map($, function($__it) { {"item": $__it, "to": [($input := $__it.json; ${route})]} })`;
  const parts = Array.from({ length: outputs }, (_, k) => `"o${k}": [$__rows[${JSON.stringify(String(k))} in to].item]`);
  return `($__rows := ${rows}; {${parts.join(', ')}})`;
}

/**
 * The nodes of a per-item branching node: `<id>` gives its input as items (what `$('Node')`
 * reads: the node passes its items on unchanged), `<id>__route` sorts them per output, and for
 * each output a condition that lets nothing through when the output has no items (the external
 * tool does not run a node that receives none) then a transform giving that output's items.
 * Before them all, `<id>__anyin` (the entry) lets nothing through when no item arrives.
 */
export function routedNodes(
  make: (id: string, type: string, config: Record<string, unknown>, offset: number) => GraphNode,
  id: string,
  route: string,
  outputs: number,
): { nodes: GraphNode[]; edges: Array<{ source: string; target: string; handle?: string }>; outputOf: (k: number) => string } {
  const nodes = [
    make(`${id}__anyin`, 'condition', { expression: ANY_ITEMS }, 1),
    make(id, 'transform', { expression: ITEMS_OF_INPUT }, 0),
    make(`${id}__route`, 'transform', { expression: routeItemsExpression(route, outputs) }, 1),
  ];
  const edges: Array<{ source: string; target: string; handle?: string }> = [
    { source: `${id}__anyin`, target: id, handle: 'true' },
    { source: id, target: `${id}__route` },
  ];
  for (let k = 0; k < outputs; k++) {
    nodes.push(make(`${id}__any${k}`, 'condition', { expression: `$count($.o${k}) > 0` }, 2));
    nodes.push(make(`${id}__out${k}`, 'transform', { expression: `$.o${k}` }, 3));
    edges.push(
      { source: `${id}__route`, target: `${id}__any${k}` },
      { source: `${id}__any${k}`, target: `${id}__out${k}`, handle: 'true' },
    );
  }
  return { nodes, edges, outputOf: (k) => `${id}__out${k}` };
}

/** What `perItemLoop` wraps: a one-item mapping whose output node is `innerId` (or what `output(0)` names). */
export interface LoopedMapping {
  nodes: GraphNode[];
  edges?: Array<{ source: string; target: string; handle?: string }>;
  entry?: string;
  output?(index: number): { source: string; handle?: string } | null;
}

/**
 * A node that takes one item's JSON, run once per item of its input as the external tool does
 * (HTTP Request, a Set whose JavaScript expressions cannot run per item in JSONata): the item
 * list goes through an engine loop (docs/workflow-graph.md, "Loops") one item at a time, the
 * node's own mapping runs inside it on the item's JSON, and each answer comes back as an item
 * paired with the input item it answers. `<id>` (what `$('Node')` reads) holds the items of all
 * iterations in order. With `splitArrays`, an answer that is a list of objects is that many
 * items (an empty list: none), as the external tool makes of an HTTP Request's JSON array.
 * Nothing runs when no item arrives. At most `maxIterations` items (the run fails naming the loop past them).
 */
export function perItemLoop(
  make: (id: string, type: string, config: Record<string, unknown>, offset: number) => GraphNode,
  id: string,
  inner: LoopedMapping & { innerId: string },
  opts: { splitArrays: boolean; maxIterations: number },
): {
  nodes: GraphNode[];
  edges: Array<{ source: string; target: string; handle?: string; loop?: true; maxIterations?: number }>;
  entry: string;
} {
  const ids = { any: `${id}__anyin`, items: `${id}__items`, each: `${id}__each`, json: `${id}__json`, back: `${id}__back` };
  const exit = inner.output?.(0) ?? { source: inner.innerId };
  const innerEntry = inner.entry ?? inner.nodes.at(0)?.id ?? inner.innerId;
  const innerEdges =
    inner.edges ??
    inner.nodes.flatMap((n, k) => {
      const next = inner.nodes.at(k + 1);
      return next ? [{ source: n.id, target: next.id }] : [];
    });
  const paired = `${nodeRef(ids.each)}.pairedItem`;
  const answer = opts.splitArrays
    ? `($p := ${paired}; $type($) = "array" and $count($[$type($) != "object"]) = 0 ? [$map($, function($v) { {"json": $v, "pairedItem": $p} })] : {"json": $, "pairedItem": $p})`
    : `{"json": $, "pairedItem": ${paired}}`;
  return {
    nodes: [
      make(ids.any, 'condition', { expression: ANY_ITEMS }, 1),
      make(ids.items, 'transform', { expression: ITEMS_OF_INPUT }, 1),
      make(ids.each, 'loop', { batchSize: 1 }, 2),
      make(ids.json, 'transform', { expression: '$type($.json) = "object" ? $.json : {}' }, 2),
      ...inner.nodes,
      make(ids.back, 'transform', { expression: answer }, 3),
      make(id, 'transform', { expression: '[$reduce($, function($a, $e) { $append($a, $e) }, [])]' }, 0),
    ],
    edges: [
      { source: ids.any, target: ids.items, handle: 'true' },
      { source: ids.items, target: ids.each },
      { source: ids.each, target: ids.json, handle: 'loop' },
      { source: ids.json, target: innerEntry },
      ...innerEdges,
      { source: exit.source, target: ids.back, ...(exit.handle !== undefined ? { handle: exit.handle } : {}) },
      { source: ids.back, target: ids.each, loop: true, maxIterations: opts.maxIterations },
      { source: ids.each, target: id, handle: 'done' },
    ],
    entry: ids.any,
  };
}
