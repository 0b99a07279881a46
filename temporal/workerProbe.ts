/**
 * The Temporal side of worker health (the WorkerProbe port): task queue pollers and backlog,
 * the Schedules of given workflows, and a real smoke workflow. No SQL here; the use cases
 * that combine these answers with the database live in services/workers/.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal as proto } from '@temporalio/proto';
import type { SmokeRunOutcome, WorkerProbe } from '../services/kernel/ports';
import { scheduleIdPrefix } from './schedulesClient';
import { SEARCH_ATTRIBUTES, TASK_QUEUE, WORKFLOW_TYPES } from './shared';
import type { SmokeInput, SmokeResult } from './workflows/workers';

const SMOKE_TRIGGER = 'worker.smoke';

export function temporalWorkerProbe(client: Client, namespace: string): WorkerProbe {
  return {
    taskQueue: TASK_QUEUE,

    async describeTaskQueue() {
      const res = await client.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: TASK_QUEUE },
        taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        reportStats: true,
      });
      const pollers = (res.pollers ?? []).map((p) => {
        const ms = optionalTsToMs(p.lastAccessTime);
        return { identity: p.identity ?? 'unknown', lastAccessTime: ms === undefined ? null : new Date(ms).toISOString() };
      });
      const backlog = res.stats?.approximateBacklogCount;
      return { pollers, backlog: backlog == null ? null : Number(backlog) };
    },

    async countSchedules(workflowIds) {
      if (workflowIds.length === 0) return 0;
      const prefixes = workflowIds.map(scheduleIdPrefix);
      let count = 0;
      for await (const s of client.schedule.list()) {
        if (prefixes.some((p) => s.scheduleId.startsWith(p))) count += 1;
      }
      return count;
    },

    async runSmoke(input, budgetMs): Promise<SmokeRunOutcome> {
      const workflowId = `smoke_${randomUUID()}`;
      try {
        const args: [SmokeInput] = [{ workspaceId: input.workspaceId, message: input.message }];
        const handle = await client.workflow.start(WORKFLOW_TYPES.smoke, {
          taskQueue: TASK_QUEUE,
          workflowId,
          args,
          searchAttributes: { [SEARCH_ATTRIBUTES.WorkspaceId]: [input.workspaceId], [SEARCH_ATTRIBUTES.SvcTrigger]: [SMOKE_TRIGGER] },
        });
        const TIMEOUT = Symbol('timeout');
        let timer: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([
          handle.result() as Promise<SmokeResult>,
          new Promise<typeof TIMEOUT>((resolve) => (timer = setTimeout(() => resolve(TIMEOUT), budgetMs))),
        ]).finally(() => clearTimeout(timer));
        if (outcome !== TIMEOUT) return { kind: 'finished', workflowId, databaseTime: outcome.databaseTime };
        // Left running, it would be picked up by the next worker and report long after anyone asked.
        await handle.terminate('smoke test: no worker completed it in time').catch(() => undefined);
        return { kind: 'noWorkerInTime', workflowId };
      } catch (err) {
        return { kind: 'failed', workflowId, reason: err instanceof WorkflowFailedError ? 'workflowFailed' : 'startRefused' };
      }
    },
  };
}
