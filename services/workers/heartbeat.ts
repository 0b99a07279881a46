/**
 * Worker heartbeats: how the API (another process, often another container) knows whether any
 * worker is polling. Each worker process upserts its row every `intervalMs` with the state its
 * Temporal worker reports, and writes `failed` (with the reason) before it exits on a failure.
 * Readiness (services/platform/health.ts) asks for a fresh beat of a `running` worker, so a worker that
 * failed says so at once and one that was killed -9 goes stale within the staleness window.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { WorkerHeartbeatState } from '../../db/entities';
import { storableString } from '../kernel/storableText';
import { forgetHeartbeatsOlderThan, freshHeartbeatsByState, upsertBeat } from './store';

/** The Temporal SDK's worker states (`Worker.getState()`), named here so services stay SDK-free. */
export type SdkWorkerState = 'INITIALIZED' | 'RUNNING' | 'STOPPED' | 'STOPPING' | 'DRAINING' | 'DRAINED' | 'FAILED';

const STATE_OF: Record<SdkWorkerState, WorkerHeartbeatState> = {
  INITIALIZED: 'starting',
  RUNNING: 'running',
  STOPPING: 'draining',
  DRAINING: 'draining',
  DRAINED: 'draining',
  STOPPED: 'stopped',
  FAILED: 'failed',
};

/** Rows of processes gone for longer than this are deleted by the next worker that starts. */
const FORGET_AFTER = '1 day';
const MAX_ERROR_CHARS = 2_000;

export interface WorkerHeartbeatHandle {
  /** Writes the final state (`failed` with its reason, or `stopped`) and stops beating; never throws. */
  finish(state: 'failed' | 'stopped', error?: unknown): Promise<void>;
}

/**
 * Beats for one worker process until `finish`. A beat that cannot be written (database away) is
 * logged and the next one tries again; beats never overlap. `onFatal` is called once when the
 * SDK reports `FAILED`, the state in which the worker no longer polls but the process would
 * otherwise live on (issue 26, F1).
 */
export function startWorkerHeartbeat(opts: {
  orm: MikroORM;
  identity: string;
  host: string;
  pid: number;
  intervalMs: number;
  sdkState: () => SdkWorkerState;
  onFatal: (reason: string) => void;
  logger: Logger;
}): WorkerHeartbeatHandle {
  let finished = false;
  let fatalReported = false;
  // A slow database must not pile up beats: a tick while the last beat is pending is skipped.
  let busy = false;
  let inFlight: Promise<void> = Promise.resolve();
  const write = (state: WorkerHeartbeatState, error: string | null) =>
    upsertBeat(opts.orm.em.fork(), { id: opts.identity, host: opts.host, pid: opts.pid, state, error });

  const tick = () => {
    if (finished || busy) return;
    const sdk = opts.sdkState();
    if (sdk === 'FAILED' && !fatalReported) {
      fatalReported = true;
      opts.onFatal('the Temporal worker reports FAILED');
      return;
    }
    busy = true;
    inFlight = write(STATE_OF[sdk], null)
      .catch((err) => opts.logger.warn({ err }, 'worker heartbeat not written; retrying'))
      .finally(() => (busy = false));
  };
  // Forgetting long-gone processes is housekeeping: its failure must not stop the worker.
  void forgetHeartbeatsOlderThan(opts.orm.em.fork(), FORGET_AFTER).catch(() => undefined);
  tick();
  const timer = setInterval(tick, opts.intervalMs);
  timer.unref();

  return {
    async finish(state, error) {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      await inFlight;
      const message =
        error === undefined ? null : storableString((error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_CHARS));
      await write(state, message).catch((err) => opts.logger.warn({ err }, 'final worker heartbeat not written'));
    },
  };
}

/** What readiness learns from the heartbeats: fresh beats by state, and the newest failure's reason. */
export interface WorkerFleetState {
  /** Workers whose latest beat is fresh, by state. */
  fresh: Record<WorkerHeartbeatState, number>;
  /** The reason of the most recent `failed` beat among the fresh ones, if any. */
  lastFailure: string | null;
}

/** Reads the fresh heartbeats (beat within `staleMs`, by the database's clock). */
export async function workerFleetState(em: EntityManager, staleMs: number): Promise<WorkerFleetState> {
  const rows = await freshHeartbeatsByState(em, staleMs);
  const fresh: Record<WorkerHeartbeatState, number> = { starting: 0, running: 0, draining: 0, failed: 0, stopped: 0 };
  let lastFailure: string | null = null;
  for (const r of rows) {
    fresh[r.state] = r.n;
    if (r.state === 'failed') lastFailure = r.last_error;
  }
  return { fresh, lastFailure };
}
