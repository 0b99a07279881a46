/**
 * Item-for-item comparison of one workflow's run on n8n (the recorded reference) with its run on
 * the service after the extflow import. Pure: no I/O, so the rules are unit-tested
 * (test/unit/scripts/n8nParity.test.ts).
 *
 * The mapping it checks is the one docs/api/extflow.md states: item nodes and Code output n8n's
 * item list (`[{ json, pairedItem? }]`), compared item for item by `json`; the other nodes output
 * one item's JSON, so a node that emitted one item must have output that item's `json`, one that
 * emitted several the array of their `json`s, one that emitted none nothing (null, or the step
 * did not run). Items of
 * every output of a node (an If's true and false branches) and of every run of it are taken
 * together, in order, because our node records hold one output per node.
 */

/** What n8n recorded for one node: per run, the `json` of the items of each output. */
export interface N8nNodeRecord {
  runs: Array<{ outputs: unknown[][]; error?: string | null }>;
}

/** One workflow's n8n run, as scripts/lib/n8nReference.ts records it. */
export interface N8nReference {
  status: 'success' | 'error';
  error: string | null;
  /** Keyed by the n8n node name. */
  nodes: Record<string, N8nNodeRecord>;
}

/** One step of our run (GET /api/v1/runs/{id}, full projection). */
export interface OurStep {
  nodeId: string;
  status: string;
  output: unknown;
  error?: string | null;
}

export interface NodeComparison {
  node: string;
  /** The step compared (our node id), or null when none ran for this n8n node. */
  nodeId: string | null;
  equal: boolean;
  /** Why not equal: the first differing path, or a missing step. */
  detail: string | null;
}

export interface WorkflowComparison {
  /** Every n8n node that emitted items was matched by an equal output of ours. */
  equal: boolean;
  /** Our run's status differed from n8n's (one failed, the other not). */
  statusDiffers: boolean;
  nodes: NodeComparison[];
  /** The first difference, for the report; null when equal. */
  firstDifference: string | null;
}

/**
 * A JSON value with object keys sorted and `undefined` members dropped, so key order and
 * absent-vs-undefined do not count as differences (neither survives JSON in either tool).
 */
export function canonicalJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : canonicalJson(v)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = canonicalJson(v);
    }
    return out;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return null; // as JSON.stringify writes it
  return value;
}

/** The first path where two JSON values differ (`$` is the root), or null when they are equal. */
export function firstDifference(expected: unknown, actual: unknown, at = '$'): string | null {
  const a = canonicalJson(expected);
  const b = canonicalJson(actual);
  return diff(a, b, at);
}

function diff(a: unknown, b: unknown, at: string): string | null {
  if (a === b) return null;
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (kind(a) !== kind(b)) return `${at}: n8n has ${show(a)}, we have ${show(b)}`;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = diff(a[i], b[i], `${at}[${i}]`);
      if (d) return d;
    }
    return a.length === b.length ? null : `${at}: n8n has ${a.length} elements, we have ${b.length}`;
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    for (const key of new Set([...Object.keys(ra), ...Object.keys(rb)])) {
      const path = /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;
      if (!(key in rb)) return `${path}: missing here (n8n has ${show(ra[key])})`;
      if (!(key in ra)) return `${path}: not in n8n's item (we have ${show(rb[key])})`;
      const d = diff(ra[key], rb[key], path);
      if (d) return d;
    }
    return null;
  }
  return `${at}: n8n has ${show(a)}, we have ${show(b)}`;
}

function show(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The `json` of every item a node emitted, over all its runs and outputs, in order. */
export function emittedItems(record: N8nNodeRecord): unknown[] {
  return record.runs.flatMap((run) => run.outputs.flat());
}

/**
 * Our value for a list of n8n items: nothing for none, the item's JSON for one, the array of
 * their JSONs for several (extflow's documented mapping).
 */
export function expectedValue(items: unknown[]): unknown {
  if (items.length === 0) return null;
  return items.length === 1 ? items[0] : items;
}

/** An output in n8n's item shape: a list of `{ json, binary?, pairedItem? }`. */
export function isItemList(value: unknown): value is Array<{ json: unknown }> {
  return Array.isArray(value) && value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v) && 'json' in v);
}

/**
 * Compares one n8n node's items with the output of our step. `step` undefined: no step of ours
 * ran for it, which is equal only when n8n emitted nothing either.
 */
export function compareNode(name: string, record: N8nNodeRecord, step: OurStep | undefined): NodeComparison {
  const items = emittedItems(record);
  if (!step || step.status === 'skipped') {
    return items.length === 0
      ? { node: name, nodeId: step?.nodeId ?? null, equal: true, detail: null }
      : { node: name, nodeId: step?.nodeId ?? null, equal: false, detail: `n8n emitted ${items.length} item(s); no step of ours ran` };
  }
  const ours = step.output === undefined ? null : step.output;
  // Item nodes and Code output n8n's own item list (issue 29's data model): compared list to
  // list. An n8n item's json is an object, never an array, so the two shapes cannot be confused.
  const d = isItemList(ours)
    ? firstDifference(
        items,
        ours.map((item) => item.json),
      )
    : firstDifference(expectedValue(items), ours);
  return { node: name, nodeId: step.nodeId, equal: d === null, detail: d };
}

/**
 * Compares a whole run. `stepFor` finds our step for an n8n node name (the caller knows the
 * imported graph's ids); n8n nodes that neither emitted items nor have a step are left out, as
 * are those `ignore` names (sticky notes, which are not imported).
 */
export function compareWorkflow(
  reference: N8nReference,
  ourStatus: string,
  stepFor: (n8nNodeName: string) => OurStep | undefined,
  ignore: ReadonlySet<string> = new Set(),
): WorkflowComparison {
  const nodes: NodeComparison[] = [];
  for (const [name, record] of Object.entries(reference.nodes)) {
    if (ignore.has(name)) continue;
    nodes.push(compareNode(name, record, stepFor(name)));
  }
  const oursFailed = ourStatus !== 'succeeded';
  const statusDiffers = (reference.status === 'error') !== oursFailed;
  const firstNode = nodes.find((n) => !n.equal);
  const firstDiff = statusDiffers
    ? `n8n ${reference.status === 'error' ? `failed (${reference.error ?? 'no message'})` : 'succeeded'}, our run ${ourStatus}`
    : firstNode
      ? `${firstNode.node}: ${firstNode.detail}`
      : null;
  return { equal: !statusDiffers && !firstNode, statusDiffers, nodes, firstDifference: firstDiff };
}
