/**
 * The seam between use cases and the durable engine. Services reach Temporal only through
 * these interfaces; `temporal/` implements them and the composition roots (api/wiring.ts,
 * the worker) inject the implementations. Tests and new areas see this one module.
 */
import type { Run, Workflow } from '../db/entities';
import type { WorkflowGraph } from '../engine/types';

export interface ApprovalRequest {
  decision: 'approved' | 'rejected';
  comment?: string | null;
  decidedBy: string;
  /** Which approval, when the run waits on several. */
  nodeId?: string | null;
}

export type ApprovalOutcome = { kind: 'decided'; nodeId: string; decision: string } | { kind: 'refused'; reason: string };

export type WebhookReplyResult =
  | { kind: 'response'; status: number; headers: Record<string, string>; body: unknown }
  | { kind: 'waiting' }
  | { kind: 'completed' }
  | { kind: 'failed'; error: string }
  | { kind: 'timeout' };

/** Starts, cancels, approves and resumes runs on the durable engine (temporal/runs-client.ts). */
export interface RunLauncher {
  /** Starts the run's execution (idempotent: the workflow id is the run id). */
  start(run: Run, graph: WorkflowGraph): Promise<void>;
  /** Requests cancellation; false when no execution is open any more. */
  cancel(runId: string): Promise<boolean>;
  /** Decides a pending approval; `refused` when the run is not waiting for it (or already decided). */
  approve(runId: string, request: ApprovalRequest): Promise<ApprovalOutcome>;
  /**
   * Starts a webhook run and waits up to `budgetMs` for its reply (Response node output, a
   * durable wait, or the end); `timeout` when the budget passes first. The run goes on either way.
   */
  startWithReply(run: Run, graph: WorkflowGraph, budgetMs: number): Promise<WebhookReplyResult>;
  /** Delivers an event resume; false when the execution is no longer open. */
  resumeEvent(runId: string, resume: { nodeId: string; token: string; payload: unknown }): Promise<boolean>;
}

/** Keeps Temporal Schedules in step with deployed schedule triggers (temporal/schedules-client.ts). */
export interface ScheduleSync {
  /**
   * Makes the workflow's Temporal Schedules match `graph` (its active version): one schedule
   * per `schedule` trigger node, created or replaced, and removed when the node, the
   * deployment or the workflow is gone (`graph` null). Returns the schedule ids kept.
   */
  sync(workflow: Workflow, graph: WorkflowGraph | null): Promise<string[]>;
}
