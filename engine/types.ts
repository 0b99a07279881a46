/**
 * The workflow graph contract shared by validation, the Temporal interpreter, dry runs and
 * the API. Pure types: workflow code imports this module.
 */

/** `ci`: started by a destination's CI source (configure-source) for each new matching build. */
export const TRIGGER_TYPES = ['start', 'webhook', 'schedule', 'ci'] as const;
export const FLOW_TYPES = ['condition', 'switch', 'transform', 'merge', 'wait', 'approval', 'event', 'response', 'subworkflow', 'fail', 'log'] as const;
export const ACTION_TYPES = ['http', 'code', 'table_read', 'table_insert', 'table_update', 'table_delete'] as const;
/** Action nodes on the workspace's user tables (services/databases). */
export const TABLE_NODE_TYPES = ['table_read', 'table_insert', 'table_update', 'table_delete'] as const;
export type TableNodeType = (typeof TABLE_NODE_TYPES)[number];
export const NODE_TYPES = [...TRIGGER_TYPES, ...FLOW_TYPES, ...ACTION_TYPES] as const;

export type TriggerType = (typeof TRIGGER_TYPES)[number];
export type NodeType = (typeof NODE_TYPES)[number];

export type OnError = 'stop' | 'continue' | 'branch';

export interface NodeRetry {
  /** Total attempts including the first (1 = no retry). */
  maxAttempts: number;
  /** Delay before the second attempt; later attempts double it. */
  backoffSeconds: number;
}

export interface GraphNode {
  id: string;
  type: string;
  name?: string;
  config: Record<string, unknown>;
  position?: { x: number; y: number };
  disabled?: boolean;
  retry?: NodeRetry;
  onError?: OnError;
}

export interface GraphEdge {
  id?: string;
  source: string;
  target: string;
  /** Which output of the source this edge leaves from: `true`/`false`, a switch case handle, `default`, `approved`/`rejected`, `error`. */
  sourceHandle?: string;
}

export interface WorkflowGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

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
