import { ScheduleNotFoundError, type Client } from '@temporalio/client';
import type { ScheduleSync } from '../services/kernel/ports';
import { RUN_WORKFLOW_TASK_TIMEOUT, SEARCH_ATTRIBUTES, svcNameValue, svcTargetValue, TASK_QUEUE, WORKFLOW_TYPES } from './shared';
import type { ScheduledRunInput } from './workflows/runs';

/** The prefix every Temporal Schedule id of a workflow starts with. */
export function scheduleIdPrefix(workflowId: string): string {
  return `sched_${workflowId}_`;
}

/** The Temporal Schedule id of a schedule trigger node. */
export function scheduleId(workflowId: string, nodeId: string): string {
  return `${scheduleIdPrefix(workflowId)}${nodeId}`;
}

/** The prefix of a preview destination's schedule ids (never a prefix of production's `sched_…`). */
export function targetScheduleIdPrefix(targetId: string): string {
  return `schedt_${targetId}_`;
}

export function temporalScheduleSync(client: Client): ScheduleSync {
  return {
    async sync(workflow, graph, target) {
      const preview = target?.kind === 'preview' ? target : null;
      const prefix = preview ? targetScheduleIdPrefix(preview.targetId) : scheduleIdPrefix(workflow.id);
      const idOf = (nodeId: string) => `${prefix}${nodeId}`;
      const wanted = (graph?.nodes ?? []).filter((n) => n.type === 'schedule' && !n.disabled);
      const wantedIds = new Set(wanted.map((n) => idOf(n.id)));
      // Remove schedules of nodes that are gone (the list is filtered by our id prefix).
      for await (const listed of client.schedule.list()) {
        if (listed.scheduleId.startsWith(prefix) && !wantedIds.has(listed.scheduleId)) {
          await client.schedule.getHandle(listed.scheduleId).delete().catch(ignoreNotFound);
        }
      }
      for (const node of wanted) {
        const id = idOf(node.id);
        const input: ScheduledRunInput = {
          workspaceId: workflow.workspaceId,
          workflowId: workflow.id,
          nodeId: node.id,
          ...(preview ? { targetId: preview.targetId } : {}),
        };
        const options = {
          scheduleId: id,
          spec: { cronExpressions: [String(node.config.cron)], timezone: String(node.config.timezone ?? 'UTC') },
          action: {
            type: 'startWorkflow' as const,
            workflowType: WORKFLOW_TYPES.scheduled,
            taskQueue: TASK_QUEUE,
            workflowTaskTimeout: RUN_WORKFLOW_TASK_TIMEOUT,
            // Temporal appends the scheduled time, so each run id is unique and stable on retries.
            workflowId: `run_${id}`,
            args: [input],
            searchAttributes: {
              [SEARCH_ATTRIBUTES.WorkspaceId]: [workflow.workspaceId],
              [SEARCH_ATTRIBUTES.SvcWorkflowId]: [workflow.id],
              [SEARCH_ATTRIBUTES.SvcTrigger]: ['schedule'],
              [SEARCH_ATTRIBUTES.SvcTarget]: [svcTargetValue(preview)],
              [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(workflow.name)],
            },
          },
          memo: { workflowName: workflow.name },
          // The Schedule itself is found by the same filters as the runs it starts.
          searchAttributes: {
            [SEARCH_ATTRIBUTES.WorkspaceId]: [workflow.workspaceId],
            [SEARCH_ATTRIBUTES.SvcWorkflowId]: [workflow.id],
            [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(workflow.name)],
          },
        };
        // Replace rather than patch: a changed cron or timezone must not keep stale spec fields.
        await client.schedule.getHandle(id).delete().catch(ignoreNotFound);
        await client.schedule.create(options);
      }
      return [...wantedIds];
    },
  };
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof ScheduleNotFoundError)) throw err;
}
