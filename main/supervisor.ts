/**
 * The process supervisor of `npm start`: runs the API and the worker as separate child
 * processes (several of each when asked), restarts any child that exits, and stops them all on
 * SIGINT/SIGTERM. It is deliberately small and does no work of the service itself, so nothing a
 * tenant sends can take it down; Temporal and PostgreSQL hold everything accepted, so a child's
 * crash loses no accepted request (webhooks sit in the outbox, runs in Temporal).
 *
 * API processes are forked through node's `cluster`: their `listen()` on the same port is
 * served by one socket held here, and connections are handed out round-robin. Node 20 has no
 * `reusePort` on `net.Server` (it arrived in 22.12), and a reverse proxy in front would be one
 * more process to supervise. Workers need no port and are plain `child_process.fork`s.
 */
import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import {
  CHILD_STARTED_MESSAGE,
  PROCESS_RESTARTS_MESSAGE,
  PROCESS_RESTARTS_REQUEST,
  SUPERVISED_ENV,
  type ProcessRestartsMessage,
} from '../services/kernel/lifecycle';

export type ChildRole = 'api' | 'worker';

export interface ChildSpec {
  role: ChildRole;
  /** How many processes of this role run side by side. */
  count: number;
  /** The entry point (`main/api.ts` or `main/worker.ts`, `.js` in the built image). */
  module: string;
  /** `--max-old-space-size` of each process: a runaway heap ends in a restart, not in swap. */
  heapMb: number;
  /** Environment on top of the supervisor's; `slot` numbers the processes of a role from 0. */
  env: (slot: number) => Record<string, string>;
}

export interface BackoffSettings {
  /** Delay before the first restart of a process that crashed. */
  initialMs: number;
  /** Cap of the doubling delay of a process that keeps crashing. */
  maxMs: number;
  /** A process that ran this long before exiting is restarted after `initialMs` again. */
  stableMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { initialMs: 500, maxMs: 30_000, stableMs: 30_000 };

/** How long children get to drain after SIGTERM before they are killed. */
const STOP_GRACE_MS = 35_000;

/** Node flags every child gets besides the heap cap; the same as docker-compose.yml's. */
const CHILD_NODE_FLAGS = ['--max-semi-space-size=4'];

interface Slot {
  role: ChildRole;
  index: number;
  spec: ChildSpec;
  child: ChildProcess | null;
  startedAt: number;
  /** Crashes in a row without a stable period in between (the backoff exponent). */
  crashes: number;
  /** Whether a process of this slot has reported that it serves, at least once. */
  served: boolean;
  restartTimer: NodeJS.Timeout | null;
}

export interface Supervisor {
  /** Restarts so far, per role (what the API processes report as `svc_process_restarts_total`). */
  restarts(): Record<ChildRole, number>;
  /** Live child pids per role (tests and logs). */
  pids(): Record<ChildRole, number[]>;
  /** Resolves once every process has served once (the API listens, each worker polls); restarts meanwhile are waited for. */
  ready: Promise<void>;
  /** SIGTERM to every child, no more restarts; resolves once all exited (SIGKILL after the grace period). */
  stop(): Promise<void>;
}

/** The delay before restarting a process that has crashed `crashes` times in a row. */
export function restartDelay(crashes: number, backoff: BackoffSettings): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, crashes - 1));
}

/**
 * Starts every child of `specs` and keeps them running. The restart count reaches the API
 * processes over the fork IPC channel (a message at their start and after every restart): the
 * supervisor is the only one that sees exits, the children already have that channel, and
 * this way no extra port or table is needed. Every API process holds the same totals, so a
 * scrape that lands on any of them reads the supervisor's count.
 */
export function startSupervisor(opts: { specs: ChildSpec[]; logger: Logger; backoff?: BackoffSettings; execArgv?: string[] }): Supervisor {
  const { logger } = opts;
  const backoff = opts.backoff ?? DEFAULT_BACKOFF;
  // The supervisor's own flags (tsx's loader when run from sources) minus any heap cap of its own.
  const baseArgv = (opts.execArgv ?? process.execArgv).filter(
    (a) => !a.startsWith('--max-old-space-size') && !a.startsWith('--max-semi-space-size'),
  );
  const restarts: Record<ChildRole, number> = { api: 0, worker: 0 };
  const slots: Slot[] = opts.specs.flatMap((spec) =>
    Array.from({ length: spec.count }, (_, index) => ({
      role: spec.role,
      index,
      spec,
      child: null,
      startedAt: 0,
      crashes: 0,
      served: false,
      restartTimer: null,
    })),
  );
  let stopping = false;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const restartsMessage = (): ProcessRestartsMessage => ({ type: PROCESS_RESTARTS_MESSAGE, restarts: { ...restarts } });
  const tell = (child: ChildProcess) => {
    if (!child.connected) return;
    // A child that is exiting right now cannot take it; it gets the totals again when restarted.
    child.send(restartsMessage(), (err) => err && logger.debug({ err }, 'restart count not delivered'));
  };
  const tellApis = () => {
    for (const s of slots) if (s.role === 'api' && s.child) tell(s.child);
  };

  const spawn = (slot: Slot) => {
    const execArgv = [...baseArgv, ...CHILD_NODE_FLAGS, `--max-old-space-size=${slot.spec.heapMb}`];
    const env = { ...process.env, ...slot.spec.env(slot.index), [SUPERVISED_ENV]: '1' };
    let child: ChildProcess;
    if (slot.role === 'api') {
      cluster.setupPrimary({ exec: slot.spec.module, execArgv, args: [] });
      const worker: ClusterWorker = cluster.fork(env);
      child = worker.process;
    } else {
      child = fork(slot.spec.module, [], { execArgv, env });
    }
    child.on('message', (m: { type?: unknown } | null) => {
      // An API process asks for the totals once its metrics listen (services/platform/metrics.ts).
      if (m?.type === PROCESS_RESTARTS_REQUEST) tell(child);
      if (m?.type === CHILD_STARTED_MESSAGE) {
        slot.served = true;
        logger.info({ role: slot.role, slot: slot.index, childPid: child.pid }, 'child process serves');
        if (slots.every((s) => s.served)) markReady();
      }
    });
    slot.child = child;
    slot.startedAt = Date.now();
    logger.info({ role: slot.role, slot: slot.index, childPid: child.pid, heapMb: slot.spec.heapMb }, 'child process started');
    child.once('exit', (code, signal) => onExit(slot, child, code, signal));
  };

  const onExit = (slot: Slot, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) => {
    if (slot.child !== child) return;
    slot.child = null;
    if (stopping) {
      logger.info({ role: slot.role, slot: slot.index, childPid: child.pid, code, signal }, 'child process stopped');
      return;
    }
    const ranMs = Date.now() - slot.startedAt;
    slot.crashes = ranMs >= backoff.stableMs ? 1 : slot.crashes + 1;
    const delayMs = restartDelay(slot.crashes, backoff);
    restarts[slot.role] += 1;
    logger.warn(
      { role: slot.role, slot: slot.index, childPid: child.pid, code, signal, ranMs, delayMs, restarts: restarts[slot.role] },
      `${slot.role} process exited; restarting`,
    );
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = null;
      if (stopping) return;
      spawn(slot);
      tellApis();
    }, delayMs);
  };

  for (const slot of slots) spawn(slot);

  return {
    ready,
    restarts: () => ({ ...restarts }),
    pids: () => {
      const out: Record<ChildRole, number[]> = { api: [], worker: [] };
      for (const s of slots) if (s.child?.pid) out[s.role].push(s.child.pid);
      return out;
    },
    stop: async () => {
      stopping = true;
      const exits: Array<Promise<unknown>> = [];
      for (const slot of slots) {
        if (slot.restartTimer) clearTimeout(slot.restartTimer);
        const child = slot.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) continue;
        exits.push(new Promise((resolve) => child.once('exit', resolve)));
        child.kill('SIGTERM');
      }
      let timer: NodeJS.Timeout | undefined;
      const killAll = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          for (const s of slots) if (s.child && s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
          resolve();
        }, STOP_GRACE_MS);
      });
      await Promise.race([Promise.all(exits), killAll]);
      clearTimeout(timer);
      await Promise.all(exits);
    },
  };
}
