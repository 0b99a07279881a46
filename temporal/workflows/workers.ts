import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../../activities';

const { recordSmokePing } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

export interface SmokeInput {
  workspaceId: string;
  message: string;
}

export interface SmokeResult {
  message: string;
  /** Set by the activity: proves a worker with database access ran it. */
  databaseTime: string;
}

/** The smallest real execution: one activity round trip through a worker. Used by smoke tests. */
export async function smokeWorkflow(input: SmokeInput): Promise<SmokeResult> {
  return recordSmokePing(input.message);
}
