import { z } from 'zod';
import { COMMAND_JOB_STATUSES } from '../../engine/statuses';
import { envelopeErrorSchema, isoDate, redactionSchema, timestampFields } from './index';

const statusSchema = z.enum(COMMAND_JOB_STATUSES);

const citationSchema = z.strictObject({
  runId: z.string().optional(),
  documentId: z.string().optional(),
  knowledgeBaseName: z.string().optional(),
  title: z.string().optional(),
});

const traceSchema = z
  .object({
    actionId: z.string(),
    tool: z.string(),
    arguments: z.record(z.string(), z.unknown()),
    status: z.enum(['succeeded', 'failed', 'skipped']),
    output: z.unknown(),
    error: z.string().nullable(),
    runId: z.string().nullable(),
    citations: z.array(citationSchema),
    startedAt: isoDate,
    finishedAt: isoDate,
  })
  .passthrough();

const attachmentSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  mimeType: z.string(),
  sizeBytes: z.number(),
  sha256: z.string(),
  status: z.literal('ready'),
});
const artifactSchema = z.strictObject({
  fileId: z.string(),
  name: z.string(),
  mimeType: z.string(),
  status: z.enum(['registered', 'completed']),
  registeredAt: isoDate,
  completedAt: isoDate.nullable(),
});
const progressSchema = z.strictObject({
  runId: z.string().optional(),
  state: z.string(),
  message: z.string(),
  events: z.array(z.strictObject({ at: isoDate, state: z.string(), message: z.string() })),
});

const lifecycle = {
  id: z.string(),
  threadId: z.string(),
  planId: z.string().nullable(),
  status: statusSchema,
  costCredits: z.number(),
  ...timestampFields,
};

export const commandJobSchema = z.strictObject({
  ...lifecycle,
  traces: z.array(traceSchema),
  confirmation: z.strictObject({ id: z.string(), expiresAt: isoDate }).nullable(),
  progress: progressSchema,
  attachments: z.array(attachmentSchema),
  artifacts: z.array(artifactSchema),
});

/** The `workspace-safe.v1` job: lifecycle metadata only. */
export const safeCommandJobSchema = z.strictObject({ ...lifecycle, redaction: redactionSchema });

export const anyCommandJobSchema = z.union([commandJobSchema, safeCommandJobSchema]);

export const commandPlanSchema = z.strictObject({
  id: z.string(),
  summary: z.string().nullable(),
  actions: z.array(
    z.strictObject({ id: z.string(), tool: z.string(), arguments: z.record(z.string(), z.unknown()), sideEffects: z.boolean() }),
  ),
  requiresConfirmation: z.boolean(),
});

export const commandResultSchema = z.strictObject({
  content: z.string(),
  actions: z.array(z.strictObject({ tool: z.string(), status: z.string(), runId: z.string().optional() })),
  citations: z.array(citationSchema),
  ragMode: z.enum(['none', 'keyword', 'hybrid']),
});

/** Envelope routes declare their `data` (the route wraps it in `{ ok, data, meta }`). */
const envelope = <T extends z.ZodType>(data: T) => data;

export const jobEnvelope = envelope(z.strictObject({ job: anyCommandJobSchema }));
export const jobListEnvelope = envelope(z.strictObject({ jobs: z.array(anyCommandJobSchema), nextCursor: z.string().nullable() }));

export const threadSchema = z.strictObject({
  id: z.string(),
  workspaceId: z.string(),
  title: z.string(),
  createdById: z.string(),
  ...timestampFields,
});
export const threadEnvelope = envelope(z.strictObject({ thread: threadSchema }));
export const threadListEnvelope = envelope(z.strictObject({ threads: z.array(threadSchema) }));

export const scheduleSchema = z.strictObject({
  id: z.string(),
  workspaceId: z.string(),
  createdById: z.string(),
  title: z.string(),
  prompt: z.string(),
  cron: z.string(),
  timezone: z.string(),
  enabled: z.boolean(),
  threadId: z.string().nullable(),
  nextRunAt: isoDate.nullable(),
  lastRunAt: isoDate.nullable(),
  runCount: z.number().int(),
  ...timestampFields,
});
export const scheduleListSchema = z.strictObject({ schedules: z.array(scheduleSchema) });
export const scheduleCreatedSchema = z.strictObject({ schedule: scheduleSchema });

/** Session GET job: the job plus its plan and outcome. */
export const sessionJobSchema = z.strictObject({
  threadId: z.string(),
  plan: commandPlanSchema.nullable(),
  job: commandJobSchema,
  result: commandResultSchema.optional(),
  error: z.string().optional(),
  attempt: z.number().int().optional(),
  retryOfJobId: z.string().optional(),
});
export const commandMessageSchema = z.strictObject({
  id: z.string(),
  threadId: z.string(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  jobId: z.string().nullable(),
  jobStatus: statusSchema.nullable(),
  createdById: z.string().nullable(),
  createdAt: isoDate,
});
const safeCommandMessageSchema = commandMessageSchema.omit({ content: true }).extend({ redaction: redactionSchema });
/** The session job read's chat-message fallback: the id names a message (or a job that is gone but left one). */
export const sessionMessageFallbackSchema = z.strictObject({
  threadId: z.string(),
  plan: z.null(),
  job: z.null(),
  message: commandMessageSchema,
});
export const sessionJobOrMessageSchema = z.union([sessionJobSchema, sessionMessageFallbackSchema]);
export const messageListSchema = z.strictObject({
  messages: z.array(z.union([commandMessageSchema, safeCommandMessageSchema])),
  nextCursor: z.string().nullable(),
});
export const sessionSendSchema = z.strictObject({ threadId: z.string(), job: commandJobSchema });
export const sessionJobOnlySchema = z.strictObject({ job: commandJobSchema });
export const sessionRetrySchema = z.strictObject({ job: commandJobSchema, queued: z.boolean() });

export { envelopeErrorSchema };
