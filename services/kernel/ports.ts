/**
 * The seam between use cases and the durable engine. Services reach Temporal only through
 * these interfaces; `temporal/` implements them and the composition roots (main/wiring.ts,
 * main/worker.ts) inject the implementations. Tests and new areas see this one module.
 */
import type { Run, Workflow } from '../../db/entities';
import type { WorkflowGraph } from '../../engine/types';

export interface ApprovalRequest {
  decision: 'approved' | 'rejected';
  comment?: string | null;
  decidedBy: string;
  /** Which approval, when the run waits on several. */
  nodeId?: string | null;
}

/** `no_answer`: no worker decided within the budget (stalled or absent); the decision is not known to be applied. */
export type ApprovalOutcome =
  { kind: 'decided'; nodeId: string; decision: string } | { kind: 'refused'; reason: string } | { kind: 'no_answer' };

export type WebhookReplyResult =
  | { kind: 'response'; status: number; headers: Record<string, string>; body: unknown }
  | { kind: 'waiting' }
  | { kind: 'completed' }
  | { kind: 'failed'; error: string }
  | { kind: 'timeout' };

/** Starts, cancels, approves and resumes runs on the durable engine (temporal/runsClient.ts). */
export interface RunLauncher {
  /** The task queue runs execute on (reported in execution receipts and details). */
  readonly taskQueue: string;
  /** Starts the run's execution (idempotent: the workflow id is the run id). */
  start(run: Run, graph: WorkflowGraph): Promise<void>;
  /** Requests cancellation; false when no execution is open any more. */
  cancel(runId: string): Promise<boolean>;
  /**
   * Decides a pending approval; `refused` when the run is not waiting for it (or already decided),
   * `no_answer` when no worker answered within `budgetMs`.
   */
  approve(runId: string, request: ApprovalRequest, budgetMs: number): Promise<ApprovalOutcome>;
  /** Queues a decision of the approval at `nodeId` durably, for the next worker; false when the execution is no longer open. */
  queueApproval(runId: string, request: ApprovalRequest & { nodeId: string }): Promise<boolean>;
  /**
   * Starts a webhook run and waits up to `budgetMs` for its reply (Response node output, a
   * durable wait, or the end); `timeout` when the budget passes first. The run goes on either way.
   */
  startWithReply(run: Run, graph: WorkflowGraph, budgetMs: number): Promise<WebhookReplyResult>;
  /** Delivers an event resume; false when the execution is no longer open. */
  resumeEvent(runId: string, resume: { nodeId: string; token: string; payload: unknown }): Promise<boolean>;
  /**
   * The run's pending workflow task when it has failed before (`attempts` > 1) with the last
   * failure's message when known; null when the execution is closed, missing or healthy.
   */
  failingWorkflowTask(runId: string): Promise<{ attempts: number; reason: string | null } | null>;
  /** Ends the execution at once with `reason` (no workflow code runs); false when it was not open. */
  terminate(runId: string, reason: string): Promise<boolean>;
  /** Whether Temporal has an execution (open or closed) with the run's id. */
  executionExists(runId: string): Promise<boolean>;
}

/** A named destination whose schedules are synced (services/destinations); omitted means Production. */
export interface ScheduleTarget {
  targetId: string;
  kind: 'production' | 'preview';
}

/** Keeps Temporal Schedules in step with deployed schedule triggers (temporal/schedulesClient.ts). */
export interface ScheduleSync {
  /**
   * Makes the workflow's Temporal Schedules match `graph` (its active version): one schedule
   * per `schedule` trigger node, created or replaced, and removed when the node, the
   * deployment or the workflow is gone (`graph` null). Returns the schedule ids kept.
   * With a preview `target`, the same for that destination's own schedules, which start runs
   * of its active version.
   */
  sync(workflow: Workflow, graph: WorkflowGraph | null, target?: ScheduleTarget): Promise<string[]>;
}

/** A worker polling a task queue, as Temporal last saw it. */
export interface TaskQueuePoller {
  identity: string;
  /** ISO-8601; null when Temporal did not say. */
  lastAccessTime: string | null;
}

/** The workflow task queue as Temporal describes it. */
export interface TaskQueueState {
  pollers: TaskQueuePoller[];
  /** Approximate count of tasks waiting for a worker; null when Temporal did not report it. */
  backlog: number | null;
}

/**
 * How a smoke workflow ended within its budget. Every outcome carries the Temporal workflow id
 * (generated before the start, so a refused start has one too).
 */
export type SmokeRunOutcome =
  | { kind: 'finished'; workflowId: string; databaseTime: string }
  | { kind: 'failed'; workflowId: string; reason: 'startRefused' | 'workflowFailed' }
  /** No worker completed it within the budget; the execution was terminated. */
  | { kind: 'noWorkerInTime'; workflowId: string };

/**
 * The Temporal-only questions of worker health (temporal/workerProbe.ts). Methods reject
 * when Temporal is unreachable and do not bound their own wait: callers apply a time budget
 * and decide what to report (driver errors may carry addresses, so never show them).
 */
export interface WorkerProbe {
  /** The task queue runs and smoke workflows are started on. */
  readonly taskQueue: string;
  /** Pollers and backlog of the workflow task queue. */
  describeTaskQueue(): Promise<TaskQueueState>;
  /** How many Temporal Schedules belong to these workflows (0 for an empty list, without asking). */
  countSchedules(workflowIds: string[]): Promise<number>;
  /**
   * Starts the smoke workflow (one activity round trip through a worker) tagged with the
   * workspace, and waits up to `budgetMs` for it; terminates it when the budget passes first.
   */
  runSmoke(input: { workspaceId: string; message: string }, budgetMs: number): Promise<SmokeRunOutcome>;
}

/**
 * Purges deleted files' blobs later (temporal/filesClient.ts): one durable workflow per file,
 * id `file-purge-<fileId>`, sleeping `delayMs` on a durable timer before it removes the blob and
 * marks the file `deleted`. Starting it again for the same file while it runs is a no-op.
 */
export interface FilePurger {
  /** `name` is the file's name, filed as the purge's readable SvcName (tenant text, not a secret). */
  schedulePurge(file: { workspaceId: string; fileId: string; name: string }, delayMs: number): Promise<void>;
}

/**
 * Which documents an indexing pass covers: one uploaded document's content version, or the
 * documents a sync run upserted. `name` (the knowledge base's or connector's name) is filed as
 * the pass's readable SvcName; without it the pass has none.
 */
export type KnowledgeIndexTarget =
  | { kind: 'document'; workspaceId: string; documentId: string; contentVersion: number; name: string }
  | { kind: 'syncRun'; workspaceId: string; runId: string; name?: string };

/** Starts knowledge indexing on the durable engine (temporal/knowledgeClient.ts); a pass already started for the same target is left running. */
export interface KnowledgeIndexer {
  start(target: KnowledgeIndexTarget): Promise<void>;
}

/**
 * Embeds a search query with the deployment's embeddings endpoint, as a Temporal activity
 * (model calls happen in activities only). Null when no endpoint is configured; rejects when the
 * call failed or did not finish within `budgetMs`.
 */
export interface QueryEmbedder {
  readonly configured: boolean;
  readonly model: string;
  embed(workspaceId: string, text: string, budgetMs: number): Promise<number[]>;
}

/** How a knowledge sync run's execution ended, as the API answers it. */
export type SyncExecutionOutcome =
  | { kind: 'succeeded' }
  | { kind: 'cancelled' }
  /** `errorKind`/`code` say how to answer (a conflict, a validation failure, setup, internal). */
  | {
      kind: 'failed';
      errorKind: 'invalid' | 'conflict' | 'internal';
      code: string | undefined;
      message: string;
      envelope?: Record<string, unknown>;
    }
  /** The execution did not finish within the wait; the run goes on. */
  | { kind: 'still_running' };

export interface KnowledgeSyncStart {
  workspaceId: string;
  connectorId: string;
  /** The connector's name, filed as the run's readable SvcName; not part of the workflow's input. */
  connectorName: string;
  runId: string;
  options: { maxPages: number; maxItems: number; maxBytes: number; timeoutMs: number };
  leaseMs: number;
}

/** Executes and cancels knowledge sync runs (temporal/knowledgeClient.ts): workflow id = run id. */
export interface KnowledgeSyncLauncher {
  /** Starts the run's execution (a closed earlier execution of the same id is started anew) and waits up to `waitMs` for it. */
  execute(start: KnowledgeSyncStart, waitMs: number): Promise<SyncExecutionOutcome>;
  /** Requests cancellation; false when no execution is open. */
  cancel(runId: string): Promise<boolean>;
}

/** Limits of one research run, defaults applied (services/research/runs.ts RESEARCH_LIMIT_BOUNDS). */
export interface ResearchLimits {
  maxPages: number;
  maxDomains: number;
  maxBytes: number;
  timeoutMs: number;
}

export interface ResearchStart {
  workspaceId: string;
  runId: string;
  /** The run's query, filed as its readable SvcName (bounded); not part of the workflow's input. */
  query: string;
  sourceUrls: string[];
  limits: ResearchLimits;
}

/** Starts and cancels research runs on the durable engine (temporal/researchClient.ts): workflow id = run id. */
export interface ResearchLauncher {
  /** Starts the run's execution; an execution already started for the run is left as it is. */
  start(start: ResearchStart): Promise<void>;
  /** Requests cancellation; false when no execution is open. */
  cancel(runId: string): Promise<boolean>;
}

/** How a confirmation sent to a waiting command job ended (temporal/commandsClient.ts). */
export type CommandConfirmOutcome =
  /** The job resumed and reached this status within the wait. */
  | { kind: 'settled'; status: string }
  /** The job resumed and is still acting when the wait ended. */
  | { kind: 'running' }
  /** The job's execution refused the confirmation: its window closed, or it is not waiting for this id. */
  | { kind: 'refused'; reason: 'expired' | 'not_waiting' }
  /** No open execution of the job. */
  | { kind: 'not_found' };

/**
 * Runs command jobs on the durable engine (temporal/commandsClient.ts): one FIFO owner
 * workflow per thread runs the thread's queued jobs in order, each as its own workflow
 * (id = job id).
 */
export interface CommandJobEngine {
  /**
   * Wakes the thread's FIFO owner (started when none runs) so it picks up queued jobs. `title`
   * (the thread's) becomes the readable SvcName of an owner started now and of the jobs it runs;
   * an owner already running keeps the name it started with.
   */
  enqueue(thread: { workspaceId: string; threadId: string; title?: string }): Promise<void>;
  /** Delivers a confirmation to the waiting job and waits up to `budgetMs` for it to finish acting. */
  confirm(jobId: string, confirmationId: string, budgetMs: number): Promise<CommandConfirmOutcome>;
  /** Requests cancellation of the job's execution; false when none is open. */
  cancel(jobId: string): Promise<boolean>;
  /** Live progress events of the job's execution; null when it has no live buffer. */
  progress(jobId: string): Promise<Array<{ at: string; state: string; message: string }> | null>;
}

/** Keeps a command schedule's Temporal Schedule (temporal/commandsClient.ts). */
export interface CommandScheduleSync {
  /** `title` is filed as the readable SvcName of the Schedule and of every firing. */
  upsert(schedule: { id: string; workspaceId: string; title: string; cron: string; timezone: string; enabled: boolean }): Promise<void>;
}
