import type { Client } from '@temporalio/client';
import type { FilePurger } from '../services/kernel/ports';
import { filePurgeWorkflowId, SEARCH_ATTRIBUTES, svcNameValue, TASK_QUEUE, WORKFLOW_TYPES } from './shared';
import type { FilePurgeInput } from './workflows/files';
import { startOnce } from './client';

const FILE_PURGE_TRIGGER = 'file.purge';

/** Starts a file's purge workflow; an open one for the same file is left running. */
export function temporalFilePurger(client: Client): FilePurger {
  return {
    async schedulePurge(file, delayMs) {
      const input: FilePurgeInput = { workspaceId: file.workspaceId, fileId: file.fileId, delayMs };
      await startOnce(client, WORKFLOW_TYPES.filePurge, {
        taskQueue: TASK_QUEUE,
        workflowId: filePurgeWorkflowId(file.fileId),
        args: [input],
        searchAttributes: {
          [SEARCH_ATTRIBUTES.WorkspaceId]: [file.workspaceId],
          [SEARCH_ATTRIBUTES.SvcTrigger]: [FILE_PURGE_TRIGGER],
          [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(file.name)],
        },
      });
    },
  };
}
