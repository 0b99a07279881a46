import {
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';
import type { Run } from '../db/entities';
import type { RunLauncher } from '../services/kernel/ports';
import type { WorkflowGraph } from '../engine/types';
import {
  approvalQueuedSignal,
  approvalUpdate,
  resumeEventSignal,
  RUN_WORKFLOW_TASK_TIMEOUT,
  SEARCH_ATTRIBUTES,
  svcNameValue,
  svcTargetValue,
  TASK_QUEUE,
  webhookReplyUpdate,
  WORKFLOW_TYPES,
} from './shared';
import { withConfigDefaults } from '../engine/nodes';
import type { RunWorkflowInput } from './workflows/runs';
import { cancelExecution, ifExecutionExists, startOnce } from './client';

/** The client side of the run workflow: start, cancel, approve and resume runs on Temporal. */
function startOptions(run: Run, graph: WorkflowGraph, settings: RunLauncherSettings) {
  const input: RunWorkflowInput = {
    runId: run.id,
    workspaceId: run.workspaceId,
    workflowId: run.workflowId,
    trigger: run.trigger,
    graph: withConfigDefaults(graph),
    input: run.input,
    startNodeId: run.startNodeId,
    ...(settings.loopContinueAfterEvents ? { continueAfterEvents: settings.loopContinueAfterEvents } : {}),
  };
  return {
    taskQueue: TASK_QUEUE,
    workflowId: run.id,
    workflowTaskTimeout: RUN_WORKFLOW_TASK_TIMEOUT,
    args: [input] as [RunWorkflowInput],
    memo: { workflowName: run.workflowName },
    searchAttributes: {
      [SEARCH_ATTRIBUTES.WorkspaceId]: [run.workspaceId],
      [SEARCH_ATTRIBUTES.SvcWorkflowId]: [run.workflowId],
      [SEARCH_ATTRIBUTES.SvcTrigger]: [run.trigger],
      [SEARCH_ATTRIBUTES.SvcTarget]: [svcTargetValue(run.executionTarget, run.executionEvidence.requestedTarget)],
      [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(run.workflowName)],
    },
  };
}

/**
 * A call's time budget: `expired` resolves to `value` after `budgetMs` and `signal` aborts then
 * (for calls that take one); `clear` once the race is decided, so no timer outlives the call.
 */
function budget<T>(budgetMs: number, value: T): { expired: Promise<T>; signal: AbortSignal; clear(): void } {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<T>((resolve) => {
    timer = setTimeout(() => {
      abort.abort();
      resolve(value);
    }, budgetMs);
  });
  return { expired, signal: abort.signal, clear: () => clearTimeout(timer) };
}

/** How runs are started; unset fields keep the run workflow's defaults. */
export interface RunLauncherSettings {
  /** RUN_LOOP_CONTINUE_AFTER_EVENTS: history length at which a loop continues its run as new. */
  loopContinueAfterEvents?: number;
}

export function temporalRunLauncher(client: Client, settings: RunLauncherSettings = {}): RunLauncher {
  return {
    taskQueue: TASK_QUEUE,
    async start(run: Run, graph: WorkflowGraph) {
      // The workflow id is the run id: a second start of the same run is already done.
      await startOnce(client, WORKFLOW_TYPES.run, startOptions(run, graph, settings));
    },

    async startWithReply(run, graph, budgetMs) {
      const operation = new WithStartWorkflowOperation(WORKFLOW_TYPES.run, {
        ...startOptions(run, graph, settings),
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      const timeout = budget(budgetMs, { kind: 'timeout' as const });
      try {
        const reply = client.workflow.executeUpdateWithStart(webhookReplyUpdate, { startWorkflowOperation: operation });
        // The start itself must not be lost to the budget: wait for it, then race the reply.
        await Promise.race([operation.workflowHandle(), timeout.expired]);
        return await Promise.race([reply, timeout.expired]);
      } finally {
        timeout.clear();
      }
    },

    cancel: (runId) => cancelExecution(client, runId),

    async approve(runId, request, budgetMs) {
      // An Update needs a worker: without one answering, the SDK would keep the request open.
      const late = budget(budgetMs, { kind: 'no_answer' as const });
      const decide = client
        .withAbortSignal(late.signal, () => client.workflow.getHandle(runId).executeUpdate(approvalUpdate, { args: [request] }))
        .then(
          (decided) => ({ kind: 'decided' as const, ...decided }),
          (err: unknown) => {
            if (err instanceof WorkflowUpdateFailedError) return { kind: 'refused' as const, reason: rootMessage(err) };
            if (err instanceof WorkflowNotFoundError || isClosedWorkflowError(err))
              return { kind: 'refused' as const, reason: 'The run is no longer waiting for an approval.' };
            if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || late.signal.aborted) return { kind: 'no_answer' as const };
            throw err;
          },
        );
      try {
        return await Promise.race([decide, late.expired]);
      } finally {
        late.clear();
      }
    },

    queueApproval: (runId, request) => whileOpen(() => client.workflow.getHandle(runId).signal(approvalQueuedSignal, request)),

    async failingWorkflowTask(runId) {
      let attempts: number;
      const handle = client.workflow.getHandle(runId);
      try {
        const description = await handle.describe();
        if (description.status.name !== 'RUNNING') return null;
        attempts = description.raw.pendingWorkflowTask?.attempt ?? 0;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return null;
        throw err;
      }
      if (attempts <= 1) return null;
      // Only the first failure of a series is written to the history; later attempts are transient.
      let reason: string | null = null;
      try {
        const history = await handle.fetchHistory();
        for (const event of history.events ?? []) {
          const message = event.workflowTaskFailedEventAttributes?.failure?.message;
          if (message) reason = message;
        }
      } catch {
        reason = null;
      }
      return { attempts, reason };
    },

    executionExists: (runId) => ifExecutionExists(() => client.workflow.getHandle(runId).describe()),

    terminate: (runId, reason) => whileOpen(() => client.workflow.getHandle(runId).terminate(reason)),

    resumeEvent: (runId, resume) => whileOpen(() => client.workflow.getHandle(runId).signal(resumeEventSignal, resume)),
  };
}

function rootMessage(err: Error): string {
  let cause: unknown = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  return (cause as Error).message || err.message;
}

function isClosedWorkflowError(err: unknown): boolean {
  return err instanceof Error && /workflow execution already completed|already completed/i.test(err.message);
}

/** Runs `act` against a run's workflow; false, not an error, when the workflow is gone or has already closed. */
async function whileOpen(act: () => Promise<unknown>): Promise<boolean> {
  try {
    await act();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || isClosedWorkflowError(err)) return false;
    throw err;
  }
}
