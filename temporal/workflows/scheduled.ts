import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createActivities } from '../../activities';
import { runWorkflow, type RunWorkflowResult } from './run';

type Activities = ReturnType<typeof createActivities>;

export interface ScheduledRunInput {
  workspaceId: string;
  workflowId: string;
  nodeId: string;
}

const { prepareScheduledRun } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/**
 * Started by a Temporal Schedule. It records the run (id = this execution's id) against the
 * workflow's active version at fire time, then interprets it exactly like any other run.
 */
export async function scheduledRunWorkflow(input: ScheduledRunInput): Promise<RunWorkflowResult | { skipped: string }> {
  const runId = workflowInfo().workflowId;
  const runInput = { scheduledAt: workflowInfo().startTime.toISOString(), nodeId: input.nodeId };
  const prepared = await prepareScheduledRun({ runId, workspaceId: input.workspaceId, workflowId: input.workflowId, input: runInput });
  if (!prepared.graph) return { skipped: prepared.reason ?? 'not runnable' };
  return runWorkflow({
    runId,
    workspaceId: input.workspaceId,
    workflowId: input.workflowId,
    trigger: 'schedule',
    graph: prepared.graph,
    input: runInput,
    startNodeId: input.nodeId,
  });
}
