import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from './index';
import {
  ChildRunRefused,
  issueResumeToken,
  prepareChildRun,
  prepareScheduledRun,
  recordRunProgress,
  type RunProgress,
} from '../services/runs';

/** Activities that record the runs the engine starts and keep the run read model in step with their executions. */
export function createRunActivities(deps: ActivityDeps) {
  return {
    /** Local activity: a short keyed write, idempotent on replay. */
    async recordRunProgress(progress: RunProgress): Promise<void> {
      await recordRunProgress(deps.orm.em.fork(), progress);
    },
    async issueResumeToken(args: { runId: string; workspaceId: string; nodeId: string; expiresAt: string | null }) {
      return issueResumeToken(deps.orm.em.fork(), args);
    },
    /** Records a schedule-fired run against the active version; no graph when the workflow cannot run now. */
    async prepareScheduledRun(args: { runId: string; workspaceId: string; workflowId: string; input: unknown; targetId?: string }) {
      return prepareScheduledRun(deps.orm.em.fork(), args);
    },
    async prepareChildRun(args: { parentRunId: string; parentNodeId: string; workspaceId: string; workflowId: string; input: unknown }) {
      try {
        return await prepareChildRun(deps.orm.em.fork(), args);
      } catch (err) {
        if (err instanceof ChildRunRefused) throw ApplicationFailure.nonRetryable(err.message, 'SubworkflowUnavailable');
        throw err;
      }
    },
  };
}
