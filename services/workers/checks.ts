/**
 * The live checks of worker health (task queue, database and migrations, schedules). Each
 * check gets a time budget and reports a failure reason that is safe to show (never the
 * driver's error text, which may carry addresses) instead of throwing.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { WorkflowSchema } from '../../db/entities';
import { pendingMigrations } from '../../db/orm';
import type { AppConfig } from '../kernel/config';
import type { WorkerProbe } from '../kernel/ports';
import { pingDatabase } from './store';

/** What the worker health use cases need besides the request's EntityManager. */
export interface WorkerHealthDeps {
  /** For the migration check (the migrator lives on the ORM, not on an EntityManager). */
  orm: MikroORM;
  workerProbe: WorkerProbe;
  /** For the agent runtime, transports, deployment labels and local AI CLI sections. */
  config: AppConfig;
  temporal: { namespace: string };
}

const CHECK_TIMEOUT_MS = 3_000;
const TIMED_OUT = 'timed out';

/** Rejects with a `timed out` error when `work` takes longer than the check budget (work goes on). */
async function withinCheckBudget<T>(work: Promise<T>, ms = CHECK_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(TIMED_OUT)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** `timed out` or `unreachable`: the only failure reasons a health check reports. */
const safeFailure = (err: unknown): string => ((err as Error)?.message === TIMED_OUT ? TIMED_OUT : 'unreachable');

export interface QueueState {
  mode: 'temporal';
  queueName: string;
  workerConcurrency: number;
  pollers: Array<{ identity: string; lastAccessTime: string | null }>;
  backlog: number | null;
  error: string | null;
}

/** The workflow task queue's pollers and backlog; `error` set (and no pollers) when Temporal does not answer. */
export async function queueState(probe: WorkerProbe): Promise<QueueState> {
  const base: QueueState = { mode: 'temporal', queueName: probe.taskQueue, workerConcurrency: 0, pollers: [], backlog: null, error: null };
  try {
    const { pollers, backlog } = await withinCheckBudget(probe.describeTaskQueue());
    return { ...base, workerConcurrency: pollers.length, pollers, backlog };
  } catch (err) {
    return { ...base, error: `Temporal task queue ${safeFailure(err)}` };
  }
}

export interface DatabaseState {
  reachable: boolean;
  latencyMs: number;
  migrationsCurrent: boolean | null;
  pendingMigrations: string[];
  error: string | null;
}

/** Round-trip latency of `select 1` and the pending migrations; `migrationsCurrent` null when they could not be checked. */
export async function databaseState(deps: WorkerHealthDeps, em: EntityManager): Promise<DatabaseState> {
  const started = performance.now();
  try {
    await withinCheckBudget(pingDatabase(em));
  } catch (err) {
    return {
      reachable: false,
      latencyMs: Math.round(performance.now() - started),
      migrationsCurrent: null,
      pendingMigrations: [],
      error: `PostgreSQL ${safeFailure(err)}`,
    };
  }
  const latencyMs = Math.round(performance.now() - started);
  try {
    const pending = await withinCheckBudget(pendingMigrations(deps.orm));
    return { reachable: true, latencyMs, migrationsCurrent: pending.length === 0, pendingMigrations: pending, error: null };
  } catch (err) {
    return { reachable: true, latencyMs, migrationsCurrent: null, pendingMigrations: [], error: `Migration check ${safeFailure(err)}` };
  }
}

export interface SchedulerState {
  mode: 'temporal-schedules';
  schedules: number | null;
  error: string | null;
}

/** Counts the Temporal Schedules of the workspace's workflows; `error` set when the listing fails or overruns its budget. */
export async function schedulerState(probe: WorkerProbe, em: EntityManager, workspaceId: string): Promise<SchedulerState> {
  try {
    const workflows = await em.find(WorkflowSchema, { workspaceId }, { fields: ['id'] });
    const schedules = await withinCheckBudget(probe.countSchedules(workflows.map((w) => w.id)));
    return { mode: 'temporal-schedules', schedules, error: null };
  } catch (err) {
    return { mode: 'temporal-schedules', schedules: null, error: `Temporal schedules ${safeFailure(err)}` };
  }
}
