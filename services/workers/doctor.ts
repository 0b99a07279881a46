/**
 * The worker doctor: the measured status read as a diagnosis — `blocked` when runs cannot be
 * queued or stored, `attention` when they would wait or the setup is unproven, `ok` otherwise —
 * with blockers, warnings and the next actions to take.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkerHealthDeps } from './checks';
import { START_WORKER_ACTION } from './smokeTests';
import { workerStatus } from './status';

/** Where the caller reached the API, supplied by the HTTP edge (services build no URLs). */
export interface DoctorLinks {
  /** The origin the request was addressed to; reported as `appUrl`. */
  appUrl: string;
  /** How to run a smoke test, as shown in next actions (e.g. `POST /api/v1/workers/smoke-test`). */
  smokeTest: string;
}

/** Diagnoses the workspace's worker setup as of `now` (which only stamps `checkedAt`). */
export async function workerDoctor(deps: WorkerHealthDeps, em: EntityManager, workspaceId: string, now: Date, links: DoctorLinks) {
  const status = await workerStatus(deps, em, workspaceId, now);
  const blockers: string[] = [];
  const warnings: string[] = [];
  const nextActions: string[] = [];
  if (!status.database.reachable) {
    blockers.push('The database is unreachable.');
    nextActions.push('Check that PostgreSQL is running and reachable from the API.');
  } else if (status.database.migrationsCurrent === false) {
    blockers.push(`${status.database.pendingMigrations.length} database migration(s) are pending.`);
    nextActions.push('Apply migrations: npm run migrate');
  } else if (status.database.migrationsCurrent === null) {
    warnings.push('Could not check database migrations.');
  }
  if (status.queue.error) {
    blockers.push('Temporal is unreachable; runs cannot be queued.');
    nextActions.push('Check that the Temporal server is running and reachable from the API.');
  } else if (status.queue.workerConcurrency === 0) {
    warnings.push(`No worker is polling the ${status.queue.queueName} task queue; runs will wait until one starts.`);
    nextActions.push(START_WORKER_ACTION);
  }
  if (status.scheduler.error) warnings.push('Could not list Temporal schedules.');
  const smoke = status.latestSmokeTest;
  if (!smoke) {
    warnings.push('No smoke test has been run for this workspace.');
    nextActions.push(`Run a smoke test: ${links.smokeTest}`);
  } else if (smoke.status !== 'passed') {
    warnings.push(`The latest smoke test did not pass (${smoke.status}): ${smoke.message}`);
    nextActions.push(`Run a smoke test again once a worker is running: ${links.smokeTest}`);
  }
  return {
    status: blockers.length > 0 ? 'blocked' : warnings.length > 0 ? 'attention' : 'ok',
    workspaceId,
    checkedAt: status.checkedAt,
    source: 'api' as const,
    appUrl: links.appUrl,
    persistence: status.persistence,
    database: status.database,
    queue: { mode: status.queue.mode, queueName: status.queue.queueName, workerConcurrency: status.queue.workerConcurrency, backlog: status.queue.backlog, error: status.queue.error },
    scheduler: { mode: status.scheduler.mode, schedules: status.scheduler.schedules },
    workerHealth: {
      ok: status.queue.error === null && status.queue.workerConcurrency > 0,
      pollers: status.queue.pollers.length,
      latestSmokeTest: smoke,
    },
    blockers,
    warnings,
    nextActions: [...new Set(nextActions)],
  };
}
