import type { ActivityDeps } from './index';

export function createSmokeActivities(deps: ActivityDeps) {
  return {
    /** Echoes the message with the database clock, proving the worker reaches PostgreSQL. */
    async recordSmokePing(message: string): Promise<{ message: string; databaseTime: string }> {
      const rows: Array<{ now: Date }> = await deps.orm.em.fork().getConnection().execute('select now() as now');
      return { message, databaseTime: new Date(rows[0].now).toISOString() };
    },
  };
}
