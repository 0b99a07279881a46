/**
 * Worker status, doctor and smoke tests (the client side of worker health, hence under
 * temporal/ beside runs-client.ts): every field is measured against the real
 * PostgreSQL and Temporal (task queue pollers, schedules, a real smoke workflow). Nothing
 * here reports connection strings, addresses or environment variable names.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowFailedError } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal as proto } from '@temporalio/proto';
import { RUN_STATUSES, RunSchema, SmokeTestSchema, WorkflowSchema, type SmokeTest, type SmokeTestStatus } from '../db/entities';
import { pendingMigrations } from '../db/orm';
import { SEARCH_ATTRIBUTES, TASK_QUEUE, WORKFLOW_TYPES } from './shared';
import type { SmokeInput, SmokeResult } from './workflows/smoke';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client, Connection } from '@temporalio/client';
import { newId } from '../services/ids';

const CHECK_TIMEOUT_MS = 3_000;
export const START_WORKER_ACTION = 'Start a worker: npm run start:worker';
export const DEFAULT_WAIT_FOR_WORKER_MS = 10_000;

/** What the health checks need: the database and a Temporal client of the namespace. */
export interface WorkerDeps {
  orm: MikroORM;
  temporal: { connection: Connection; client: Client; namespace: string };
}

export function clampWait(ms: number | undefined): number {
  if (ms === undefined || !Number.isFinite(ms)) return DEFAULT_WAIT_FOR_WORKER_MS;
  return Math.min(60_000, Math.max(100, Math.round(ms)));
}

async function withTimeout<T>(work: Promise<T>, ms = CHECK_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** A failure reason safe to show: never the error text of a driver (it may carry addresses). */
const safeError = (err: unknown) => ((err as Error)?.message === 'timed out' ? 'timed out' : 'unreachable');

export interface QueueState {
  mode: 'temporal';
  queueName: string;
  workerConcurrency: number;
  pollers: Array<{ identity: string; lastAccessTime: string | null }>;
  backlog: number | null;
  error: string | null;
}

export async function queueState(deps: WorkerDeps): Promise<QueueState> {
  const base: QueueState = { mode: 'temporal', queueName: TASK_QUEUE, workerConcurrency: 0, pollers: [], backlog: null, error: null };
  try {
    const res = await withTimeout(
      deps.temporal.client.workflowService.describeTaskQueue({
        namespace: deps.temporal.namespace,
        taskQueue: { name: TASK_QUEUE },
        taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        reportStats: true,
      }),
    );
    const pollers = (res.pollers ?? []).map((p) => {
      const ms = optionalTsToMs(p.lastAccessTime);
      return { identity: p.identity ?? 'unknown', lastAccessTime: ms === undefined ? null : new Date(ms).toISOString() };
    });
    const backlogRaw = res.stats?.approximateBacklogCount;
    const backlog = backlogRaw == null ? null : Number(backlogRaw);
    return { ...base, workerConcurrency: pollers.length, pollers, backlog };
  } catch (err) {
    return { ...base, error: `Temporal task queue ${safeError(err)}` };
  }
}

export interface DatabaseState {
  reachable: boolean;
  latencyMs: number;
  migrationsCurrent: boolean | null;
  pendingMigrations: string[];
  error: string | null;
}

export async function databaseState(deps: WorkerDeps, em: EntityManager): Promise<DatabaseState> {
  const started = performance.now();
  try {
    await withTimeout(em.getConnection().execute('select 1'));
  } catch (err) {
    return { reachable: false, latencyMs: Math.round(performance.now() - started), migrationsCurrent: null, pendingMigrations: [], error: `PostgreSQL ${safeError(err)}` };
  }
  const latencyMs = Math.round(performance.now() - started);
  try {
    const pending = await withTimeout(pendingMigrations(deps.orm));
    return { reachable: true, latencyMs, migrationsCurrent: pending.length === 0, pendingMigrations: pending, error: null };
  } catch (err) {
    return { reachable: true, latencyMs, migrationsCurrent: null, pendingMigrations: [], error: `Migration check ${safeError(err)}` };
  }
}

export interface SchedulerState {
  mode: 'temporal-schedules';
  schedules: number | null;
  error: string | null;
}

/** Counts the Temporal Schedules of the workspace's workflows (ids `sched_<workflowId>_<node>`). */
export async function schedulerState(deps: WorkerDeps, em: EntityManager, workspaceId: string): Promise<SchedulerState> {
  try {
    const workflows = await em.find(WorkflowSchema, { workspaceId }, { fields: ['id'] });
    const prefixes = workflows.map((w) => `sched_${w.id}_`);
    let count = 0;
    if (prefixes.length > 0) {
      const listing = (async () => {
        for await (const s of deps.temporal.client.schedule.list()) {
          if (prefixes.some((p) => s.scheduleId.startsWith(p))) count += 1;
        }
      })();
      await withTimeout(listing);
    }
    return { mode: 'temporal-schedules', schedules: count, error: null };
  } catch (err) {
    return { mode: 'temporal-schedules', schedules: null, error: `Temporal schedules ${safeError(err)}` };
  }
}

export function smokeTestView(s: SmokeTest) {
  const details = s.details as { temporal?: unknown; targetWorkflowId?: string | null };
  return {
    id: s.id,
    status: s.status,
    message: s.message,
    durationMs: s.durationMs,
    checkedAt: s.createdAt.toISOString(),
    temporal: details.temporal ?? { workflowId: null, taskQueue: TASK_QUEUE, mode: 'temporal' },
    targetWorkflowId: details.targetWorkflowId ?? null,
  };
}

export async function latestSmokeTest(em: EntityManager, workspaceId: string) {
  const latest = await em.findOne(SmokeTestSchema, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  return latest ? smokeTestView(latest) : null;
}

async function runCounters(em: EntityManager, workspaceId: string) {
  const rows: Array<{ status: string; count: string | number }> = await em
    .getConnection()
    .execute('select status, count(*) as count from runs where workspace_id = ? group by status', [workspaceId]);
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<string, number>;
  let total = 0;
  for (const r of rows) {
    byStatus[r.status] = Number(r.count);
    total += Number(r.count);
  }
  return { total, ...byStatus };
}

async function recentRuns(em: EntityManager, workspaceId: string) {
  const runs = await em.find(RunSchema, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 5 });
  return runs.map((r) => ({
    id: r.id,
    workflowId: r.workflowId,
    workflowName: r.workflowName,
    status: r.status,
    trigger: r.trigger,
    dryRun: r.dryRun,
    createdAt: r.createdAt,
    finishedAt: r.finishedAt,
    durationMs: r.durationMs,
  }));
}

export async function workerStatus(deps: WorkerDeps, em: EntityManager, workspaceId: string, now: Date) {
  const [queue, database, scheduler] = await Promise.all([queueState(deps), databaseState(deps, em), schedulerState(deps, em, workspaceId)]);
  const reachable = database.reachable;
  const [runs, recent, latest] = reachable
    ? await Promise.all([runCounters(em, workspaceId), recentRuns(em, workspaceId), latestSmokeTest(em, workspaceId)])
    : [null, [], null];
  const checks = {
    database: database.reachable,
    migrations: database.migrationsCurrent === true,
    temporal: queue.error === null,
    workers: queue.workerConcurrency > 0,
    scheduler: scheduler.error === null,
  };
  return {
    workspaceId,
    queue,
    persistence: { durable: true, mode: 'postgresql' as const },
    database,
    scheduler,
    health: { ok: Object.values(checks).every(Boolean), checks },
    runs,
    recentRuns: recent,
    latestSmokeTest: latest,
    checkedAt: now.toISOString(),
  };
}

export async function workerDoctor(deps: WorkerDeps, em: EntityManager, workspaceId: string, now: Date, appUrl: string) {
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
    warnings.push(`No worker is polling the ${TASK_QUEUE} task queue; runs will wait until one starts.`);
    nextActions.push(START_WORKER_ACTION);
  }
  if (status.scheduler.error) warnings.push('Could not list Temporal schedules.');
  const smoke = status.latestSmokeTest;
  if (!smoke) {
    warnings.push('No smoke test has been run for this workspace.');
    nextActions.push('Run a smoke test: POST /api/v1/workers/smoke-test');
  } else if (smoke.status !== 'passed') {
    warnings.push(`The latest smoke test did not pass (${smoke.status}): ${smoke.message}`);
    nextActions.push('Run a smoke test again once a worker is running: POST /api/v1/workers/smoke-test');
  }
  return {
    status: blockers.length > 0 ? 'blocked' : warnings.length > 0 ? 'attention' : 'ok',
    workspaceId,
    checkedAt: status.checkedAt,
    source: 'api' as const,
    appUrl,
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

export interface SmokeTestRequest {
  targetWorkflowId: string | null;
  useQueue: boolean;
  waitForWorkerMs: number;
}

/**
 * Starts the real smoke workflow on `workflow-runs` and waits for a worker to finish it:
 * `passed` (200), `attention` when no worker picked it up in time (202; the execution is
 * terminated), `failed` when Temporal refused the start or the workflow failed (500).
 */
export async function runSmokeTest(deps: WorkerDeps, em: EntityManager, workspaceId: string, req: SmokeTestRequest) {
  const id = newId('smk');
  const workflowId = `smoke_${randomUUID()}`;
  const started = Date.now();
  const client = deps.temporal.client;
  let status: SmokeTestStatus;
  let message: string;
  let result: SmokeResult | null = null;
  try {
    const input: SmokeInput = { workspaceId, message: `smoke test ${id}` };
    const handle = await client.workflow.start(WORKFLOW_TYPES.smoke, {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [input],
      searchAttributes: { [SEARCH_ATTRIBUTES.WorkspaceId]: [workspaceId] },
    });
    const TIMEOUT = Symbol('timeout');
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      handle.result() as Promise<SmokeResult>,
      new Promise<typeof TIMEOUT>((resolve) => (timer = setTimeout(() => resolve(TIMEOUT), req.waitForWorkerMs))),
    ]).finally(() => clearTimeout(timer));
    if (outcome === TIMEOUT) {
      const queue = await queueState(deps);
      await handle.terminate('smoke test: no worker completed it in time').catch(() => undefined);
      status = 'attention';
      message =
        queue.error !== null
          ? `No worker completed the smoke workflow within ${req.waitForWorkerMs} ms, and the ${TASK_QUEUE} task queue could not be described.`
          : queue.workerConcurrency === 0
            ? `No worker picked up the smoke workflow within ${req.waitForWorkerMs} ms: no worker is polling the ${TASK_QUEUE} task queue. ${START_WORKER_ACTION}.`
            : `The smoke workflow did not complete within ${req.waitForWorkerMs} ms although ${queue.workerConcurrency} poller(s) are on the ${TASK_QUEUE} task queue.`;
    } else {
      result = outcome;
      status = 'passed';
      message = `A worker on ${TASK_QUEUE} ran the smoke workflow and reached PostgreSQL.`;
    }
  } catch (err) {
    status = 'failed';
    message = err instanceof WorkflowFailedError ? 'The smoke workflow failed on the worker.' : 'Temporal refused to start the smoke workflow.';
  }
  const durationMs = Date.now() - started;
  const smoke: SmokeTest = {
    id,
    workspaceId,
    status,
    message,
    durationMs,
    details: {
      temporal: { workflowId, taskQueue: TASK_QUEUE, mode: 'temporal' },
      targetWorkflowId: req.targetWorkflowId,
      useQueue: req.useQueue,
      waitForWorkerMs: req.waitForWorkerMs,
      databaseTime: result?.databaseTime ?? null,
    },
    createdAt: new Date(),
  };
  em.create(SmokeTestSchema, smoke);
  await em.flush();
  return { httpStatus: status === 'passed' ? 200 : status === 'attention' ? 202 : 500, smokeTest: smokeTestView(smoke) };
}
