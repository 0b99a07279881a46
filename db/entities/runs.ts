import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, executionSpan, HIDDEN, references, timestamps, timestamptz } from './columns';
import { workspaceOwned } from './workspaces';
import type { WorkflowGraph } from '../../engine/types';
import type { RunStatus, RunTrigger, StepStatus, LogLevel } from '../../engine/statuses';
export type { RunStatus, RunTrigger, StepStatus, LogLevel } from '../../engine/statuses';

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

export const RunSchema = entity('Run', 'runs', {
  ...workspaceOwned(),
  workflowId: p.string(),
  versionId: p.string().nullable(),
  workflowName: p.string(),
  trigger: p.string().$type<RunTrigger>(),
  status: p.string().$type<RunStatus>(),
  input: p.json<unknown>().nullable(),
  output: p.json<unknown>().nullable(),
  error: p.text().nullable(),
  errorNodeId: p.string().nullable(),
  startNodeId: p.string().nullable(),
  dryRun: p.boolean(),
  executionEvidence: p.json<ExecutionEvidence>(),
  waits: p.json<StoredWait[]>(),
  /** The graph the run executes when it is not a deployed version (candidate runs). */
  graphSnapshot: p.json<WorkflowGraph>().nullable(),
  parentRunId: p.string().nullable(),
  parentNodeId: p.string().nullable(),
  costCredits: p.double().$type<number>(),
  cancelReason: p.text().nullable(),
  createdByKeyId: p.string().nullable(),
  createdByUserId: p.string().nullable(),
  /** The end user an end-user gateway key ran this for (`endUser.externalId`); null for every other run. */
  endUserExternalId: p.string().nullable(),
  /** Live runs of a named destination. */
  executionTarget: p.json<RunExecutionTarget>().nullable(),
  /** Simulations that selected a destination (they run its candidate). */
  simulationTargetId: p.string().nullable(),
  ...executionSpan(),
  durationMs: p.integer().nullable(),
  ...timestamps(),
});
export type Run = InferEntity<typeof RunSchema>;

/** The key of a run's rows (steps, logs): their id, the run's and its workspace's. */
const runOwned = () => ({
  id: p.string().primary(),
  runId: references(RunSchema, 'run_id'),
  workspaceId: p.string(),
});

export const RunStepSchema = entity('RunStep', 'run_steps', {
  /**
   * The id is `${runId}:${nodeId}` for a node's first iteration and `${runId}:${nodeId}#${iteration}`
   * for later ones (loops): one row per node and iteration, so writes are idempotent upserts.
   */
  ...runOwned(),
  nodeId: p.string(),
  /** Which run of the node in a loop (0: the first, or a node outside loops). */
  iteration: p.integer().default(0),
  nodeType: p.string(),
  nodeName: p.string().nullable(),
  seq: p.integer(),
  status: p.string().$type<StepStatus>(),
  attempts: p.integer(),
  input: p.json<unknown>().nullable(),
  output: p.json<unknown>().nullable(),
  error: p.text().nullable(),
  ...executionSpan(),
  durationMs: p.integer().nullable(),
});
export type RunStep = InferEntity<typeof RunStepSchema>;

export const RunLogSchema = entity('RunLog', 'run_logs', {
  /** The id is `${runId}:${seq}`: replayed writes of the same log are no-ops. */
  ...runOwned(),
  seq: p.integer(),
  nodeId: p.string().nullable(),
  level: p.string().$type<LogLevel>(),
  message: p.text(),
  data: p.json<unknown>().nullable(),
  ...createdAt(),
});
export type RunLog = InferEntity<typeof RunLogSchema>;

export const ResumeTokenSchema = entity('ResumeToken', 'resume_tokens', {
  id: p.string().primary(),
  token: p.string().unique().hidden(HIDDEN),
  workspaceId: p.string(),
  runId: references(RunSchema, 'run_id'),
  nodeId: p.string(),
  ...createdAt(),
  expiresAt: timestamptz('expires_at').nullable(),
  usedAt: timestamptz('used_at').nullable(),
});
export type ResumeToken = InferEntity<typeof ResumeTokenSchema>;
