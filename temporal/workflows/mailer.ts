import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../../activities';

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
