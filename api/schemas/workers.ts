import { z } from 'zod';
import { RUN_STATUSES } from '../../engine/statuses';
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
  counts: z
    .strictObject({ queued: z.number().int(), running: z.number().int(), waiting: z.number().int() })
    .nullable()
    .describe("The workspace's open runs by status; null when the database is unreachable"),
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

const schedulerSchema = z.strictObject({
  mode: z.literal('temporal-schedules'),
  schedules: z.number().int().nullable(),
  error: z.string().nullable(),
});

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

const localAiCliKindSchema = z.enum(['cliA', 'cliB']);
const localAiCliStatusSchema = z.enum([
  'not_configured',
  'not_installed',
  'unavailable',
  'not_prepared',
  'prepared',
  'needs_login',
  'login_pending',
  'connected',
  'disconnected',
]);

const storedLocalAiCliSchema = z.strictObject({
  kind: localAiCliKindSchema,
  configured: z.boolean(),
  status: localAiCliStatusSchema,
  connected: z.boolean(),
  authMethod: z.enum(['token', 'login']).nullable(),
  loginPending: z.boolean(),
  lastVerifiedAt: isoDate.nullable(),
});

const localAiCliSectionSchema = z
  .strictObject({ cliA: storedLocalAiCliSchema, cliB: storedLocalAiCliSchema })
  .nullable()
  .describe('The sessions as last verified (no CLI is run); null when the database is unreachable');

const managedWorkspacesSchema = z.strictObject({
  mode: z.literal('shared-task-queue'),
  allWorkspaces: z.literal(true),
  thisWorkspaceServed: z.boolean(),
});

const agentRuntimeSchema = z.strictObject({
  modelEndpoint: z.strictObject({
    configured: z.boolean(),
    reachable: z.boolean().nullable(),
    status: z.enum(['not_configured', 'reachable', 'unreachable', 'timed_out', 'refused']),
    httpStatus: z.number().int().nullable(),
    latencyMs: z.number().int().nullable(),
  }),
  connectedLocalAiClis: z.array(localAiCliKindSchema),
  ready: z.boolean(),
});

const sideEffectTransportsSchema = z
  .strictObject({
    mail: z.strictObject({
      inbound: z.literal('signed-webhook'),
      outbound: z.literal('smtp').nullable(),
      providers: z.array(z.string()),
      imapCredentials: z.number().int(),
    }),
    smtp: z.strictObject({ configured: z.boolean(), credentials: z.number().int() }),
    httpGuard: z.strictObject({ enabled: z.literal(true), privateNetworksAllowed: z.boolean() }),
  })
  .nullable();

const extflowSectionSchema = z.strictObject({
  imported: z.boolean(),
  bundlePath: z.string().nullable(),
  workflows: z.number().int(),
  message: z.string(),
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
      checks: z.strictObject({
        database: z.boolean(),
        migrations: z.boolean(),
        temporal: z.boolean(),
        workers: z.boolean(),
        scheduler: z.boolean(),
      }),
    }),
    localAiCli: localAiCliSectionSchema,
    managedWorkspaces: managedWorkspacesSchema,
    agentRuntime: agentRuntimeSchema,
    sideEffectTransports: sideEffectTransportsSchema,
    deployment: z.strictObject({ labels: z.record(z.string(), z.string()) }).describe('Kinds and on/off labels, never addresses or values'),
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
    deployment: z.strictObject({ missingRequired: z.array(z.string()), missingOptional: z.array(z.string()) }),
    localAiCli: localAiCliSectionSchema,
    managedWorkspaces: managedWorkspacesSchema,
    agentRuntime: agentRuntimeSchema,
    extflowBundle: extflowSectionSchema.describe('The extflow bundle section (filled by the extflow import)'),
    blockers: z.array(z.string()),
    warnings: z.array(z.string()),
    nextActions: z.array(z.string()),
  }),
});

export const smokeTestResultSchema = z.strictObject({ smokeTest: smokeTestSchema });

const readinessSchema = z.strictObject({
  workspaceId: z.string(),
  kind: localAiCliKindSchema,
  action: z.enum(['prepare', 'verify', 'disconnect', 'login', 'callback', 'token']),
  status: localAiCliStatusSchema,
  configured: z.boolean(),
  installed: z.boolean().nullable(),
  version: z.string().nullable(),
  authenticated: z.boolean(),
  authMethod: z.enum(['token', 'login']).nullable(),
  configDirReady: z.boolean(),
  loginPending: z.boolean(),
  loginExpiresAt: isoDate.nullable(),
  lastVerifiedAt: isoDate.nullable(),
  message: z.string(),
  nextAction: z.string().nullable(),
});

export const localAiCliSessionResultSchema = z.strictObject({ session: readinessSchema });

export const localAiCliLoginResultSchema = z.strictObject({
  login: z.strictObject({ kind: localAiCliKindSchema, authorizationUrl: z.string(), expiresAt: isoDate }),
  session: readinessSchema,
});

export const localAiCliModelsResultSchema = z.strictObject({
  kind: localAiCliKindSchema,
  models: z.array(z.strictObject({ id: z.string(), name: z.string() })),
});
