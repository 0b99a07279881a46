/** The command jobs area's Temporal adapters (ports CommandJobEngine and CommandScheduleSync). */
import {
  ScheduleNotFoundError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type Client,
} from '@temporalio/client';
import type { CommandJobEngine, CommandScheduleSync } from '../services/kernel/ports';
import type { CommandScheduleFireInput, CommandThreadInput } from './workflows/commands';
import {
  commandConfirmUpdate,
  commandProgressQuery,
  commandQueuedSignal,
  commandScheduleId,
  commandThreadWorkflowId,
  SEARCH_ATTRIBUTES,
  svcNameValue,
  TASK_QUEUE,
  WORKFLOW_TYPES,
} from './shared';
import { cancelExecution } from './client';

/** How long a job read waits for the live buffer (a workflow query) before answering without events. */
const PROGRESS_QUERY_BUDGET_MS = 1_500;

export function temporalCommandEngine(client: Client): CommandJobEngine {
  return {
    async enqueue(thread) {
      const input: CommandThreadInput = { workspaceId: thread.workspaceId, threadId: thread.threadId };
      await client.workflow.signalWithStart(WORKFLOW_TYPES.commandThread, {
        taskQueue: TASK_QUEUE,
        workflowId: commandThreadWorkflowId(thread.threadId),
        args: [input],
        signal: commandQueuedSignal,
        signalArgs: [],
        // Applies only when this starts the owner; commandThreadWorkflow hands its SvcName on to the jobs it runs.
        searchAttributes: {
          [SEARCH_ATTRIBUTES.WorkspaceId]: [thread.workspaceId],
          [SEARCH_ATTRIBUTES.SvcTrigger]: ['command'],
          ...(thread.title === undefined ? {} : { [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(thread.title)] }),
        },
      });
    },
    async confirm(jobId, confirmationId, budgetMs) {
      const handle = client.workflow.getHandle(jobId);
      let update;
      try {
        update = await handle.startUpdate(commandConfirmUpdate, { args: [{ confirmationId }], waitForStage: WorkflowUpdateStage.ACCEPTED });
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return { kind: 'not_found' };
        if (err instanceof WorkflowUpdateFailedError)
          return { kind: 'refused', reason: err.cause?.message === 'expired' ? 'expired' : 'not_waiting' };
        throw err;
      }
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), budgetMs)));
      try {
        const result = await Promise.race([update.result(), timeout]);
        return result ? { kind: 'settled', status: result.status } : { kind: 'running' };
      } catch (err) {
        // The handler refused after accepting (it waited for the plan to be known).
        if (err instanceof WorkflowUpdateFailedError)
          return { kind: 'refused', reason: err.cause?.message === 'expired' ? 'expired' : 'not_waiting' };
        throw err;
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (jobId) => cancelExecution(client, jobId),
    async progress(jobId) {
      // A query needs a worker: without one answering quickly the read goes on without events.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), PROGRESS_QUERY_BUDGET_MS)));
      try {
        const live = await Promise.race([client.workflow.getHandle(jobId).query(commandProgressQuery), late]);
        return live ? live.events : null;
      } catch {
        // Closed, not started yet, or no worker: no live buffer.
        return null;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export function temporalCommandScheduleSync(client: Client): CommandScheduleSync {
  return {
    async upsert(schedule) {
      const id = commandScheduleId(schedule.id);
      const input: CommandScheduleFireInput = { scheduleId: schedule.id, workspaceId: schedule.workspaceId };
      const name = svcNameValue(schedule.title);
      await client.schedule
        .getHandle(id)
        .delete()
        .catch((err: unknown) => {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        });
      await client.schedule.create({
        scheduleId: id,
        spec: { cronExpressions: [schedule.cron], timezone: schedule.timezone },
        action: {
          type: 'startWorkflow',
          workflowType: WORKFLOW_TYPES.commandScheduleFire,
          taskQueue: TASK_QUEUE,
          // Temporal appends the scheduled time: one id per firing, stable on retries.
          workflowId: `cmdfire_${schedule.id}`,
          args: [input],
          searchAttributes: {
            [SEARCH_ATTRIBUTES.WorkspaceId]: [schedule.workspaceId],
            [SEARCH_ATTRIBUTES.SvcTrigger]: ['schedule'],
            [SEARCH_ATTRIBUTES.SvcName]: [name],
          },
        },
        // The Schedule itself is found by the same filter as the jobs it fires.
        searchAttributes: { [SEARCH_ATTRIBUTES.WorkspaceId]: [schedule.workspaceId], [SEARCH_ATTRIBUTES.SvcName]: [name] },
        state: { paused: !schedule.enabled },
      });
    },
  };
}
