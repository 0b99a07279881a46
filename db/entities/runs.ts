import { EntitySchema } from '@mikro-orm/core';
import type { WorkflowGraph } from '../../engine/types';

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'canceled'];

export const RUN_TRIGGERS = ['manual', 'webhook', 'schedule', 'copilot', 'api', 'email', 'rss'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

export const STEP_STATUSES = ['running', 'waiting', 'succeeded', 'failed', 'skipped', 'canceled'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** An active durable wait of a run, as stored; the API turns event tokens into resume URLs. */
export interface StoredWait {
  kind: 'timer' | 'approval' | 'event';
  nodeId: string;
  since: string;
  until?: string;
  expiresAt?: string;
  prompt?: string;
  /** Event waits only: the single-use resume token (never shown except as resumeUrl). */
  token?: string;
}

export interface ExecutionEvidence {
  requestedTarget: 'active' | 'candidate';
  versionId: string | null;
  resourceMode: 'simulated' | 'workspace-live';
  reviewIdentity: string | null;
}

/** The destination a live run executes (`run.executionTarget`). */
export interface RunExecutionTarget {
  targetId: string;
  kind: 'production' | 'preview';
  name: string;
  activationId: string;
  generation: number;
}

export interface Run {
  id: string;
  workspaceId: string;
  workflowId: string;
  versionId: string | null;
  workflowName: string;
  trigger: RunTrigger;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: string | null;
  errorNodeId: string | null;
  startNodeId: string | null;
  dryRun: boolean;
  executionEvidence: ExecutionEvidence;
  waits: StoredWait[];
  /** The graph the run executes when it is not a deployed version (candidate runs). */
  graphSnapshot: WorkflowGraph | null;
  parentRunId: string | null;
  parentNodeId: string | null;
  costCredits: number;
  cancelReason: string | null;
  createdByKeyId: string | null;
  createdByUserId: string | null;
  /** The end user an end-user gateway key ran this for (`endUser.externalId`); null for every other run. */
  endUserExternalId: string | null;
  /** Live runs of a named destination. */
  executionTarget: RunExecutionTarget | null;
  /** Simulations that selected a destination (they run its candidate). */
  simulationTargetId: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface RunStep {
  /** `${runId}:${nodeId}`: a node runs at most once per run, so writes are idempotent upserts. */
  id: string;
  runId: string;
  workspaceId: string;
  nodeId: string;
  nodeType: string;
  nodeName: string | null;
  seq: number;
  status: StepStatus;
  attempts: number;
  input: unknown;
  output: unknown;
  error: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
}

export interface RunLog {
  /** `${runId}:${seq}`: replayed writes of the same log are no-ops. */
  id: string;
  runId: string;
  workspaceId: string;
  seq: number;
  nodeId: string | null;
  level: LogLevel;
  message: string;
  data: unknown;
  createdAt: Date;
}

export interface ResumeToken {
  id: string;
  token: string;
  workspaceId: string;
  runId: string;
  nodeId: string;
  createdAt: Date;
  expiresAt: Date | null;
  usedAt: Date | null;
}

const ts = (fieldName: string, nullable = false) => ({ type: 'Date', fieldName, columnType: 'timestamptz', nullable }) as const;

export const RunSchema = new EntitySchema<Run>({
  name: 'Run',
  tableName: 'runs',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true },
    workflowId: { type: 'string', fieldName: 'workflow_id' },
    versionId: { type: 'string', fieldName: 'version_id', nullable: true },
    workflowName: { type: 'string', fieldName: 'workflow_name' },
    trigger: { type: 'string' },
    status: { type: 'string' },
    input: { type: 'json', nullable: true },
    output: { type: 'json', nullable: true },
    error: { type: 'text', nullable: true },
    errorNodeId: { type: 'string', fieldName: 'error_node_id', nullable: true },
    startNodeId: { type: 'string', fieldName: 'start_node_id', nullable: true },
    dryRun: { type: 'boolean', fieldName: 'dry_run' },
    executionEvidence: { type: 'json', fieldName: 'execution_evidence' },
    waits: { type: 'json' },
    graphSnapshot: { type: 'json', fieldName: 'graph_snapshot', nullable: true },
    parentRunId: { type: 'string', fieldName: 'parent_run_id', nullable: true },
    parentNodeId: { type: 'string', fieldName: 'parent_node_id', nullable: true },
    costCredits: { type: 'double', fieldName: 'cost_credits' },
    cancelReason: { type: 'text', fieldName: 'cancel_reason', nullable: true },
    createdByKeyId: { type: 'string', fieldName: 'created_by_key_id', nullable: true },
    createdByUserId: { type: 'string', fieldName: 'created_by_user_id', nullable: true },
    endUserExternalId: { type: 'string', fieldName: 'end_user_external_id', nullable: true },
    executionTarget: { type: 'json', fieldName: 'execution_target', nullable: true },
    simulationTargetId: { type: 'string', fieldName: 'simulation_target_id', nullable: true },
    startedAt: ts('started_at', true),
    finishedAt: ts('finished_at', true),
    durationMs: { type: 'integer', fieldName: 'duration_ms', nullable: true },
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});

export const RunStepSchema = new EntitySchema<RunStep>({
  name: 'RunStep',
  tableName: 'run_steps',
  properties: {
    id: { type: 'string', primary: true },
    runId: { kind: 'm:1', entity: 'Run', fieldName: 'run_id', mapToPk: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    nodeId: { type: 'string', fieldName: 'node_id' },
    nodeType: { type: 'string', fieldName: 'node_type' },
    nodeName: { type: 'string', fieldName: 'node_name', nullable: true },
    seq: { type: 'integer' },
    status: { type: 'string' },
    attempts: { type: 'integer' },
    input: { type: 'json', nullable: true },
    output: { type: 'json', nullable: true },
    error: { type: 'text', nullable: true },
    startedAt: ts('started_at', true),
    finishedAt: ts('finished_at', true),
    durationMs: { type: 'integer', fieldName: 'duration_ms', nullable: true },
  },
});

export const RunLogSchema = new EntitySchema<RunLog>({
  name: 'RunLog',
  tableName: 'run_logs',
  properties: {
    id: { type: 'string', primary: true },
    runId: { kind: 'm:1', entity: 'Run', fieldName: 'run_id', mapToPk: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    seq: { type: 'integer' },
    nodeId: { type: 'string', fieldName: 'node_id', nullable: true },
    level: { type: 'string' },
    message: { type: 'text' },
    data: { type: 'json', nullable: true },
    createdAt: ts('created_at'),
  },
});

export const ResumeTokenSchema = new EntitySchema<ResumeToken>({
  name: 'ResumeToken',
  tableName: 'resume_tokens',
  properties: {
    id: { type: 'string', primary: true },
    token: { type: 'string', unique: true, hidden: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    runId: { kind: 'm:1', entity: 'Run', fieldName: 'run_id', mapToPk: true },
    nodeId: { type: 'string', fieldName: 'node_id' },
    createdAt: ts('created_at'),
    expiresAt: ts('expires_at', true),
    usedAt: ts('used_at', true),
  },
});
