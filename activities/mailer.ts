import type { ActivityDeps } from '.';
import { Context } from '@temporalio/activity';
import { pollMailGroup, type MailPollResult } from '../services/mailer';

/** The mailer's polls, started by each polling group's Temporal Schedule (temporal/sourcesClient.ts). */
export function createMailerActivities(deps: ActivityDeps) {
  return {
    async pollMailGroup(input: { groupId: string }): Promise<MailPollResult> {
      if (!deps.blobs || !deps.mailer) throw new Error('Mail polling needs the blob store and the mailer configuration.');
      const keys = deps.credentials ?? { key: undefined, previousKeys: [], secretKey: undefined };
      const ctx = Context.current();
      // One heartbeat per stored message (not a timer): a poll stuck on one message is noticed.
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
