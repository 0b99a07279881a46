import type { ActivityDeps } from '.';
import { pollCiSource, pollRssSource, type PollResult } from '../services/sources';
import { heartbeating } from './heartbeat';

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
  };
}
