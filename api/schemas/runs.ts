import { z } from 'zod';
import { STEP_STATUSES, WORKFLOW_STATUSES } from '../../engine/statuses';
import { isoDate, logLevelSchema, redactionSchema, runStatusSchema, runTriggerSchema, url } from './index';

/** Response schemas of the runs area (run objects, execute receipts, status, approvals, resume). */

const userData = (description: string) => z.unknown().describe(description);
/** A capped user value: the value, or over 256 KiB of JSON a TruncatedValue marker. */

/** A user value over the full projection's cap (256 KiB of JSON), in place of the value. */
export const truncatedValueSchema = z
  .strictObject({
    truncated: z.literal(true),
    bytes: z.number().int().describe('Size of the whole value as UTF-8 JSON'),
    preview: z.string().describe('The first 1,024 characters of its JSON text'),
    href: url.describe('GET it for the whole value (`{ runId, nodeId, field, bytes, value }`)'),
  })
  .meta({ id: 'TruncatedValue' });

/** The whole value behind a truncated marker. */
const cappedData = (description: string) =>
  z
    .union([truncatedValueSchema, z.unknown()])
    .describe(`${description}; over 256 KiB of JSON a TruncatedValue marker \`{ truncated: true, bytes, preview, href }\``);

export const runValueSchema = z.strictObject({
  runId: z.string(),
  nodeId: z.string().nullable().describe('The step, or null for the run itself'),
  field: z.enum(['input', 'output']),
  bytes: z.number().int(),
  value: z.unknown().describe('The whole value, uncapped'),
});

export const runStepSchema = z.strictObject({
  nodeId: z.string(),
  iteration: z
    .number()
    .int()
    .describe('Which run of the node this step is: 0, or in a loop the iteration (docs/workflow-graph.md, "Loops")'),
  nodeType: z.string(),
  nodeName: z.string().nullable(),
  status: z.enum(STEP_STATUSES),
  attempts: z.number().int(),
  startedAt: isoDate.nullable(),
  finishedAt: isoDate.nullable(),
  durationMs: z.number().int().nullable(),
  input: cappedData('What the node received (full projection only)'),
  output: cappedData('What the node produced (full projection only)'),
  error: z.string().nullable(),
});

export const safeRunStepSchema = runStepSchema.omit({ input: true, output: true, error: true });

export const runLogSchema = z.strictObject({
  seq: z.number().int(),
  nodeId: z.string().nullable(),
  level: logLevelSchema,
  message: z.string(),
  data: userData('Structured data of the log entry'),
  createdAt: isoDate,
});

export const runWaitSchema = z.strictObject({
  kind: z.enum(['timer', 'approval', 'event']),
  nodeId: z.string(),
  since: isoDate,
  until: isoDate.optional(),
  expiresAt: isoDate.optional(),
  prompt: z.string().optional(),
  resumeUrl: url.optional().describe('Event waits: POST the event here (single use, no bearer)'),
});

export const executionEvidenceSchema = z.strictObject({
  requestedTarget: z.enum(['active', 'candidate']),
  versionId: z.string().nullable(),
  resourceMode: z.enum(['simulated', 'workspace-live']),
  reviewIdentity: z.string().nullable(),
});

/** When a run was created, started, finished and last changed, how long it ran and what it cost (services/runs/views.ts `runTimes`). */
export const runTimes = {
  createdAt: isoDate,
  startedAt: isoDate.nullable(),
  finishedAt: isoDate.nullable(),
  updatedAt: isoDate,
  durationMs: z.number().int().nullable(),
  costCredits: z.number(),
};

/** The destination a run went to, as runs and execution receipts name it. */
const destinationNamed = {
  targetId: z.string(),
  kind: z.enum(['production', 'preview']),
  name: z.string(),
};

const runIdentity = {
  id: z.string(),
  workspaceId: z.string(),
  workflowId: z.string(),
  versionId: z.string().nullable(),
  workflowName: z.string(),
  trigger: runTriggerSchema,
  status: runStatusSchema,
  active: z.boolean().describe('Not yet succeeded, failed or canceled'),
  ...runTimes,
  dryRun: z.boolean(),
  parentRunId: z.string().nullable(),
  parentNodeId: z.string().nullable(),
  executionTarget: z
    .strictObject({
      ...destinationNamed,
      activationId: z.string(),
      generation: z.number().int(),
    })
    .optional()
    .describe('Live runs of a named destination (executionTargetId, preview webhooks and schedules)'),
  simulationTargetId: z.string().optional().describe('Simulations that selected a destination (they ran its candidate)'),
};

/** The full run, for principals with write (secret-read) permission. */
export const fullRunSchema = z
  .strictObject({
    ...runIdentity,
    steps: z.array(runStepSchema),
    input: cappedData('The run input as given'),
    output: cappedData('The run output (null until it succeeds)'),
    error: z.string().nullable(),
    errorNodeId: z.string().nullable(),
    cancelReason: z.string().nullable(),
    logs: z.array(runLogSchema),
    waits: z.array(runWaitSchema).describe('Active durable waits'),
    executionEvidence: executionEvidenceSchema,
  })
  .meta({ id: 'Run' });

/** The `workspace-safe.v1` run: identity, status and timing only, plus the redaction marker. */
export const safeRunSchema = z
  .strictObject({ ...runIdentity, steps: z.array(safeRunStepSchema), redaction: redactionSchema })
  .meta({ id: 'SafeRun' });

export const runSchema = z
  .union([fullRunSchema, safeRunSchema])
  .describe('Full run, or its `workspace-safe.v1` projection for read-only principals');

export const runLinksSchema = z.strictObject({
  temporal: url.optional().describe('The execution in the Temporal Web UI, when TEMPORAL_UI_URL is set (never for dry runs)'),
  run: url,
  execution: url,
  status: url,
  rerun: url,
  cancel: url,
});

/**
 * What lists show (GET /api/v1/runs, GET /api/logs): identity, status, timing, cost and
 * counts; never input, output, steps or logs (GET /api/v1/runs/{id} has them).
 */
const runSummaryFields = {
  ...runIdentity,
  stepCount: z.number().int().describe('How many steps the run has recorded'),
  logCount: z.number().int().describe('How many log entries the run has'),
};
export const fullRunSummarySchema = z
  .strictObject({ ...runSummaryFields, error: z.string().nullable().describe('Full projection only') })
  .meta({ id: 'RunSummary' });
export const safeRunSummarySchema = z.strictObject({ ...runSummaryFields, redaction: redactionSchema }).meta({ id: 'SafeRunSummary' });
export const runSummarySchema = z
  .union([fullRunSummarySchema, safeRunSummarySchema])
  .describe('Run summary, or its `workspace-safe.v1` projection (no error) for read-only principals');

export const runWithLinksSchema = z.strictObject({ run: runSchema, links: runLinksSchema });
export const runListSchema = z.strictObject({ runs: z.array(runSummarySchema), links: z.array(runLinksSchema) });

const executionSchema = z.strictObject({
  workflowId: z.string().describe('The Temporal workflow id (the run id)'),
  taskQueue: z.string().nullable(),
  namespace: z.string().nullable(),
  mode: z.enum(['temporal', 'inline']),
  dryRun: z.boolean(),
  resourceMode: z.enum(['simulated', 'workspace-live']),
  target: z.enum(['active', 'candidate']),
  versionId: z.string().nullable(),
  destination: z
    .strictObject({
      ...destinationNamed,
      versionId: z.string(),
      simulated: z.boolean(),
    })
    .optional()
    .describe('With executionTargetId: the destination run (its active version) or simulated (its candidate)'),
});

export const queuedReceiptSchema = z.strictObject({
  run: runSchema,
  execution: executionSchema,
  queued: z.literal(true),
  statusUrl: url,
  cancelUrl: url,
  links: runLinksSchema,
});

export const dryRunReceiptSchema = z.strictObject({
  run: runSchema,
  execution: executionSchema,
  queued: z.literal(false),
  statusUrl: url,
  links: runLinksSchema,
});

export const rerunReceiptSchema = z.strictObject({ run: runSchema, statusUrl: url, cancelUrl: url, links: runLinksSchema });

const statusWorkflowSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  status: z.enum(WORKFLOW_STATUSES),
  activeVersionId: z.string().nullable(),
});

export const workflowRunsStatusSchema = z.strictObject({
  workflow: statusWorkflowSchema,
  runs: z.array(runSchema).describe('The 20 latest runs, each with its last 20 logs'),
  statuses: z.record(runStatusSchema, z.number().int()).describe('How many of those runs are in each status'),
});

export const runStatusReportSchema = z.strictObject({
  workflow: statusWorkflowSchema,
  projection: z.strictObject({ kind: z.literal('workflow-status'), version: z.literal(1), redacted: z.boolean() }),
  run: runSchema,
  status: runStatusSchema,
  queued: z.boolean(),
  active: z.boolean(),
  output: userData('The run output; absent when redacted').optional(),
  error: z.string().nullable().optional().describe('Absent when redacted'),
  steps: z.array(z.union([runStepSchema, safeRunStepSchema])),
  logs: z.array(runLogSchema).optional().describe('The last 20 logs; absent when redacted'),
  links: runLinksSchema.extend({ workflow: url }),
  pollAfterMs: z.number().int().describe('0 once the run ended'),
});

export const approvalResultSchema = z.strictObject({
  approval: z.strictObject({ nodeId: z.string(), decision: z.enum(['approved', 'rejected']) }),
  run: runSchema,
});

/** 202: no worker decided in time, so the decision was queued for the next one (the run still waits). */
export const approvalQueuedSchema = approvalResultSchema.extend({ queued: z.literal(true) });

export const resumeResultSchema = z.strictObject({ runId: z.string(), nodeId: z.string(), status: z.literal('resumed') });
