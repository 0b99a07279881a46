/**
 * The measured worker status of a workspace: task queue pollers and backlog (Temporal),
 * database reachability, latency and pending migrations, the workspace's Temporal Schedules,
 * run counters, recent runs and the latest smoke test. Every field is measured live; nothing
 * here reports connection strings, addresses or environment variable names.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { RunSchema, type RunStatus } from '../../db/entities';
import { RUN_STATUSES } from '../../engine/statuses';
import { databaseState, queueState, schedulerState, type WorkerHealthDeps } from './checks';
import { storedLocalAiCliState } from './localAiCli';
import { agentRuntimeState, deploymentState, managedWorkspacesState, probeModelEndpoint, sideEffectTransports } from './runtime';
import { latestSmokeTest } from './smokeTests';
import { runCountsByStatus } from './store';

async function runCounters(em: EntityManager, workspaceId: string) {
  const rows = await runCountsByStatus(em, workspaceId);
  const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<string, number>;
  let total = 0;
  for (const r of rows) {
    byStatus[r.status] = Number(r.count);
    total += Number(r.count);
  }
  return { total, ...byStatus } as { total: number } & Record<RunStatus, number>;
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

/**
 * The workspace's worker status as of `now` (which only stamps `checkedAt`; the checks are
 * live). Run counters, recent runs and the latest smoke test are skipped when the database is
 * unreachable.
 */
export async function workerStatus(deps: WorkerHealthDeps, em: EntityManager, workspaceId: string, now: Date) {
  const [queue, database, scheduler, modelEndpoint] = await Promise.all([
    queueState(deps.workerProbe),
    databaseState(deps, em),
    schedulerState(deps.workerProbe, em, workspaceId),
    probeModelEndpoint(deps.config),
  ]);
  const [runs, recent, latest, localAiCli, transports] = database.reachable
    ? await Promise.all([
        runCounters(em, workspaceId),
        recentRuns(em, workspaceId),
        latestSmokeTest(em, workspaceId, deps.workerProbe.taskQueue),
        storedLocalAiCliState(em, deps.config.localAiCli, workspaceId),
        sideEffectTransports(em, deps.config, workspaceId),
      ])
    : [null, [], null, null, null];
  const agentRuntime = agentRuntimeState(modelEndpoint, localAiCli);
  const deployment = deploymentState(deps.config, deps.temporal.namespace);
  const checks = {
    database: database.reachable,
    migrations: database.migrationsCurrent === true,
    temporal: queue.error === null,
    workers: queue.workerConcurrency > 0,
    scheduler: scheduler.error === null,
  };
  return {
    workspaceId,
    queue: { ...queue, counts: runs ? { queued: runs.queued, running: runs.running, waiting: runs.waiting } : null },
    persistence: { durable: true, mode: 'postgresql' as const },
    database,
    scheduler,
    health: { ok: Object.values(checks).every(Boolean), checks },
    localAiCli,
    managedWorkspaces: managedWorkspacesState(queue.workerConcurrency),
    agentRuntime,
    sideEffectTransports: transports,
    deployment: { labels: deployment.labels },
    runs,
    recentRuns: recent,
    latestSmokeTest: latest,
    checkedAt: now.toISOString(),
  };
}

export type WorkerStatus = Awaited<ReturnType<typeof workerStatus>>;
