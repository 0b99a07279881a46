import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createActivities } from '../../activities';

const { purgeFile } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '2 minutes',
  // Storage or the database may be down for a while: keep trying, never give up on a purge.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export interface FilePurgeInput {
  workspaceId: string;
  fileId: string;
  /** How long to wait (a durable timer) before the blob is removed and the file marked `deleted`. */
  delayMs: number;
}

/**
 * One per deleted file (workflow id `file-purge-<fileId>`): waits out the purge delay on a
 * durable timer, then removes the blob and moves the file from `deletion_requested` to `deleted`.
 */
export async function filePurgeWorkflow(input: FilePurgeInput): Promise<{ purged: boolean }> {
  if (input.delayMs > 0) await sleep(input.delayMs);
  return purgeFile({ workspaceId: input.workspaceId, fileId: input.fileId });
}
