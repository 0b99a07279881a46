import type { Client } from '@temporalio/client';
import type { ResearchLauncher } from '../services/kernel/ports';
import type { ResearchWorkflowInput } from './workflows/research';
import { SEARCH_ATTRIBUTES, svcNameValue, TASK_QUEUE, WORKFLOW_TYPES } from './shared';
import { cancelExecution, startOnce } from './client';

const RESEARCH_TRIGGER = 'research';

/** Starts research runs (workflow id = run id) and cancels them. */
export function temporalResearchLauncher(client: Client): ResearchLauncher {
  return {
    async start(start) {
      const input: ResearchWorkflowInput = {
        workspaceId: start.workspaceId,
        runId: start.runId,
        sources: start.sourceUrls.map((url) => ({ url, host: new URL(url).hostname.toLowerCase() })),
        limits: start.limits,
      };
      await startOnce(client, WORKFLOW_TYPES.research, {
        taskQueue: TASK_QUEUE,
        workflowId: start.runId,
        args: [input],
        searchAttributes: {
          [SEARCH_ATTRIBUTES.WorkspaceId]: [start.workspaceId],
          [SEARCH_ATTRIBUTES.SvcTrigger]: [RESEARCH_TRIGGER],
          [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(start.query)],
        },
      });
    },
    cancel: (runId) => cancelExecution(client, runId),
  };
}
