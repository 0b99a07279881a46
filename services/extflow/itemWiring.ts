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
 * Rewrites, in the expressions of non-code nodes, each reference to an item node's output
 * (`$nodes.<id>`, what `$('Name').item.json` translates to) so it reads the first item's JSON of
 * the list (or the value itself when it holds one item's JSON). Returns the ids it rewrote.
 * Caveat: the external tool reads the item paired with the current one; with one item they agree.
 */
export function rewriteListRefs(nodes: GraphNode[], listIds: Set<string>): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  if (listIds.size === 0) return found;
  const refs = [...listIds].map((id) => ({ id, ref: nodeRef(id) }));
  const rewrite = (text: string, nodeId: string): string => {
    let out = text;
    for (const { id, ref } of refs) {
      const re = new RegExp(`${ref.replace(/[.*+?^${}()|[\]\\`]/g, '\\$&')}(?![A-Za-z0-9_\`])`, 'g');
      if (!re.test(out)) continue;
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
    if (node.type === 'code') continue;
    node.config = walk(node.config, null, node.id, 0) as Record<string, unknown>;
  }
  return found;
}
