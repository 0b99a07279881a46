/**
 * Command jobs on the durable engine.
 *
 * - `commandThreadWorkflow` (id `cmdthread_<threadId>`) is the FIFO owner of one chat thread:
 *   woken by `commandQueued` (signal-with-start from the API), it runs the thread's oldest
 *   queued job as a child workflow, waits for it, and takes the next; idle for a while, it ends
 *   (a later signal-with-start begins a new one).
 * - `commandJobWorkflow` (id = job id): start (queued → running), plan with the model (an
 *   activity), wait for the `commandConfirm` Update on a durable timer when the plan has side
 *   effects (timer first: `blocked`), act (one activity per action; a workflow run is a child
 *   `runWorkflow`), and finish with the model's answer. `commandProgress` serves the live buffer.
 * - `commandScheduleFireWorkflow`: the action of a command schedule's Temporal Schedule; it
 *   queues the stored prompt as a job and wakes the thread.
 *
 * Model calls happen only in activities.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  executeChild,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import {
  commandConfirmUpdate,
  commandProgressQuery,
  commandQueuedSignal,
  SEARCH_ATTRIBUTES,
  svcNameValue,
  RUN_WORKFLOW_TASK_TIMEOUT,
  TASK_QUEUE,
  type CommandProgressEventShape,
} from '../shared';
import { runWorkflow } from './runs';

type Activities = ReturnType<typeof createActivities>;

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});
/**
 * Model calls and tools: longer, and fewer attempts (the chat client retries inside). They
 * heartbeat every 2 s while waiting, so a worker that dies mid-call is noticed within the
 * heartbeatTimeout and the call is retried elsewhere, not after startToCloseTimeout.
 */
const MODEL_HEARTBEAT_TIMEOUT = '20 seconds';
const modelActs = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: MODEL_HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 3 },
});

export interface CommandThreadInput {
  workspaceId: string;
  threadId: string;
}

export interface CommandJobInput {
  jobId: string;
  workspaceId: string;
  threadId: string;
}

/** Jobs one thread execution runs before it continues as new (keeps its history short). */
const JOBS_PER_THREAD_EXECUTION = 50;

export async function commandThreadWorkflow(input: CommandThreadInput): Promise<void> {
  // The thread's readable name, from this execution's start event (the same on every replay):
  // its jobs are filed under it. Owners started before threads had one hand on none.
  const threadName = workflowInfo().searchAttributes[SEARCH_ATTRIBUTES.SvcName];
  let wake = 0;
  setHandler(commandQueuedSignal, () => void wake++);
  for (let ran = 0; ;) {
    const seen = wake;
    const next = await acts.nextQueuedCommandJob(input.threadId);
    if (next) {
      try {
        await executeChild(commandJobWorkflow, {
          workflowId: next,
          taskQueue: TASK_QUEUE,
          args: [{ jobId: next, workspaceId: input.workspaceId, threadId: input.threadId }],
          searchAttributes: {
            [SEARCH_ATTRIBUTES.WorkspaceId]: [input.workspaceId],
            [SEARCH_ATTRIBUTES.SvcTrigger]: ['command'],
            ...(threadName ? { [SEARCH_ATTRIBUTES.SvcName]: threadName } : {}),
          },
        });
      } catch (err) {
        if (CancellationScope.current().consideredCancelled) throw err;
        // A job that could not even start must not hold the thread: it fails (a no-op when it ran).
        await acts.failCommandJob(next, 'The job could not be started.', ['queued']);
      }
      if (++ran >= JOBS_PER_THREAD_EXECUTION) await continueAsNew<typeof commandThreadWorkflow>(input);
      continue;
    }
    if (!(await condition(() => wake !== seen, '10 minutes'))) return;
  }
}

const MAX_EVENTS = 100;

export async function commandJobWorkflow(input: CommandJobInput): Promise<{ status: string }> {
  const { jobId } = input;
  let state = 'queued';
  let message = 'Queued.';
  let runId: string | undefined;
  const events: CommandProgressEventShape[] = [];
  const note = (s: string, m: string) => {
    state = s;
    message = m;
    events.push({ at: new Date().toISOString(), state: s, message: m });
    if (events.length > MAX_EVENTS) events.shift();
  };
  let confirmation: { id: string; expiresAtMs: number } | null = null;
  let confirmed = false;
  let finalStatus: string | null = null;

  setHandler(commandProgressQuery, () => ({ ...(runId ? { runId } : {}), state, message, events }));
  setHandler(
    commandConfirmUpdate,
    async (req) => {
      // The API confirms as soon as PostgreSQL says the job waits, which can be before this
      // execution has taken the plan activity's result: wait for the confirmation to be known.
      await condition(() => confirmation !== null || finalStatus !== null);
      if (!confirmation || confirmed || req.confirmationId !== confirmation.id || finalStatus !== null)
        throw ApplicationFailure.nonRetryable('not_waiting');
      if (Date.now() >= confirmation.expiresAtMs) throw ApplicationFailure.nonRetryable('expired');
      confirmed = true;
      await condition(() => finalStatus !== null);
      return { status: finalStatus! };
    },
    {
      validator: (req) => {
        if (finalStatus !== null || confirmed) throw new Error('not_waiting');
        if (!confirmation) return;
        if (req.confirmationId !== confirmation.id) throw new Error('not_waiting');
        if (Date.now() >= confirmation.expiresAtMs) throw new Error('expired');
      },
    },
  );

  const finish = async (status: string) => {
    finalStatus = status;
    await condition(allHandlersFinished);
    return { status };
  };

  try {
    const { started } = await acts.startCommandJob(jobId);
    if (!started) return await finish('canceled');
    note('running', 'Planning.');
    const plan = await modelActs.planCommandJob(jobId);
    if (plan.confirmation) {
      confirmation = plan.confirmation;
      note('waiting_confirmation', 'Waiting for confirmation of the plan.');
      const inTime = await condition(() => confirmed, Math.max(1, plan.confirmation.expiresAtMs - Date.now()));
      if (!inTime) {
        await acts.blockCommandJob(jobId);
        note('blocked', 'The confirmation expired.');
        return await finish('blocked');
      }
      await acts.resumeCommandJob(jobId);
      note('running', 'Confirmed; acting.');
    }
    for (const action of plan.actions) {
      note('running', `Running ${action.tool}.`);
      if (action.kind !== 'run') {
        await modelActs.runCommandAction(jobId, action.id);
        continue;
      }
      const prepared = await acts.prepareCommandRun(jobId, action.id);
      if (!prepared) continue;
      runId = prepared.runId;
      let outcome: { status: 'succeeded' | 'failed'; output?: unknown; error?: string };
      try {
        const result = await executeChild(runWorkflow, {
          workflowId: prepared.runId,
          taskQueue: TASK_QUEUE,
          workflowTaskTimeout: RUN_WORKFLOW_TASK_TIMEOUT,
          args: [
            {
              runId: prepared.runId,
              workspaceId: input.workspaceId,
              workflowId: prepared.workflowId,
              trigger: 'copilot',
              graph: prepared.graph,
              input: prepared.input,
            },
          ],
          searchAttributes: {
            [SEARCH_ATTRIBUTES.WorkspaceId]: [input.workspaceId],
            [SEARCH_ATTRIBUTES.SvcWorkflowId]: [prepared.workflowId],
            [SEARCH_ATTRIBUTES.SvcTrigger]: ['copilot'],
            // Histories recorded before the activity returned the name replay without it.
            ...(prepared.name ? { [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(prepared.name)] } : {}),
          },
        });
        outcome = { status: 'succeeded', output: result.output };
      } catch (err) {
        if (isCancellation(err)) throw err;
        outcome = { status: 'failed', error: rootMessage(err) };
      }
      await acts.recordCommandRun(jobId, action.id, prepared.runId, outcome);
    }
    note('running', 'Writing the answer.');
    const done = await modelActs.finishCommandJob(jobId);
    note(done.status, done.status === 'succeeded' ? 'Done.' : 'The plan failed.');
    return await finish(done.status);
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => acts.cancelCommandJobRow(jobId));
      note('canceled', 'Canceled.');
      return await CancellationScope.nonCancellable(() => finish('canceled'));
    }
    await acts.failCommandJob(jobId, rootMessage(err), ['running', 'waiting_confirmation', 'queued']);
    note('failed', 'The job failed.');
    return await finish('failed');
  }
}

export interface CommandScheduleFireInput {
  scheduleId: string;
  workspaceId: string;
}

/** One firing of a command schedule: queue the prompt as a job (idempotent on this execution's id) and wake its thread. */
export async function commandScheduleFireWorkflow(input: CommandScheduleFireInput): Promise<{ jobId: string | null }> {
  const fired = await acts.fireCommandSchedule(input.scheduleId, workflowInfo().workflowId);
  if (!fired) return { jobId: null };
  // The schedule's name (this firing's SvcName) names the thread owner it may start, and its jobs.
  const scheduleName = workflowInfo().searchAttributes[SEARCH_ATTRIBUTES.SvcName]?.[0];
  await acts.enqueueCommandThread({
    workspaceId: input.workspaceId,
    threadId: fired.threadId,
    ...(typeof scheduleName === 'string' ? { title: scheduleName } : {}),
  });
  return { jobId: fired.jobId };
}

function rootMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown } | undefined;
  while (e?.cause) e = e.cause;
  return e?.message ?? 'unknown error';
}
