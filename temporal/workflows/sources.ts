import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../../activities';

const { pollRssSource, pollCiSource } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '2 minutes',
  // The activity heartbeats while it polls: a killed worker's attempt is retried within seconds, not minutes.
  heartbeatTimeout: '10 seconds',
  // A failed poll is recorded in the source's state; the next scheduled poll tries again.
  retry: { maximumAttempts: 3, initialInterval: '2 seconds' },
});

export interface SourcePollInput {
  sourceId: string;
}

/** Started by the source's Temporal Schedule (`rss_<sourceId>`): one poll of the feed. */
export async function rssPollWorkflow(input: SourcePollInput): Promise<{ outcome: string; started: number }> {
  return pollRssSource(input);
}

/** Started by the source's Temporal Schedule (`ci_<sourceId>`): one poll of every watched job. */
export async function ciPollWorkflow(input: SourcePollInput): Promise<{ outcome: string; started: number }> {
  return pollCiSource(input);
}
