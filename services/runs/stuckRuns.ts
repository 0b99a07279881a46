import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { tryAdvisoryXactLock } from '../kernel/store';
import { failLiveRun, failQueuedRun, staleLiveRuns } from './store';
import type { Logger } from 'pino';
import type { RunLauncher } from '../kernel/ports';
import { startPeriodicPass } from '../kernel/periodic';
import { storableString } from '../kernel/storableText';

/**
 * Workflow-task failure guard, part 2. A workflow task that fails (non-determinism after a bad
 * deploy, an error thrown outside the run workflow's own catch) or never completes (an
 * activation over the worker's isolateExecutionTimeout, 30 s) is retried by Temporal for ever,
 * and the run stays `running`. Temporal counts the attempts of the pending workflow task; a run
 * whose task has failed `maxAttempts` times is terminated with the reason and recorded `failed`.
 *
 * Part 3: a run row is written before its execution is started, so an API process killed in
 * between leaves a `queued` row with no execution that nothing would ever start (its caller got
 * no 202). Such a row still counts against run admission, so enough of them would refuse every
 * live run of the workspace. A `queued` row with no execution after `staleMs` is recorded
 * `failed`, saying why; rows a pending webhook outbox entry will still start are left to it.
 */
export const STUCK_RUN_GUARD = {
  /** Failed attempts of one workflow task before the run is failed. */
  maxAttempts: 5,
  /** Only runs whose projection has not moved for this long are asked about (cheap pre-filter). */
  staleMs: 30_000,
  /** Runs examined per pass, oldest update first. */
  batch: 100,
} as const;

/** The error of a run whose execution was never started (see part 3 above). */
export const NEVER_STARTED =
  'The run was never started: the process that accepted it stopped before handing it to Temporal. Start it again.';

export interface StuckRunOptions {
  maxAttempts?: number;
  staleMs?: number;
  batch?: number;
}

/** One pass of the guard; returns the ids of the runs it failed. */
export async function failStuckRuns(em: EntityManager, launcher: RunLauncher, opts: StuckRunOptions = {}): Promise<string[]> {
  const maxAttempts = opts.maxAttempts ?? STUCK_RUN_GUARD.maxAttempts;
  const staleMs = opts.staleMs ?? STUCK_RUN_GUARD.staleMs;
  const rows = await staleLiveRuns(em, staleMs, opts.batch ?? STUCK_RUN_GUARD.batch);
  const failed: string[] = [];
  for (const { id, status } of rows) {
    if (status === 'queued' && !(await launcher.executionExists(id))) {
      await failQueuedRun(em, id, NEVER_STARTED);
      failed.push(id);
      continue;
    }
    const task = await launcher.failingWorkflowTask(id);
    if (!task || task.attempts < maxAttempts) continue;
    // The task's failure text comes from Temporal, which allows U+0000; PostgreSQL's text does not.
    const reason = storableString(
      `The run's workflow task failed ${task.attempts} times, so the run was stopped${task.reason ? `: ${task.reason}` : ''}`,
    );
    await launcher.terminate(id, reason);
    await failLiveRun(em, id, reason);
    failed.push(id);
  }
  return failed;
}

/**
 * One pass of failStuckRuns in the whole deployment at a time: every API process runs the guard,
 * and a pass that finds another one under way (its transaction holds the guard's advisory lock)
 * skips, so a stuck run is terminated and recorded by one process, not raced by all of them.
 */
export async function failStuckRunsOnce(orm: MikroORM, launcher: RunLauncher, opts: StuckRunOptions = {}): Promise<string[]> {
  return orm.em.fork().transactional(async (tx) => {
    return (await tryAdvisoryXactLock(tx, 'stuck-run-guard')) ? failStuckRuns(tx, launcher, opts) : [];
  });
}

/** Runs failStuckRunsOnce every `intervalMs` until stopped; a failed pass is logged and retried on the next. */
export function startStuckRunGuard(opts: { orm: MikroORM; launcher: RunLauncher; intervalMs: number; logger: Logger }): {
  stop(): Promise<void>;
} {
  return startPeriodicPass({
    name: 'stuck-run guard',
    intervalMs: opts.intervalMs,
    logger: opts.logger,
    pass: async () => {
      const failed = await failStuckRunsOnce(opts.orm, opts.launcher);
      if (failed.length > 0) opts.logger.warn({ runIds: failed }, 'runs failed by the workflow-task failure guard');
    },
  });
}
