/**
 * Names shared by workflows, workers and clients. Workflow code imports this module, so it
 * must stay free of Node built-ins and I/O.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { storableString } from '../engine/wellFormedText';
export const TASK_QUEUE = 'workflow-runs';

/**
 * The workflow task timeout of every run (Temporal's default is 10 s). A task that times out is
 * retried on a fresh worker as a full replay, which re-evaluates every expression of the run so
 * far, so on a starved CPU an expression-heavy run's retries only grow longer (17.8 s tasks were
 * logged with a benchmark beside the suite). A minute still means "hung", not "slow", and stays
 * below the 120 s Temporal allows; work slices keep a healthy task far below it.
 */
export const RUN_WORKFLOW_TASK_TIMEOUT = '60 seconds' as const;

/** Custom search attributes registered at start, so operators can filter runs in the Web UI. */
export const SEARCH_ATTRIBUTES = {
  WorkspaceId: 'WorkspaceId',
  SvcWorkflowId: 'SvcWorkflowId',
  SvcTrigger: 'SvcTrigger',
  /** The destination a run executes: `production`, `preview:<targetId>`, or `candidate` for live draft runs. */
  SvcTarget: 'SvcTarget',
  /**
   * The readable name of what the execution serves, at its start (the workflow's name for runs,
   * their schedules and polls; the query of a research run; the connector's, knowledge base's,
   * thread's, schedule's or file's name elsewhere: docs/operations.md): tenant text, readable by anyone
   * with Temporal access, as memo and payloads are not (they are encrypted). At most
   * SVC_NAME_MAX_CHARS characters.
   */
  SvcName: 'SvcName',
} as const;

/** Longest SvcName value, in characters: a Keyword value must stay far below the server's 2 KB bound. */
export const SVC_NAME_MAX_CHARS = 200;

/** The SvcName value of a name: bounded, lone surrogates replaced (a search attribute is a protobuf string). */
export function svcNameValue(name: string): string {
  return storableString(name.slice(0, SVC_NAME_MAX_CHARS));
}

/** The SvcTarget value of a run of a destination (see SEARCH_ATTRIBUTES.SvcTarget). */
export function svcTargetValue(
  target: { kind: 'production' | 'preview'; targetId: string } | null | undefined,
  requested: 'active' | 'candidate' = 'active',
): string {
  if (target) return target.kind === 'production' ? 'production' : `preview:${target.targetId}`;
  return requested === 'candidate' ? 'candidate' : 'production';
}

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;

/** Workflow type names, used when starting by name from the API. */
export const WORKFLOW_TYPES = {
  smoke: 'smokeWorkflow',
  run: 'runWorkflow',
  scheduled: 'scheduledRunWorkflow',
  filePurge: 'filePurgeWorkflow',
  rssPoll: 'rssPollWorkflow',
  ciPoll: 'ciPollWorkflow',
  mailPoll: 'mailPollWorkflow',
  knowledgeIndexDocument: 'knowledgeIndexDocumentWorkflow',
  knowledgeIndexRun: 'knowledgeIndexRunWorkflow',
  knowledgeQueryEmbedding: 'knowledgeQueryEmbeddingWorkflow',
  knowledgeSync: 'knowledgeSyncWorkflow',
  research: 'researchWorkflow',
  commandThread: 'commandThreadWorkflow',
  commandJob: 'commandJobWorkflow',
  commandScheduleFire: 'commandScheduleFireWorkflow',
} as const;

/** Workflow ids of knowledge indexing: one per uploaded document version, one per sync run. */
export const knowledgeIndexDocumentWorkflowId = (documentId: string, contentVersion: number) =>
  `knowledge-index-${documentId}-v${contentVersion}`;
export const knowledgeIndexRunWorkflowId = (runId: string) => `knowledge-index-${runId}`;

/** Workflow id of a file's purge: one per file, so a repeated DELETE never starts a second. */
export const filePurgeWorkflowId = (fileId: string) => `file-purge-${fileId}`;

export interface ApprovalRequest {
  decision: 'approved' | 'rejected';
  comment?: string | null;
  decidedBy?: string | null;
  /** Which approval node; may be omitted when the run waits on exactly one. */
  nodeId?: string | null;
}

export interface ApprovalAccepted {
  nodeId: string;
  decision: 'approved' | 'rejected';
}

export interface EventResume {
  nodeId: string;
  token: string;
  payload: unknown;
}

/** Decide a pending approval; the caller needs an answer (409 when already decided), hence an Update. */
export const approvalUpdate = defineUpdate<ApprovalAccepted, [ApprovalRequest]>('approval');
/**
 * The same decision when no worker answered the Update in time (a stalled or absent worker): a
 * signal is in the history at once, so the decision waits durably for a worker. It names its node
 * (checked against the run's projection), and applies only if that approval is still undecided.
 */
export const approvalQueuedSignal = defineSignal<[ApprovalRequest & { nodeId: string }]>('approvalQueued');
/** Resume an event wait; fire-and-forget once the single-use token is claimed in PostgreSQL. */
export const resumeEventSignal = defineSignal<[EventResume]>('resumeEvent');
/** Live detail of a running run (steps so far, active waits). */
export const progressQuery = defineQuery<{ status: string; steps: unknown[]; waits: unknown[] }>('progress');

/** What a webhook caller waiting on a run gets back. */
export type WebhookReply =
  | { kind: 'response'; status: number; headers: Record<string, string>; body: unknown }
  | { kind: 'waiting' }
  | { kind: 'completed' }
  | { kind: 'failed'; error: string };

/**
 * Sent with the start of a webhook run (update-with-start): completes as soon as a Response
 * node has run, the run parks on a durable wait, or it ends — no polling of the database.
 */
export const webhookReplyUpdate = defineUpdate<WebhookReply, []>('webhookReply');

/** Command jobs: the FIFO owner workflow of a thread, and the Temporal Schedule of a command schedule. */
export const commandThreadWorkflowId = (threadId: string) => `cmdthread_${threadId}`;
export const commandScheduleId = (scheduleId: string) => `cmdsched_${scheduleId}`;

export interface CommandConfirmRequest {
  confirmationId: string;
}

/** How a confirmed job ended, or `running` when the update handler stopped waiting. */
export interface CommandConfirmResult {
  status: string;
}

export interface CommandProgressEventShape {
  at: string;
  state: string;
  message: string;
}

/** A new job was queued on the thread: its FIFO owner looks for it. */
export const commandQueuedSignal = defineSignal<[]>('commandQueued');
/** Confirm a waiting command job's plan; the caller needs an answer (expired, consumed), hence an Update. */
export const commandConfirmUpdate = defineUpdate<CommandConfirmResult, [CommandConfirmRequest]>('commandConfirm');
/** Live progress of a command job (its events buffer). */
export const commandProgressQuery = defineQuery<{ runId?: string; state: string; message: string; events: CommandProgressEventShape[] }>(
  'commandProgress',
);
