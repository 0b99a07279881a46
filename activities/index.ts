import type { MikroORM } from '@mikro-orm/postgresql';
import { createNodeActivities } from './nodes';
import { createRunActivities } from './runs';
import { createWorkerActivities } from './workers';

/** What activities may use; built once per worker process. */
export interface ActivityDeps {
  orm: MikroORM;
  /** Lets http nodes reach private, loopback and link-local addresses (tests, local development). */
  allowPrivateNetworks: boolean;
}

/** Activity factory: workflows import its type only (`proxyActivities<ReturnType<typeof createActivities>>`). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createWorkerActivities(deps),
    ...createRunActivities(deps),
    ...createNodeActivities(deps),
  };
}
