import { answerSmokePing } from '../services/workers/smokeTests';
import type { ActivityDeps } from './index';

export function createWorkerActivities(deps: ActivityDeps) {
  return {
    /** The smoke workflow's activity (services/workers/smokeTests.ts). */
    recordSmokePing: (message: string) => answerSmokePing(deps.orm.em.fork(), message),
  };
}
