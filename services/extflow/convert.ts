/**
 * The converter: one exported workflow of the external tool (nodes with `type`,
 * `typeVersion`, `parameters`, `credentials`, `position`; `connections` keyed by node name)
 * to our graph. Each node family has its mapper (nodes/); a node no mapper can express
 * exactly stays in the graph as a placeholder of type `extflow:<its type>` (which keeps the
 * workflow from deploying) and is listed with the reason and what to do. Pure: nothing is read
 * or written here.
 */
import { pinnedDataOf } from './pinned';
import { validateGraph } from '../../engine/validate';
import type { GraphEdge, GraphNode } from '../../engine/types';
import { canonicalJson } from '../../engine/canonicalJson';
import { DEFAULT_LOOP_ITERATIONS, MAX_LOOP_ITERATIONS } from '../../engine/limits';
import { invalidInput } from '../kernel/errors';
import { sha256Hex } from '../kernel/ids';
import { nodeRef, type ExpressionScope } from './expressions';
import { JsBatch } from './jsExpressions';
import { isRecord, ourNode, type AiSubNode, type MapContext, type Mapped, type OutputRef } from './nodes/context';
import { AI_ROOT_TYPES } from './nodes/ai';
import { ANNOTATION_TYPES, MAPPERS } from './nodes/index';
import { externalIdFor } from './nodes/subworkflow';
import { withLastNodeReply } from './lastNodeReply';
import { errorItemNode, mayReturnSeveral, oneItemAdapter, perItemLoop, rewriteListRefs } from './itemWiring';
import {
  Unsupported,
  type ConversionReport,
  type ConversionWarning,
  type CredentialAlias,
  type ExtNode,
  type ExtWorkflow,
  type ReadinessIssue,
  type SubworkflowRef,
  type UnsupportedItem,
} from './types';

export const PLACEHOLDER_PREFIX = 'extflow:';
/**
 * Our node types that pass nothing on an output the external tool would fill with an empty item
 * under "always output data" (an If's true output without items, say).
 */
const MAY_OUTPUT_NOTHING = new Set(['condition', 'switch']);
const MAX_NODES = 500;
/** Node types mapped again to run per item when an input may carry several items. */
const PER_ITEM_TYPES = new Set(['if', 'filter', 'switch', 'set'].map((t) => `n8n-nodes-base.${t}`));
/**
 * Node types whose one-item mapping runs once per item in an engine loop where several items may
 * arrive (the AI roots with one output: the Text Classifier's outputs are branches).
 */
const LOOP_PER_ITEM_TYPES = new Set([
  ...['set', 'httpRequest'].map((t) => `n8n-nodes-base.${t}`),
  ...['agent', 'chainLlm', 'informationExtractor'].map((t) => `@n8n/n8n-nodes-langchain.${t}`),
]);

/** Whether a parsed JSON value is an export of the external tool rather than our portable shape. */
export function looksLikeExtflow(value: unknown): boolean {
  // Our artifacts carry a `schema` and a `connections` map of credential aliases; our portable shape has `edges`.
  if (!isRecord(value) || value.schema !== undefined) return false;
  if (Array.isArray(value.nodes) && value.nodes.some((n) => isRecord(n) && ('typeVersion' in n || 'parameters' in n))) return true;
  if (!isRecord(value.connections) || 'edges' in value) return false;
  return Object.values(value.connections).every((v) => isRecord(v));
}

export interface ConvertedWorkflow {
  externalId: string;
  name: string;
  description: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Credential alias → our credential type (or the external type when there is no equivalent). */
  connections: Record<string, string>;
  conversion: ConversionReport;
  /** The export's pinned data by our node id (services/extflow/pinned.ts). */
  pinned: Record<string, unknown>;
}

const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);

function slug(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase()
    .slice(0, 60);
  return s && !RESERVED.has(s) ? s : 'node';
}

function checkShape(value: unknown, label: string): ExtWorkflow {
  if (!isRecord(value)) throw invalidInput(`${label} must be a JSON object.`);
  if (!Array.isArray(value.nodes)) throw invalidInput(`${label} has no nodes[] array.`);
  if (value.nodes.length > MAX_NODES) throw invalidInput(`${label} has ${value.nodes.length} nodes; at most ${MAX_NODES} are allowed.`);
  if (value.connections !== undefined && !isRecord(value.connections))
    throw invalidInput(`${label}.connections must be an object keyed by node name.`);
  const names = new Set<string>();
  value.nodes.forEach((n, i) => {
    if (!isRecord(n) || typeof n.name !== 'string' || n.name === '' || typeof n.type !== 'string' || n.type === '') {
      throw invalidInput(`${label}.nodes[${i}] must be an object with a name and a type.`);
    }
    if (names.has(n.name)) throw invalidInput(`${label} has two nodes named "${n.name}".`);
    names.add(n.name);
    if (n.parameters !== undefined && !isRecord(n.parameters)) throw invalidInput(`${label}.nodes[${i}].parameters must be an object.`);
  });
  if (value.name !== undefined && typeof value.name !== 'string') throw invalidInput(`${label}.name must be a string.`);
  return { ...(value as unknown as ExtWorkflow), connections: (value.connections ?? {}) as ExtWorkflow['connections'] };
}

/** Node fields that only place or label a node in the external tool's editor: not part of a workflow's identity. */
const COSMETIC_NODE_FIELDS = new Set(['id', 'position', 'notes', 'notesInFlow', 'color']);

/**
 * The identity of an export without an `id`: a hash of its normalised nodes (sorted by name,
 * without editor positions and node ids) and connections. Its name is not part of it, so two
 * unrelated exports sharing a name never share an identity, and the same export imported twice
 * (even renamed) is recognised. Caveat: any change of a node's parameters gives a new identity,
 * so an edited id-less export imports as a new workflow rather than updating the old one.
 */
export function contentIdentity(wf: Pick<ExtWorkflow, 'nodes' | 'connections'>): string {
  const nodes = [...wf.nodes]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((n) => Object.fromEntries(Object.entries(n).filter(([k]) => !COSMETIC_NODE_FIELDS.has(k))));
  return `content-${sha256Hex(canonicalJson({ nodes, connections: wf.connections })).slice(0, 20)}`;
}

/**
 * Puts the code step that evaluates a node's JavaScript expressions (services/extflow/jsExpressions.ts)
 * in front of the node's own mapping, and names its cost and any refused global in the report.
 */
function withJsExpressions(
  ctx: MapContext,
  result: Mapped,
  batch: JsBatch,
  workflow: { id: string | null; name: string },
  nameById: Map<string, string>,
): Mapped {
  // A trigger starts the run: nothing can run before it. (A node without connections never runs, here as there.)
  if (result.nodes.some((n) => TRIGGER_TYPES.has(n.type)))
    throw new Unsupported(
      'JavaScript expressions on a trigger',
      'Rewrite the expressions in JSONata, or move them to the node after the trigger.',
    );
  const first = ctx.inputs[0];
  const prevNode = first ? nameById.get(first.sourceId) : undefined;
  const before = batch.nodes({ prevNode, workflow }, ctx.node.name);
  const at = ctx.position;
  if (at) before.forEach((n, i) => (n.position = { x: at.x - (3 - i) * 40, y: at.y + 60 }));
  ctx.warn(
    `${batch.size} expression${batch.size === 1 ? '' : 's'} run${batch.size === 1 ? 's' : ''} as JavaScript in the code sandbox: one code step (1 credit) per run of this node, under the code node's limits.`,
  );
  for (const message of batch.refusals) ctx.lossy('unsupportedOption', message);
  return { ...result, nodes: [...before, ...result.nodes], entry: `${ctx.id}__ctx` };
}

const TRIGGER_TYPES = new Set(['start', 'webhook', 'schedule', 'ci']);

/**
 * The connections that close a cycle (the external tool runs a node again when data comes back
 * to it): the back edges of a depth-first walk from the nodes without incoming connections,
 * then the others, in export order, following connections in order, so the choice is stable. They become our loop-back edges.
 */
function loopBackConnections<C extends { source: string; target: string }>(nodes: ExtNode[], conns: C[]): Set<C> {
  const out = new Map<string, C[]>(nodes.map((n) => [n.name, []]));
  for (const c of conns) out.get(c.source)?.push(c);
  const state = new Map<string, 'open' | 'done'>();
  const backs = new Set<C>();
  // From the nodes nothing leads to (triggers) first: a walk that began inside a loop would take its way in for the way back.
  const targets = new Set(conns.map((c) => c.target));
  const roots = [...nodes.filter((n) => !targets.has(n.name)), ...nodes.filter((n) => targets.has(n.name))];
  // Iterative, so a long chain of nodes cannot overflow the stack.
  for (const root of roots) {
    if (state.has(root.name)) continue;
    state.set(root.name, 'open');
    const stack: Array<{ name: string; next: number }> = [{ name: root.name, next: 0 }];
    for (let top = stack.at(-1); top !== undefined; top = stack.at(-1)) {
      const c = out.get(top.name)![top.next++];
      if (!c) {
        state.set(top.name, 'done');
        stack.pop();
        continue;
      }
      const seen = state.get(c.target);
      if (seen === 'open') backs.add(c);
      else if (seen === undefined) {
        state.set(c.target, 'open');
        stack.push({ name: c.target, next: 0 });
      }
    }
  }
  return backs;
}

/**
 * The AI sub-nodes of a workflow: nodes whose every connection is an AI connection (`ai_*`) into
 * an AI root node (AI_ROOT_TYPES), by root. Sub-nodes of other roots stay ordinary nodes (and
 * their connections unsupported), as before.
 */
function aiSubNodeLinks(wf: ExtWorkflow, nodes: ExtNode[]): { subNodes: Set<string>; byRoot: Map<string, AiSubNode[]> } {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const subNodes = new Set<string>();
  const byRoot = new Map<string, AiSubNode[]>();
  for (const [source, byType] of Object.entries(wf.connections)) {
    const node = byName.get(source);
    if (!node || !isRecord(byType)) continue;
    const entries = Object.entries(byType).filter(
      ([, outputs]) => Array.isArray(outputs) && outputs.some((t) => Array.isArray(t) && t.length > 0),
    );
    const links: Array<{ type: string; target: string }> = [];
    for (const [type, outputs] of entries)
      for (const targets of outputs as unknown[])
        for (const t of Array.isArray(targets) ? targets : [])
          if (isRecord(t) && typeof t.node === 'string') links.push({ type, target: t.node });
    const isSub = links.length > 0 && links.every((l) => l.type.startsWith('ai_') && AI_ROOT_TYPES.has(byName.get(l.target)?.type ?? ''));
    if (!isSub) continue;
    subNodes.add(source);
    for (const l of links) {
      const list = byRoot.get(l.target) ?? [];
      if (!list.some((s) => s.node === node && s.type === l.type)) list.push({ type: l.type, node });
      byRoot.set(l.target, list);
    }
  }
  return { subNodes, byRoot };
}

/** Converts one exported workflow. Throws `invalid` only when the export's shape is unusable. */
export function convertExtflowWorkflow(value: unknown, label = 'importJson'): ConvertedWorkflow {
  const exported = checkShape(value, label);
  const sourceWorkflowId = exported.id !== undefined && exported.id !== null && String(exported.id) !== '' ? String(exported.id) : null;
  const name = (exported.name ?? '').trim() || 'Imported workflow';
  // The identity is the export's own, before the reply node below is added.
  const externalId = externalIdFor(sourceWorkflowId ?? contentIdentity(exported));
  const { workflow: wf, added: replies } = withLastNodeReply(exported);
  const timezone = typeof wf.settings?.timezone === 'string' && wf.settings.timezone !== 'DEFAULT' ? wf.settings.timezone : undefined;

  const unsupported: UnsupportedItem[] = [];
  const warnings: ConversionWarning[] = [];
  const readinessIssues: ReadinessIssue[] = [];
  const credentials = new Map<string, CredentialAlias>();
  const subworkflows: SubworkflowRef[] = [];
  let translated = 0;

  for (const r of replies)
    warnings.push({
      node: r.trigger,
      message: `"Respond when last node finishes": the node "${r.reply}" added after "${r.after}" answers the caller with its first item.`,
    });
  const annotations = wf.nodes.filter((n) => ANNOTATION_TYPES.has(n.type));
  for (const n of annotations) warnings.push({ node: n.name, message: 'Sticky notes are not imported.' });
  const nodes = wf.nodes.filter((n) => !ANNOTATION_TYPES.has(n.type));
  // AI sub-nodes (chat models, memories, tools) become part of the root node they are connected to.
  const aiLinks = aiSubNodeLinks(wf, nodes);

  // Our ids: the node names as slugs, unique.
  const idByName = new Map<string, string>();
  const used = new Set<string>();
  for (const n of nodes) {
    let id = slug(n.name);
    for (let k = 2; used.has(id); k++) id = `${slug(n.name).slice(0, 56)}_${k}`;
    used.add(id);
    idByName.set(n.name, id);
  }

  // Connections: per source, per output index, the targets; and the incoming side.
  interface Conn {
    source: string;
    output: number;
    target: string;
    input: number;
  }
  const conns: Conn[] = [];
  for (const [source, byType] of Object.entries(wf.connections)) {
    if (!idByName.has(source)) {
      if (!annotations.some((a) => a.name === source))
        warnings.push({ node: source, message: 'A connection leaves from a node that is not in the workflow; it was ignored.' });
      continue;
    }
    for (const [type, outputs] of Object.entries(byType ?? {})) {
      if (aiLinks.subNodes.has(source) && type.startsWith('ai_')) continue;
      if (type !== 'main') {
        unsupported.push({
          node: source,
          nodeType: nodes.find((n) => n.name === source)!.type,
          reason: `"${type}" connections (sub-nodes such as AI models or tools)`,
          action: 'Rebuild this part with http or code nodes.',
        });
        continue;
      }
      (Array.isArray(outputs) ? outputs : []).forEach((targets, output) => {
        for (const t of Array.isArray(targets) ? targets : []) {
          if (!isRecord(t) || typeof t.node !== 'string') continue;
          if (!idByName.has(t.node)) {
            warnings.push({ node: source, message: `A connection to "${t.node}", which is not in the workflow, was ignored.` });
            continue;
          }
          conns.push({ source, output, target: t.node, input: typeof t.index === 'number' ? t.index : 0 });
        }
      });
    }
  }

  const scopeFor = (node: ExtNode, batch: JsBatch): ExpressionScope => ({
    idOf: (n) => idByName.get(n),
    counted: () => translated++,
    note: (message) => {
      if (!warnings.some((w) => w.node === node.name && w.message === `Expression: ${message}.`))
        warnings.push({ node: node.name, message: `Expression: ${message}.` });
    },
    js: (template, mode) => batch.add(template, mode),
  });
  const nameById = new Map([...idByName].map(([n, id]) => [id, n]));
  /** Registers the credential `node` uses under its alias (its name in the export) and returns the alias. */
  const registerCredential = (node: ExtNode, extflowType: string, type: string | null): string => {
    const cred = node.credentials?.[extflowType] ?? Object.values(node.credentials ?? {})[0];
    const alias = (cred?.name ?? extflowType).trim().slice(0, 200) || extflowType;
    const entry = credentials.get(alias) ?? { alias, extflowType, type, nodes: [] };
    // A node mapped again (per item, in a loop) registers its credential again: listed once.
    if (!entry.nodes.includes(node.name)) entry.nodes.push(node.name);
    credentials.set(alias, entry);
    return alias;
  };

  const mapped = new Map<string, Mapped>();
  /**
   * Maps one exported node: `one` takes one item's JSON, `perItem` maps it over the item list in
   * JSONata (If, Filter, Switch, Set), `loop` runs its one-item mapping once per item in an engine
   * loop (itemWiring.ts, perItemLoop).
   */
  const mapOne = (node: ExtNode, mode: 'one' | 'perItem' | 'loop' = 'one'): Mapped => {
    const outputId = idByName.get(node.name)!;
    // In a loop the node's own mapping is the loop's body; `outputId` is then the loop's items.
    const id = mode === 'loop' ? `${outputId.slice(0, 90)}__run` : outputId;
    const params = isRecord(node.parameters) ? node.parameters : {};
    const version = typeof node.typeVersion === 'number' ? node.typeVersion : 1;
    const position =
      Array.isArray(node.position) && node.position.length === 2 && node.position.every((x) => typeof x === 'number')
        ? { x: node.position[0], y: node.position[1] }
        : undefined;
    const batch = new JsBatch(id, (n) => idByName.get(n));
    const ctx: MapContext = {
      node,
      params,
      version,
      id,
      position,
      scope: scopeFor(node, batch),
      inputs: conns.filter((c) => c.target === node.name).map((c) => ({ sourceId: idByName.get(c.source)!, inputIndex: c.input })),
      connectedOutputs: new Set(conns.filter((c) => c.source === node.name).map((c) => c.output)),
      timezone,
      warn: (message) => warnings.push({ node: node.name, message }),
      lossy: (kind, message) => readinessIssues.push({ node: node.name, kind, message }),
      credential: (extflowType, type) => registerCredential(node, extflowType, type),
      subworkflow: (reference) => subworkflows.push({ node: node.name, reference }),
      ...(mode === 'perItem' ? { perItem: true } : {}),
      ...(mode === 'loop' ? { itemLoop: true } : {}),
      subNodes: aiLinks.byRoot.get(node.name) ?? [],
      subCredential: registerCredential,
      unsupportedSub: (sub, reason, action) => {
        if (!unsupported.some((u) => u.node === sub.name)) unsupported.push({ node: sub.name, nodeType: sub.type, reason, action });
      },
    };
    const mapper = MAPPERS[node.type];
    let result: Mapped;
    try {
      if (!mapper) {
        throw new Unsupported(
          `node type "${node.type}" has no equivalent here`,
          node.type.includes('langchain')
            ? 'Call the model or tool with an http node (or a code node) instead.'
            : "Replace it with an http node calling the service's API (with a credential), or a code node.",
        );
      }
      result = mapper(ctx);
      if (!result.nodes.some((n) => n.id === id)) throw new Error(`mapper of ${node.type} produced no node "${id}"`);
      if (batch.size > 0) result = withJsExpressions(ctx, result, batch, { id: sourceWorkflowId, name }, nameById);
    } catch (err) {
      if (!(err instanceof Unsupported)) throw err;
      unsupported.push({ node: node.name, nodeType: node.type, reason: err.reason, action: err.action });
      // Its sub-nodes are not part of any node now: each is named too.
      for (const sub of ctx.subNodes)
        ctx.unsupportedSub(sub.node, `it belongs to "${node.name}", which is not converted`, `Convert "${node.name}" first.`);
      const placeholder: GraphNode = {
        id,
        type: `${PLACEHOLDER_PREFIX}${node.type}`,
        name: node.name,
        config: { extflowType: node.type, typeVersion: version, parameters: params, reason: err.reason, action: err.action },
      };
      if (position) placeholder.position = position;
      result = { nodes: [placeholder], output: (i) => ({ source: id, ...(i > 0 ? { handle: `output${i}` } : {}) }), regularOutputs: 99 };
    }
    // Node settings shared by every family.
    const errorSource = result.errorSource ?? id;
    for (const n of result.nodes) {
      if (node.disabled === true) n.disabled = true;
      if (n.id === errorSource && (n.type === 'http' || n.type === 'code' || n.type === 'llm') && node.retryOnFail === true) {
        n.retry = {
          maxAttempts: Math.min(10, Math.max(1, Number(node.maxTries ?? 3))),
          backoffSeconds: Math.min(3600, Math.max(0, Number(node.waitBetweenTries ?? 1000) / 1000)),
        };
      }
    }
    const onError = node.onError ?? (node.continueOnFail ? 'continueRegularOutput' : undefined);
    const carrier = result.nodes.find((n) => n.id === errorSource);
    if (carrier && onError === 'continueErrorOutput') carrier.onError = 'branch';
    // Item nodes answer a failure with the tool's error item themselves (itemRuntime.ts).
    else if (carrier && onError === 'continueRegularOutput' && result.items === undefined) carrier.onError = 'continue';
    if (node.alwaysOutputData === true && result.items === undefined && result.nodes.some((n) => MAY_OUTPUT_NOTHING.has(n.type))) {
      readinessIssues.push({
        node: node.name,
        kind: 'unsupportedOption',
        message: '"Always output data" is not carried over for this node: when it outputs no item, the nodes after it do not run.',
      });
    }
    if (node.disabled === true && result.nodes.some((n) => n.type === 'condition' || n.type === 'switch')) {
      warnings.push({
        node: node.name,
        message: 'A disabled branching node passes nothing on here (the external tool passes the input to its first output).',
      });
    }
    if (mode !== 'loop' || result.nodes.some((n) => n.type.startsWith(PLACEHOLDER_PREFIX))) return result;
    const loop = perItemLoop(
      (nodeId, type, config, offset) => ourNode(ctx, nodeId, type, config, offset),
      outputId,
      { ...result, innerId: id },
      { splitArrays: result.splitsArrays === true, maxIterations: MAX_LOOP_ITERATIONS },
    );
    return { nodes: loop.nodes, edges: loop.edges, entry: loop.entry, items: result.splitsArrays ? 'many' : 'same', takesItems: true };
  };
  const mappingStart = { u: unsupported.length, w: warnings.length, r: readinessIssues.length };
  // AI sub-nodes (chat models, memories, tools) are read by the node they belong to, not mapped.
  for (const node of nodes) if (!aiLinks.subNodes.has(node.name)) mapped.set(node.name, mapOne(node));

  // Nodes that run per item where an input may carry several items (docs/migrating.md, "Items"):
  // mapped again, over the item list in JSONata where the node allows it, else its one-item
  // mapping in a loop; a node that can be neither keeps its one-item mapping.
  const sourcesOf = (name: string) => conns.filter((c) => c.target === name).map((c) => c.source);
  const perItemDone = new Set<string>();
  const modesOf = (node: ExtNode): Array<'perItem' | 'loop'> => {
    const modes: Array<'perItem' | 'loop'> = PER_ITEM_TYPES.has(node.type) ? ['perItem'] : [];
    const onError = node.onError ?? (node.continueOnFail ? 'continueRegularOutput' : undefined);
    // A loop's body has no way out but its one output: an error output stays one-item.
    if (LOOP_PER_ITEM_TYPES.has(node.type) && node.disabled !== true && onError !== 'continueErrorOutput') modes.push('loop');
    return modes;
  };
  for (let changed = true; changed;) {
    changed = false;
    const several = mayReturnSeveral(new Map([...mapped].map(([name, m]) => [name, m.items])), sourcesOf);
    for (const node of nodes) {
      if (perItemDone.has(node.name) || node.executeOnce === true) continue;
      const modes = modesOf(node);
      if (modes.length === 0 || !sourcesOf(node.name).some((s) => several.has(s))) continue;
      perItemDone.add(node.name);
      for (const mode of modes) {
        const before = { u: unsupported.length, w: warnings.length, r: readinessIssues.length, t: translated };
        const result = mapOne(node, mode);
        if (unsupported.length > before.u) {
          unsupported.length = before.u;
          warnings.length = before.w;
          readinessIssues.length = before.r;
          translated = before.t;
          continue;
        }
        // What the one-item mapping said of this node is replaced by what this one says.
        const fresh = { w: warnings.splice(before.w), r: readinessIssues.splice(before.r) };
        translated = before.t;
        const others = <T extends { node: string }>(list: T[], from: number) => list.filter((e, i) => i < from || e.node !== node.name);
        unsupported.splice(0, unsupported.length, ...others(unsupported, mappingStart.u));
        warnings.splice(0, warnings.length, ...others(warnings, mappingStart.w), ...fresh.w);
        readinessIssues.splice(0, readinessIssues.length, ...others(readinessIssues, mappingStart.r), ...fresh.r);
        mapped.set(node.name, result);
        changed = true;
        break;
      }
    }
  }
  const out: GraphNode[] = [...mapped.values()].flatMap((m) => m.nodes);

  // Edges: inside each mapping a chain, then the connections.
  const edges: GraphEdge[] = [];
  const addEdge = (source: string, target: string, handle?: string) => {
    const e: GraphEdge = { id: `e${edges.length + 1}`, source, target };
    if (handle !== undefined) e.sourceHandle = handle;
    edges.push(e);
  };
  for (const m of mapped.values()) {
    if (m.edges) {
      for (const e of m.edges) {
        if (!e.loop) addEdge(e.source, e.target, e.handle);
        else
          edges.push({
            id: `e${edges.length + 1}`,
            source: e.source,
            target: e.target,
            loop: true,
            ...(e.maxIterations ? { maxIterations: e.maxIterations } : {}),
          });
      }
      continue;
    }
    let previous: GraphNode | undefined;
    for (const node of m.nodes) {
      if (previous) addEdge(previous.id, node.id);
      previous = node;
    }
  }

  // Item lists meet nodes that take one item (docs/migrating.md, "Items").
  const nodeByName = new Map(nodes.map((n) => [n.name, n]));
  const several = mayReturnSeveral(new Map([...mapped].map(([name, m]) => [name, m.items])), (name) =>
    conns.filter((c) => c.target === name).map((c) => c.source),
  );
  const adapters = new Map<string, OutputRef>();
  let adapterCount = 0;
  const oneItemFrom = (ref: OutputRef, source: string, target: string): OutputRef => {
    const firstOnly = nodeByName.get(target)?.executeOnce === true;
    const key = `${ref.source}|${ref.handle ?? ''}|${target}`;
    const known = adapters.get(key);
    if (known) return known;
    const k = ++adapterCount;
    const sourceId = idByName.get(source)!;
    const ids = { any: `${sourceId.slice(0, 80)}__any${k}`, one: `${sourceId.slice(0, 80)}__one${k}` };
    const at = mapped.get(source)!.nodes.find((n) => n.id === ref.source)?.position;
    out.push(...oneItemAdapter(ids, { source, target }, firstOnly, at));
    addEdge(ref.source, ids.any, ref.handle);
    addEdge(ids.any, ids.one, 'true');
    if (several.has(source) && !firstOnly) {
      readinessIssues.push({
        node: target,
        kind: 'lossyConversion',
        message: `"${source}" may pass several items on: the external tool runs this node once per item, here it takes one item and fails when several arrive (or turn on "execute once" to take the first).`,
      });
    }
    const adapted = { source: ids.one };
    adapters.set(key, adapted);
    return adapted;
  };
  const errorItems = new Map<string, OutputRef>();
  const errorItemsOf = (source: string, ref: OutputRef): OutputRef => {
    const known = errorItems.get(source);
    if (known) return known;
    const id = `${idByName.get(source)!.slice(0, 90)}__error`;
    const carrier = mapped.get(source)!.nodes.find((n) => n.id === ref.source);
    out.push(errorItemNode(id, source, carrier?.position));
    addEdge(ref.source, id, ref.handle);
    errorItems.set(source, { source: id });
    return { source: id };
  };

  const loopBacks = loopBackConnections(nodes, conns);
  const incoming = new Map<string, Array<{ ref: OutputRef; loop: boolean }>>();
  for (const c of conns) {
    const src = mapped.get(c.source)!;
    const srcNode = nodes.find((n) => n.name === c.source)!;
    const onError = srcNode.onError ?? (srcNode.continueOnFail ? 'continueRegularOutput' : undefined);
    const regular = src.regularOutputs ?? 1;
    let ref: OutputRef | null;
    if (onError === 'continueErrorOutput' && c.output === regular)
      ref = { source: src.errorSource ?? idByName.get(c.source)!, handle: 'error' };
    else ref = src.output ? src.output(c.output) : c.output === 0 ? { source: idByName.get(c.source)! } : null;
    if (!ref) {
      if (!unsupported.some((u) => u.node === c.source)) {
        unsupported.push({
          node: c.source,
          nodeType: srcNode.type,
          reason: `output ${c.output + 1} (to "${c.target}") has no equivalent`,
          action: "Connect the node's first output only, or rebuild the branch.",
        });
      }
      continue;
    }
    if (src.items !== undefined && ref.handle === 'error') ref = errorItemsOf(c.source, ref);
    const target = mapped.get(c.target)!;
    const placeholder = target.nodes.some((n) => n.type.startsWith(PLACEHOLDER_PREFIX));
    const takesItems = target.takesItems ?? target.items !== undefined;
    if (src.items !== undefined && !takesItems && !placeholder) ref = oneItemFrom(ref, c.source, c.target);
    const list = incoming.get(c.target) ?? [];
    list.push({ ref, loop: loopBacks.has(c) });
    incoming.set(c.target, list);
  }
  for (const [targetName, all] of incoming) {
    const target = mapped.get(targetName)!;
    const entry = target.entry ?? target.nodes[0]?.id;
    const entryNode = target.nodes.find((n) => n.id === entry)!;
    const list = all.filter((i) => !i.loop);
    const backs = all.filter((i) => i.loop);
    if (backs.length > 1 && entryNode.type !== 'merge') {
      unsupported.push({
        node: targetName,
        nodeType: nodes.find((n) => n.name === targetName)!.type,
        reason: `${backs.length} connections loop back into this node; a loop here comes back through one`,
        action: 'Join the branches that loop back in a Merge node (or a No-Op) and connect it back once.',
      });
    }
    for (const { ref } of backs) {
      // Loop Over Items ends by itself when its items run out; any other loop at the engine's default bound.
      const e: GraphEdge = { id: `e${edges.length + 1}`, source: ref.source, target: entryNode.id, loop: true };
      if (ref.handle !== undefined) e.sourceHandle = ref.handle;
      if (entryNode.type === 'loop') e.maxIterations = MAX_LOOP_ITERATIONS;
      else
        warnings.push({
          node: targetName,
          message: `A connection loops back here: the loop runs at most ${DEFAULT_LOOP_ITERATIONS} times, then the run fails.`,
        });
      edges.push(e);
    }
    if (list.length > 1 && entryNode.type !== 'merge') {
      // Only merge nodes take several inputs: a merge of the live branches, then the first of them.
      const id = idByName.get(targetName)!;
      const joinId = `${id}__in`;
      const pickId = `${id}__pick`;
      const pos = entryNode.position ? { x: entryNode.position.x - 80, y: entryNode.position.y } : undefined;
      out.push({ id: joinId, type: 'merge', name: `${targetName} (inputs)`, config: {}, ...(pos ? { position: pos } : {}) });
      out.push({
        id: pickId,
        type: 'transform',
        name: `${targetName} (first live input)`,
        config: { expression: '$lookup($, $keys($)[0])' },
        ...(pos ? { position: { x: pos.x + 40, y: pos.y } } : {}),
      });
      for (const { ref } of list) addEdge(ref.source, joinId, ref.handle);
      addEdge(joinId, pickId);
      addEdge(pickId, entryNode.id);
      warnings.push({
        node: targetName,
        message: `${list.length} connections arrive here: the node runs once, after every live branch, with the first live branch's data (exact when the branches exclude each other, as the outputs of an If or Switch do).`,
      });
    } else {
      for (const { ref } of list) addEdge(ref.source, entryNode.id, ref.handle);
    }
  }

  const listIds = new Map([...mapped].filter(([, m]) => m.items !== undefined).map(([name]) => [idByName.get(name)!, name]));
  // The nodes of a per-item loop's body (`<id>__run…`) read the items paired with the loop's current one.
  const loopHeads = [...mapped]
    .filter(([name, m]) => m.nodes.some((n) => n.id === `${idByName.get(name)!}__each` && n.type === 'loop') && m.takesItems)
    .map(([name]) => idByName.get(name)!);
  const pairedIndexOf = (nodeId: string) => {
    const head = loopHeads.find((h) => nodeId.startsWith(`${h}__run`));
    return head === undefined ? undefined : `${nodeRef(`${head}__each`)}.pairedItem.item`;
  };
  for (const [id, users] of rewriteListRefs(out, new Set(listIds.keys()), pairedIndexOf)) {
    const name = listIds.get(id)!;
    if (!several.has(name)) continue;
    for (const user of users) {
      readinessIssues.push({
        node: out.find((n) => n.id === user)?.name ?? user,
        kind: 'lossyConversion',
        message: `An expression reads "${name}", which may output several items: here it reads the first item, where the external tool reads the item paired with the current one.`,
      });
    }
  }

  const pins = pinnedDataOf(wf, (n) => idByName.get(n), warnings);
  if (wf.settings && typeof wf.settings.errorWorkflow === 'string' && wf.settings.errorWorkflow) {
    warnings.push({
      node: '(workflow)',
      message: 'The error workflow setting is not imported: use onError on the nodes, or watch failed runs.',
    });
  }

  const report = validateGraph({ nodes: out, edges });
  for (const e of report.errors) {
    if (e.code === 'cycle')
      unsupported.push({
        node: '(workflow)',
        nodeType: '(connections)',
        reason: `the connections form a loop the engine cannot run: ${e.message}`,
        action: 'Make the loop come back into one node through one connection, or process lists in a code node.',
      });
  }
  const connections: Record<string, string> = {};
  for (const c of credentials.values()) connections[c.alias] = c.type ?? c.extflowType;

  return {
    externalId,
    name: name.slice(0, 200),
    description: `Imported from the external workflow tool${sourceWorkflowId ? ` (workflow ${sourceWorkflowId})` : ''}.`,
    nodes: out,
    edges,
    connections,
    conversion: {
      source: 'extflow',
      sourceWorkflowId,
      externalId,
      ready: unsupported.length === 0 && readinessIssues.length === 0 && report.valid,
      nodeCount: nodes.length,
      mappedNodes: nodes.length - new Set(unsupported.filter((u) => u.nodeType !== '(connections)').map((u) => u.node)).size,
      translatedExpressions: translated,
      unsupported,
      readinessIssues,
      warnings,
      credentials: [...credentials.values()],
      subworkflows,
      pinnedData: pins.report,
    },
    pinned: pins.pinned,
  };
}
