import { z } from 'zod';
import { RUN_STATUSES } from '../../db/entities';
import { isoDate, runStatusSchema, runTriggerSchema } from './index';

/**
 * Response schemas of the workers area (status, doctor, smoke test). Measured live; no field
 * carries a connection string, an address or an environment variable name.
 */

const pollerSchema = z.strictObject({ identity: z.string(), lastAccessTime: isoDate.nullable() });

const queueSchema = z.strictObject({
  mode: z.literal('temporal'),
  queueName: z.string(),
  workerConcurrency: z.number().int().describe('Pollers on the task queue'),
  pollers: z.array(pollerSchema),
  backlog: z.number().int().nullable(),
  error: z.string().nullable(),
});

const persistenceSchema = z.strictObject({ durable: z.literal(true), mode: z.literal('postgresql') });

const databaseSchema = z.strictObject({
  reachable: z.boolean(),
  latencyMs: z.number().int(),
  migrationsCurrent: z.boolean().nullable(),
  pendingMigrations: z.array(z.string()),
  error: z.string().nullable(),
});

const schedulerSchema = z.strictObject({ mode: z.literal('temporal-schedules'), schedules: z.number().int().nullable(), error: z.string().nullable() });

export const smokeTestSchema = z.strictObject({
  id: z.string(),
  status: z.enum(['passed', 'attention', 'failed']),
  message: z.string(),
  durationMs: z.number().int(),
  checkedAt: isoDate,
  temporal: z.strictObject({ workflowId: z.string().nullable(), taskQueue: z.string(), mode: z.literal('temporal') }),
  targetWorkflowId: z.string().nullable(),
});

const runCountersSchema = z.strictObject({
  total: z.number().int(),
  ...Object.fromEntries(RUN_STATUSES.map((s) => [s, z.number().int()])),
});

const recentRunSchema = z.strictObject({
  id: z.string(),
  workflowId: z.string(),
  workflowName: z.string(),
  status: runStatusSchema,
  trigger: runTriggerSchema,
  dryRun: z.boolean(),
  createdAt: isoDate,
  finishedAt: isoDate.nullable(),
  durationMs: z.number().int().nullable(),
});

export const workerStatusSchema = z.strictObject({
  status: z.strictObject({
    workspaceId: z.string(),
    queue: queueSchema,
    persistence: persistenceSchema,
    database: databaseSchema,
    scheduler: schedulerSchema,
    health: z.strictObject({
      ok: z.boolean(),
      checks: z.strictObject({ database: z.boolean(), migrations: z.boolean(), temporal: z.boolean(), workers: z.boolean(), scheduler: z.boolean() }),
    }),
    runs: runCountersSchema.nullable().describe('Null when the database is unreachable'),
    recentRuns: z.array(recentRunSchema).describe('The 5 newest runs'),
    latestSmokeTest: smokeTestSchema.nullable(),
    checkedAt: isoDate,
  }),
});

export const workerDoctorSchema = z.strictObject({
  doctor: z.strictObject({
    status: z.enum(['ok', 'attention', 'blocked']),
    workspaceId: z.string(),
    checkedAt: isoDate,
    source: z.literal('api'),
    appUrl: z.string(),
    persistence: persistenceSchema,
    database: databaseSchema,
    queue: queueSchema.omit({ pollers: true }),
    scheduler: schedulerSchema.omit({ error: true }),
    workerHealth: z.strictObject({ ok: z.boolean(), pollers: z.number().int(), latestSmokeTest: smokeTestSchema.nullable() }),
    blockers: z.array(z.string()),
    warnings: z.array(z.string()),
    nextActions: z.array(z.string()),
  }),
});

export const smokeTestResultSchema = z.strictObject({ smokeTest: smokeTestSchema });
