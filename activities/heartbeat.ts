import { Context } from '@temporalio/activity';

const heartbeat = () => Context.current().heartbeat();

/**
 * Heartbeats at once and then every two seconds while `work` runs (a model call, a fetch):
 * with a heartbeatTimeout on the activity, a worker that dies mid-call is noticed within that
 * timeout rather than at startToCloseTimeout, and a cancellation reaches the activity.
 */
export async function heartbeating<T>(work: () => Promise<T>): Promise<T> {
  heartbeat();
  const timer = setInterval(heartbeat, 2_000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
