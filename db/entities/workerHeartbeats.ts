import { p, type InferEntity } from '@mikro-orm/core';
import { entity, timestamptz } from './columns';

/** What a worker process last reported: `running` while it polls; `failed`/`stopped` are its last word. */
export type WorkerHeartbeatState = 'starting' | 'running' | 'draining' | 'failed' | 'stopped';

export const WorkerHeartbeatSchema = entity('WorkerHeartbeat', 'worker_heartbeats', {
  /** The worker's Temporal identity (`pid@host` plus a random suffix: unique per process start). */
  id: p.string().primary(),
  host: p.string(),
  pid: p.integer(),
  state: p.string().$type<WorkerHeartbeatState>(),
  /** Why it failed (the SDK's error message, bounded), when `state` is `failed`. */
  lastError: p.text().nullable(),
  startedAt: timestamptz('started_at'),
  beatAt: timestamptz('beat_at'),
});
/**
 * One worker process's heartbeat (services/workers/heartbeat.ts). The API's readiness needs a
 * fresh beat of a `running` worker; `beatAt` is the database's clock, so hosts with skewed
 * clocks compare alike.
 */
export type WorkerHeartbeat = InferEntity<typeof WorkerHeartbeatSchema>;
