import type { MikroORM } from '@mikro-orm/postgresql';
import { createSmokeActivities } from './smoke';

/** What activities may use; built once per worker process. */
export interface ActivityDeps {
  orm: MikroORM;
}

/** Activity factory: workflows import its type only (`proxyActivities<ReturnType<typeof createActivities>>`). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createSmokeActivities(deps),
  };
}
