import type { ActivityDeps } from '.';
import { Context } from '@temporalio/activity';
import { pollCiSource, pollRssSource, type PollResult } from '../services/sources';
import { pollMailGroup, type MailPollResult } from '../services/mailer';

/** Runs `poll` with a heartbeat every 2 s (the workflow's heartbeat timeout is 10 s), so a killed worker's attempt is retried soon. */
async function heartbeating<T>(poll: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), 2_000);
  try {
    return await poll();
  } finally {
    clearInterval(timer);
  }
}

/** Event-source polls, started by their Temporal Schedules (temporal/sourcesClient.ts). */
export function createSourceActivities(deps: ActivityDeps) {
  return {
    async pollRssSource(input: { sourceId: string }): Promise<PollResult> {
      return heartbeating(() => pollRssSource(deps.orm.em.fork(), { allowPrivateNetworks: deps.allowPrivateNetworks }, input.sourceId));
    },
    async pollCiSource(input: { sourceId: string }): Promise<PollResult> {
      // Without credential keys the poll records that the credential cannot be read.
      const keys = deps.credentials ?? { key: undefined, previousKeys: [], secretKey: undefined };
      return heartbeating(() =>
        pollCiSource(deps.orm.em.fork(), { keys, allowPrivateNetworks: deps.allowPrivateNetworks }, input.sourceId),
      );
    },
    async pollMailGroup(input: { groupId: string }): Promise<MailPollResult> {
      if (!deps.blobs || !deps.mailer) throw new Error('Mail polling needs the blob store and the mailer configuration.');
      const keys = deps.credentials ?? { key: undefined, previousKeys: [], secretKey: undefined };
      const ctx = Context.current();
      return pollMailGroup(
        deps.orm.em.fork(),
        {
          keys,
          mailer: deps.mailer.config,
          allowPrivateNetworks: deps.allowPrivateNetworks,
          files: { blobs: deps.blobs, scanners: deps.mailer.scanners },
          heartbeat: () => ctx.heartbeat(),
        },
        input.groupId,
      );
    },
  };
}
