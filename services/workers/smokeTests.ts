/**
 * Worker smoke tests: run the real smoke workflow through a worker, remember the result as the
 * workspace's latest, and read it back.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { SmokeTestSchema, type SmokeTest, type SmokeTestStatus } from '../../db/entities';
import { newId } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { loadWorkflow } from '../workflows';
import { queueState, type WorkerHealthDeps } from './checks';
import { databaseNow } from './store';

export const START_WORKER_ACTION = 'Start a worker: npm run start:worker';
export const DEFAULT_WAIT_FOR_WORKER_MS = 10_000;

/** The wait for a worker, clamped to 100 ms .. 60 s (10 s when absent or not finite). */
export function clampWait(ms: number | undefined): number {
  if (ms === undefined || !Number.isFinite(ms)) return DEFAULT_WAIT_FOR_WORKER_MS;
  return Math.min(60_000, Math.max(100, Math.round(ms)));
}

/** A stored smoke test as answered; `taskQueue` fills the Temporal details of rows that lack them. */
export function smokeTestView(s: SmokeTest, taskQueue: string) {
  const details = s.details as { temporal?: unknown; targetWorkflowId?: string | null };
  return {
    id: s.id,
    status: s.status,
    message: s.message,
    durationMs: s.durationMs,
    checkedAt: s.createdAt.toISOString(),
    temporal: details.temporal ?? { workflowId: null, taskQueue, mode: 'temporal' },
    targetWorkflowId: details.targetWorkflowId ?? null,
  };
}

export type SmokeTestView = ReturnType<typeof smokeTestView>;

/** The workspace's newest smoke test, or null when none has run. */
export async function latestSmokeTest(em: EntityManager, workspaceId: string, taskQueue: string): Promise<SmokeTestView | null> {
  const latest = await em.findOne(SmokeTestSchema, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  return latest ? smokeTestView(latest, taskQueue) : null;
}

export interface SmokeTestRequest {
  /** A workflow of the principal's workspace the test is about (recorded only); checked to exist. */
  targetWorkflowId?: string | null;
  useQueue?: boolean;
  /** Clamped by `clampWait`. */
  waitForWorkerMs?: number;
}

/**
 * Starts the real smoke workflow and waits for a worker to finish it, then stores the result
 * as the workspace's latest. Outcome `passed`; `attention` when no worker completed it in
 * time (the execution is terminated); `failed` when Temporal refused the start or the
 * workflow failed. Throws notFound/forbidden for a target workflow that is missing or foreign.
 */
export async function runSmokeTest(
  deps: WorkerHealthDeps,
  em: EntityManager,
  principal: WorkspacePrincipal,
  request: SmokeTestRequest,
): Promise<{ outcome: SmokeTestStatus; smokeTest: SmokeTestView }> {
  const { workspaceId } = principal;
  const targetWorkflowId = request.targetWorkflowId ?? null;
  if (targetWorkflowId) await loadWorkflow(em, principal, targetWorkflowId);
  const waitForWorkerMs = clampWait(request.waitForWorkerMs);
  const taskQueue = deps.workerProbe.taskQueue;

  const id = newId('smk');
  const started = Date.now();
  const run = await deps.workerProbe.runSmoke({ workspaceId, message: `smoke test ${id}` }, waitForWorkerMs);
  let status: SmokeTestStatus;
  let message: string;
  if (run.kind === 'finished') {
    status = 'passed';
    message = `A worker on ${taskQueue} ran the smoke workflow and reached PostgreSQL.`;
  } else if (run.kind === 'noWorkerInTime') {
    status = 'attention';
    message = await noWorkerMessage(deps, waitForWorkerMs);
  } else {
    status = 'failed';
    message =
      run.reason === 'workflowFailed' ? 'The smoke workflow failed on the worker.' : 'Temporal refused to start the smoke workflow.';
  }

  const smoke: SmokeTest = {
    id,
    workspaceId,
    status,
    message,
    durationMs: Date.now() - started,
    details: {
      temporal: { workflowId: run.workflowId, taskQueue, mode: 'temporal' },
      targetWorkflowId,
      useQueue: request.useQueue ?? true,
      waitForWorkerMs,
      databaseTime: run.kind === 'finished' ? run.databaseTime : null,
    },
    createdAt: new Date(),
  };
  em.create(SmokeTestSchema, smoke);
  await em.flush();
  return { outcome: status, smokeTest: smokeTestView(smoke, taskQueue) };
}

/** Why no worker completed the smoke workflow, told from the task queue as it is now. */
async function noWorkerMessage(deps: WorkerHealthDeps, waitedMs: number): Promise<string> {
  const queue = await queueState(deps.workerProbe);
  if (queue.error !== null)
    return `No worker completed the smoke workflow within ${waitedMs} ms, and the ${queue.queueName} task queue could not be described.`;
  if (queue.workerConcurrency === 0) {
    return `No worker picked up the smoke workflow within ${waitedMs} ms: no worker is polling the ${queue.queueName} task queue. ${START_WORKER_ACTION}.`;
  }
  return `The smoke workflow did not complete within ${waitedMs} ms although ${queue.workerConcurrency} poller(s) are on the ${queue.queueName} task queue.`;
}

/**
 * The smoke workflow's one activity: echoes the message with the database clock, proving that
 * the worker which ran it reaches PostgreSQL.
 */
export async function answerSmokePing(em: EntityManager, message: string): Promise<{ message: string; databaseTime: string }> {
  return { message, databaseTime: (await databaseNow(em)).toISOString() };
}
