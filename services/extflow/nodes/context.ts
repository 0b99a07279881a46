/**
 * What a node mapper sees and returns. Every mapper turns one exported node into one or more
 * of our nodes; the node whose id is `ctx.id` is the exported node's output (what `$nodes.<id>`
 * and translated `$('Name').item.json` read), and incoming connections go to `entry`.
 */
import type { GraphNode } from '../../../engine/types';
import type { ExpressionScope } from '../expressions';
import type { ItemCount } from '../itemWiring';
import type { ExtNode } from '../types';

export interface MapContext {
  node: ExtNode;
  params: Record<string, unknown>;
  version: number;
  /** Our id of the node's output. */
  id: string;
  position: { x: number; y: number } | undefined;
  scope: ExpressionScope;
  /** The exported node's incoming main connections: our id of each source's output and the input index. */
  inputs: Array<{ sourceId: string; inputIndex: number }>;
  /** Output indexes that have connections. */
  connectedOutputs: Set<number>;
  /** The workflow's time zone (settings.timezone), when it has one. */
  timezone: string | undefined;
  warn(message: string): void;
  /**
   * Names something the conversion leaves out (`unsupportedOption`) or does not keep exactly
   * (`lossyConversion`): the workflow is not ready, though the node maps.
   */
  lossy(kind: 'unsupportedOption' | 'lossyConversion', message: string): void;
  /** Registers the credential the node uses under its alias (its name in the export) and returns the alias. */
  credential(extflowType: string, type: string | null): string;
  /** Registers a subworkflow reference (an externalId). */
  subworkflow(reference: string): void;
  /**
   * Set when an input may carry several items: the node is mapped to run per item over the item
   * list (If, Filter, Switch, Set), its expressions evaluated for each item (JSONata only).
   */
  perItem?: boolean;
  /**
   * Set when the node's one-item mapping is run once per item inside an engine loop
   * (itemWiring.ts, `perItemLoop`): `id` is then the inner node's id, not the node's output.
   */
  itemLoop?: boolean;
  /** The sub-nodes connected to this node by the external tool's AI connections (`ai_languageModel`, `ai_tool`…), in export order. */
  subNodes: AiSubNode[];
  /** Registers the credential a sub-node uses (as `credential` does for the node itself); returns its alias. */
  subCredential(sub: ExtNode, extflowType: string, type: string | null): string;
  /** Names a sub-node that has no equivalent here, with the reason and what to do: the workflow is not ready. */
  unsupportedSub(sub: ExtNode, reason: string, action: string): void;
}

/** A sub-node and the AI connection type it is connected by (`ai_languageModel`, `ai_memory`, `ai_tool`, `ai_outputParser`…). */
export interface AiSubNode {
  type: string;
  node: ExtNode;
}

export interface OutputRef {
  source: string;
  handle?: string;
}

export interface Mapped {
  nodes: GraphNode[];
  /** The edges between `nodes`; default a line through them in their order, without handles. */
  edges?: Array<{ source: string; target: string; handle?: string; loop?: true; maxIterations?: number }>;
  /** Where incoming edges go; default the first node. */
  entry?: string;
  /** The node and handle an output index leaves from; default: output 0 from `ctx.id`, others unsupported. */
  output?(index: number): OutputRef | null;
  /** How many regular outputs the node has (its error output, if any, comes next). Default 1. */
  regularOutputs?: number;
  /** The node that carries onError (default `ctx.id`). */
  errorSource?: string;
  /** Whether the external tool makes an answer that is a JSON array of objects that many items (HTTP Request). */
  splitsArrays?: boolean;
  /**
   * Set when the node takes and returns the external tool's item list (services/extflow/itemRuntime.ts):
   * how many items it returns for its input. Unset: the node takes and returns one item's JSON.
   */
  items?: ItemCount;
  /** Whether the node's entry takes an item list (default: when `items` is set). */
  takesItems?: boolean;
}

export type Mapper = (ctx: MapContext) => Mapped;

/** The scope of a per-item mapping: JavaScript expressions are evaluated once per node run, not per item, so none. */
export function perItemScope(ctx: MapContext): ExpressionScope {
  return { ...ctx.scope, js: undefined };
}

export const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A node of ours at the exported node's position (aux nodes are nudged so they do not overlap). */
export function ourNode(ctx: MapContext, id: string, type: string, config: Record<string, unknown>, offset = 0): GraphNode {
  const node: GraphNode = { id, type, name: offset === 0 ? ctx.node.name : `${ctx.node.name} (${type})`, config };
  if (ctx.position) node.position = { x: ctx.position.x + offset * 40, y: ctx.position.y + offset * 40 };
  return node;
}

/** The resource-locator shape (`{ __rl, value, mode }`) or a plain value, as a string. */
export function locatorValue(v: unknown): string | undefined {
  if (isRecord(v) && '__rl' in v) v = v.value;
  if (typeof v === 'number') return String(v);
  return typeof v === 'string' && v !== '' ? v : undefined;
}
