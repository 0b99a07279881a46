/**
 * The workflow graph contract shared by validation, the Temporal interpreter, dry runs and
 * the API. Pure types: workflow code imports this module.
 */
import type { z } from 'zod';
import type { edgeSchema, graphSchema, nodeSchema } from './nodes';

/** `ci`: started by a destination's CI source (configure-source) for each new matching build. */
export const TRIGGER_TYPES = ['start', 'webhook', 'schedule', 'ci'] as const;
export const FLOW_TYPES = [
  'condition',
  'switch',
  'transform',
  'merge',
  'loop',
  'wait',
  'approval',
  'event',
  'response',
  'subworkflow',
  'fail',
  'log',
] as const;
export const ACTION_TYPES = ['http', 'code', 'table_read', 'table_insert', 'table_update', 'table_delete', 'llm'] as const;
/** Action nodes on the workspace's user tables (services/databases). */
export const TABLE_NODE_TYPES = ['table_read', 'table_insert', 'table_update', 'table_delete'] as const;
export type TableNodeType = (typeof TABLE_NODE_TYPES)[number];
export const NODE_TYPES = [...TRIGGER_TYPES, ...FLOW_TYPES, ...ACTION_TYPES] as const;

export type TriggerType = (typeof TRIGGER_TYPES)[number];
export type NodeType = (typeof NODE_TYPES)[number];

// The node, edge and graph shapes are declared once, as the zod schemas of engine/nodes.ts
// (`graphSchema`); these are their parsed types. A type-only import: workflow code, which
// imports this module, does not load zod or the node catalogue.

/** A node of a workflow graph: `nodeSchema`'s output. */
export type GraphNode = z.output<typeof nodeSchema>;
/**
 * An edge; `sourceHandle` is which output of the source it leaves from: `true`/`false`, a switch case handle, `default`,
 * `approved`/`rejected`, `loop`/`done`, `error`. `loop: true` marks a loop-back edge (docs/workflow-graph.md, "Loops").
 */
export type GraphEdge = z.output<typeof edgeSchema>;
/** The graph a workflow stores and runs: `graphSchema`'s output. */
export type WorkflowGraph = z.output<typeof graphSchema>;

export type OnError = NonNullable<GraphNode['onError']>;

/** `maxAttempts`: total attempts including the first (1 = no retry); `backoffSeconds`: delay before the second attempt, later attempts double it. */
export type NodeRetry = NonNullable<GraphNode['retry']>;

/** One problem found by validation. `nodeId` is absent for graph-wide problems (e.g. no trigger). */
export interface ValidationIssue {
  nodeId?: string;
  edgeId?: string;
  code:
    | 'unknown_type'
    | 'invalid_config'
    | 'duplicate_node_id'
    | 'dangling_edge'
    | 'invalid_handle'
    | 'unreachable_node'
    | 'no_trigger'
    | 'invalid_expression'
    | 'cycle'
    | 'multiple_inputs';
  message: string;
  severity: 'error' | 'warning';
}

export interface ValidationReport {
  valid: boolean;
  errors: ValidationIssue[];
  warnings: ValidationIssue[];
  nodeCount: number;
  edgeCount: number;
}
