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

const { pollMailGroup } = proxyActivities<ReturnType<typeof createActivities>>({
  // A large mailbox delta may take a while; the heartbeat (one per message) notices a dead worker quickly.
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { maximumAttempts: 5, initialInterval: '1 second' },
});

export interface MailPollInput {
  groupId: string;
}

/**
 * Started by a polling group's Temporal Schedule (`mailpoll_<groupId>`): one poll of the mailbox.
 * An attempt cut short (a killed worker) is retried from the stored cursor; messages it already
 * stored are deduplicated by their provider id.
 */
export async function mailPollWorkflow(
  input: MailPollInput,
): Promise<{ outcome: string; stored: number; duplicates: number; unrouted: number }> {
  return pollMailGroup(input);
}
