import { z } from 'zod';
import path from 'node:path';
import { defineArea, invalidConfiguration } from './define';

/**
 * Old-space heap caps of the supervised processes (`--max-old-space-size`), so a runaway ends in
 * a restart rather than in swap. The worker's is larger: it holds the sticky cache of runs and
 * the workflow bundle's V8 contexts.
 */
export const DEFAULT_API_HEAP_MB = 512;
export const DEFAULT_WORKER_HEAP_MB = 1024;

/** How `npm start` runs the service (main/supervisor.ts), where it keeps local state, and how workers report that they are alive. */
export const processesArea = defineArea('processes', 'Processes', {
  DATA_DIR: z.string().default('.data').describe('Local state of `npm start` (Temporal SQLite file, embedded PostgreSQL).'),
  API_PROCESSES: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe('API processes `npm start` runs; they share `PORT` (node cluster), each restarted by the supervisor when it exits.'),
  WORKERS: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe('Worker processes `npm start` runs on `workflow-runs` (compose: `--scale worker=N`).'),
  API_HEAP_MB: z.coerce
    .number()
    .int()
    .min(64)
    .max(65_536)
    .default(DEFAULT_API_HEAP_MB)
    .describe('`--max-old-space-size` of each API process (npm start and compose): a runaway heap ends in a restart, not in swap.'),
  WORKER_HEAP_MB: z.coerce
    .number()
    .int()
    .min(64)
    .max(65_536)
    .default(DEFAULT_WORKER_HEAP_MB)
    .describe('The same, for each worker process.'),
  WORKER_HEARTBEAT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(60_000)
    .default(1_000)
    .describe('How often each worker process writes its row in `worker_heartbeats`.'),
  WORKER_HEARTBEAT_STALE_MS: z.coerce
    .number()
    .int()
    .min(500)
    .max(300_000)
    .default(3_000)
    .describe('`/readyz` needs a `running` worker beat younger than this.'),
});

export type ProcessesEnv = z.output<typeof processesArea.schema>;

export interface ProcessSettings {
  /** API_PROCESSES: API processes `npm start` runs; they share the port (node's cluster). */
  apiProcesses: number;
  /** WORKERS: worker processes `npm start` runs on the same task queue. */
  workers: number;
  /** API_HEAP_MB / WORKER_HEAP_MB: `--max-old-space-size` of each API and worker process. */
  apiHeapMb: number;
  workerHeapMb: number;
  /** WORKER_HEARTBEAT_MS: how often a worker writes its heartbeat row. */
  heartbeatMs: number;
  /** WORKER_HEARTBEAT_STALE_MS: a beat older than this does not make the API ready. */
  heartbeatStaleMs: number;
}

export interface ProcessesConfig {
  /** DATA_DIR, resolved. */
  dataDir: string;
  /** How `npm start` runs the service (main/supervisor.ts) and how workers report that they are alive. */
  processes: ProcessSettings;
}

export function processesConfig(e: ProcessesEnv): ProcessesConfig {
  if (e.WORKER_HEARTBEAT_STALE_MS < 2 * e.WORKER_HEARTBEAT_MS) {
    throw invalidConfiguration(
      'WORKER_HEARTBEAT_STALE_MS must be at least twice WORKER_HEARTBEAT_MS (one late beat must not make the API unready).',
    );
  }
  return {
    dataDir: path.resolve(e.DATA_DIR),
    processes: {
      apiProcesses: e.API_PROCESSES,
      workers: e.WORKERS,
      apiHeapMb: e.API_HEAP_MB,
      workerHeapMb: e.WORKER_HEAP_MB,
      heartbeatMs: e.WORKER_HEARTBEAT_MS,
      heartbeatStaleMs: e.WORKER_HEARTBEAT_STALE_MS,
    },
  };
}
