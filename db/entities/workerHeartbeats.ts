import { EntitySchema } from '@mikro-orm/core';

/** What a worker process last reported: `running` while it polls; `failed`/`stopped` are its last word. */
export type WorkerHeartbeatState = 'starting' | 'running' | 'draining' | 'failed' | 'stopped';

/**
 * One worker process's heartbeat (services/workers/heartbeat.ts). The API's readiness needs a
 * fresh beat of a `running` worker; `beatAt` is the database's clock, so hosts with skewed
 * clocks compare alike.
 */
export interface WorkerHeartbeat {
  /** The worker's Temporal identity (`pid@host` plus a random suffix: unique per process start). */
  id: string;
  host: string;
  pid: number;
  state: WorkerHeartbeatState;
  /** Why it failed (the SDK's error message, bounded), when `state` is `failed`. */
  lastError: string | null;
  startedAt: Date;
  beatAt: Date;
}

export const WorkerHeartbeatSchema = new EntitySchema<WorkerHeartbeat>({
  name: 'WorkerHeartbeat',
  tableName: 'worker_heartbeats',
  properties: {
    id: { type: 'string', primary: true },
    host: { type: 'string' },
    pid: { type: 'integer' },
    state: { type: 'string' },
    lastError: { type: 'text', fieldName: 'last_error', nullable: true },
    startedAt: { type: 'Date', fieldName: 'started_at', columnType: 'timestamptz' },
    beatAt: { type: 'Date', fieldName: 'beat_at', columnType: 'timestamptz' },
  },
});
