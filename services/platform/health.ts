import type { EntityManager } from '@mikro-orm/postgresql';
import { workerFleetState, type WorkerFleetState } from '../workers/heartbeat';
import { pingDatabase } from './store';

const CHECK_TIMEOUT_MS = 2_000;

/** One dependency's answer to a readiness check; `error` never carries connection details. */
export interface DependencyCheck {
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export interface ServiceReadiness {
  status: 'ready' | 'not_ready' | 'shutting_down';
  checks: { database: DependencyCheck; temporal: DependencyCheck; worker: DependencyCheck };
  /** Workers with a fresh heartbeat, by state (services/workers/heartbeat.ts). */
  workers: WorkerFleetState['fresh'];
}

/**
 * Whether this process should receive traffic: PostgreSQL and Temporal answer within 2 s each
 * (checked in parallel), at least one worker process beat `running` within `workerStaleMs`, and
 * shutdown has not started. The Temporal check is passed in as a ping so this module stays free
 * of the Temporal client. Without a polling worker nothing accepted would run, so the API is
 * not ready then, even though it could still accept (and durably store) webhooks.
 */
export async function checkReadiness(
  em: EntityManager,
  probes: { pingTemporal: () => Promise<unknown>; shuttingDown: boolean; workerStaleMs: number },
): Promise<ServiceReadiness> {
  let fleet: WorkerFleetState | null = null;
  const [database, temporal, workerRead] = await Promise.all([
    timed(() => pingDatabase(em)),
    timed(probes.pingTemporal),
    timed(async () => (fleet = await workerFleetState(em, probes.workerStaleMs))),
  ]);
  const found = fleet as WorkerFleetState | null;
  const workers = found?.fresh ?? { starting: 0, running: 0, draining: 0, failed: 0, stopped: 0 };
  const worker: DependencyCheck = !workerRead.ok
    ? workerRead
    : workers.running > 0
      ? workerRead
      : {
          ok: false,
          latencyMs: workerRead.latencyMs,
          error: found?.lastFailure ? 'no running worker; the last one failed' : 'no running worker',
        };
  const checks = { database, temporal, worker };
  if (probes.shuttingDown) return { status: 'shutting_down', checks, workers };
  return { status: database.ok && temporal.ok && worker.ok ? 'ready' : 'not_ready', checks, workers };
}

/** Runs a dependency check with a deadline; reports failures without their connection details. */
async function timed(check: () => Promise<unknown>): Promise<DependencyCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    const message = (err as Error).message === 'timed out' ? 'timed out' : 'unreachable';
    return { ok: false, latencyMs: Math.round(performance.now() - started), error: message };
  } finally {
    clearTimeout(timer);
  }
}
