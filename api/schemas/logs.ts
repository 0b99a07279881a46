import { z } from 'zod';
import { STEP_STATUSES } from '../../engine/statuses';
import { RUN_SORTS } from '../../services/runs/queries';
import { isoDate, logLevelSchema, runStatusSchema, runTriggerSchema, url } from './index';
import { runSchema, runSummarySchema as listedRunSchema, runTimes } from './runs';

/** Response schemas of the logs area (stats, JSON export, execution detail). */

export const echoedFiltersSchema = z
  .strictObject({
    status: z.string().nullable(),
    trigger: z.string().nullable(),
    workflowId: z.string().nullable(),
    level: z.string().nullable(),
    dateFrom: z.string().nullable(),
    dateTo: z.string().nullable(),
    query: z.string().nullable(),
    sort: z.enum(RUN_SORTS),
    limit: z.number().int(),
  })
  .describe('The filters applied; inactive ones (missing, empty, `all`) are null');

const runSummarySchema = z.strictObject({
  id: z.string(),
  workflowId: z.string(),
  workflowName: z.string(),
  status: runStatusSchema,
  trigger: runTriggerSchema,
  createdAt: isoDate,
  startedAt: isoDate.nullable(),
  finishedAt: isoDate.nullable(),
  durationMs: z.number().int().nullable(),
  costCredits: z.number(),
  error: z.string().nullable().optional().describe('Full projection only'),
  executionUrl: url,
});

export const logStatsSchema = z.strictObject({
  workspaceId: z.string(),
  filters: echoedFiltersSchema,
  generatedAt: isoDate,
  stats: z.strictObject({
    totalRuns: z.number().int(),
    failedRuns: z.number().int(),
    succeededRuns: z.number().int(),
    averageDurationMs: z.number(),
    totalCostCredits: z.number(),
    successRate: z.number().min(0).max(100).describe('Percent of terminal runs that succeeded, two decimals'),
    activeRuns: z.number().int(),
    p95DurationMs: z.number(),
    statusBreakdown: z.array(z.strictObject({ status: runStatusSchema, count: z.number().int() })),
    triggerBreakdown: z.array(z.strictObject({ trigger: runTriggerSchema, count: z.number().int() })),
    slowestRuns: z.array(runSummarySchema).describe('Top 5 by duration'),
    recentFailures: z.array(runSummarySchema).describe('The 5 newest failed runs'),
  }),
});

export const logExportSchema = z.strictObject({
  workspaceId: z.string(),
  exportedAt: isoDate,
  filters: echoedFiltersSchema,
  runCount: z.number().int(),
  runs: z.array(runSchema),
});

const relatedRunSchema = z.strictObject({
  id: z.string(),
  workflowId: z.string(),
  workflowName: z.string(),
  status: runStatusSchema,
  trigger: runTriggerSchema,
  parentNodeId: z.string().nullable(),
  createdAt: isoDate,
  finishedAt: isoDate.nullable(),
  executionUrl: url,
});

const timelineEntrySchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('run'), at: isoDate, event: z.enum(['created', 'started', 'finished']), status: runStatusSchema }),
  z.strictObject({
    type: z.literal('step'),
    at: isoDate,
    nodeId: z.string(),
    nodeType: z.string(),
    nodeName: z.string().nullable(),
    status: z.enum(STEP_STATUSES),
    attempts: z.number().int(),
    durationMs: z.number().int().nullable(),
  }),
  z.strictObject({
    type: z.literal('log'),
    at: isoDate,
    seq: z.number().int(),
    nodeId: z.string().nullable(),
    level: logLevelSchema,
    message: z.string().optional().describe('Full projection only'),
  }),
]);

export const executionDetailSchema = z.strictObject({
  executionId: z.string().describe('The run id'),
  workflowId: z.string(),
  workflowState: z.strictObject({
    status: runStatusSchema,
    active: z.boolean(),
    terminal: z.boolean(),
    waiting: z.boolean(),
    waitCount: z.number().int(),
    stepCount: z.number().int(),
    failedStepCount: z.number().int(),
    lastNodeId: z.string().nullable(),
  }),
  executionMetadata: z.strictObject({
    trigger: runTriggerSchema,
    versionId: z.string().nullable(),
    dryRun: z.boolean(),
    ...runTimes,
    temporal: z
      .strictObject({ workflowId: z.string(), namespace: z.string(), taskQueue: z.string() })
      .nullable()
      .describe('Null for dry runs, which never reach Temporal'),
  }),
  relatedRuns: z.strictObject({ parentRun: relatedRunSchema.optional(), childRuns: z.array(relatedRunSchema) }),
  nodeRunStates: z.record(
    z.string(),
    z.strictObject({
      status: z.enum(STEP_STATUSES),
      attempts: z.number().int(),
      startedAt: isoDate.nullable(),
      finishedAt: isoDate.nullable(),
      durationMs: z.number().int().nullable(),
    }),
  ),
  timeline: z.array(timelineEntrySchema),
  run: runSchema,
});

export const sessionLogsSchema = z.strictObject({ runs: z.array(listedRunSchema) });
