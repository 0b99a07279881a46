import { z } from 'zod';
import {
  defineRoutePair,
  routeGroup,
  type AnyRoute,
  type GroupResponses,
  SESSION_READ,
  SESSION_WRITE,
  WORKSPACE_READ,
  WORKSPACE_WRITE,
} from '../http/route';
import { bareErrorSchema, envelopeErrorSchema, idCursorPage, pathId, idParams } from '../schemas';
import {
  jobEnvelope,
  jobListEnvelope,
  messageListSchema,
  sessionJobOrMessageSchema,
  sessionJobOnlySchema,
  sessionRetrySchema,
  sessionSendSchema,
  threadEnvelope,
  threadListEnvelope,
} from '../schemas/commands';
import { DomainError, forbidden, invalidInput } from '../../services/kernel/errors';
import type { WorkspacePrincipal } from '../../services/kernel/principal';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import {
  cancelJob,
  COMMAND_MESSAGES,
  CommandConfirmError,
  completeArtifact,
  confirmJob,
  createJob,
  createThread,
  findMessageFallback,
  getJob,
  jobView,
  listJobs,
  listMessages,
  messageView,
  projectMessage,
  listThreads,
  projectJob,
  registerArtifact,
  retryJob,
  type ConfirmErrorCode,
  type CreateJobInput,
} from '../../services/commands';
import { commandScheduleRoutes } from './commandSchedules';

/**
 * Command jobs: the session routes (bare, cookie, same-origin writes) the product UI uses, and
 * the v1 routes (envelope, workspace keys, Idempotency-Key on every mutation). Threads are our
 * addition (the spec names threadId but no thread routes). Schedules live in commandSchedules.ts.
 */

const tags = ['Command jobs'];

const artifactParams = z.object({ id: pathId, fileId: pathId });

const envelopeErrors = {
  401: { description: '`authentication_required`', schema: envelopeErrorSchema },
  403: { description: '`authorization_failed`: not a workspace key (or a viewer, for mutations)', schema: envelopeErrorSchema },
  404: { description: '`resource_not_found`: job, thread, file or artifact not in this workspace', schema: envelopeErrorSchema },
};
const sessionErrors = {
  401: { description: 'No session', schema: bareErrorSchema },
  403: { description: 'Cross-origin write, viewer, or another workspace', schema: bareErrorSchema },
  404: { description: 'Command job not found', schema: bareErrorSchema },
};

// Most command routes are mutations: each read declares its own access.
/** The session routes the product UI uses (bare, cookie, same-origin writes). */
const sessionRoute = routeGroup({ tags, family: 'bare', access: SESSION_WRITE, errors: sessionErrors, pathPrefix: '/api/svc-command' });
/** The v1 routes (envelope, workspace keys). */
const v1Route = routeGroup({
  tags,
  family: 'envelope',
  access: WORKSPACE_WRITE,
  errors: envelopeErrors,
  pathPrefix: '/api/v1/svc-command',
});

const listQuery = z.object({ threadId: z.string().min(1).max(200).optional(), ...idCursorPage, workspaceId: z.string().optional() });

const messageListQuery = z.object({ ...idCursorPage, workspaceId: z.string().optional() });

const nonEmpty = z.string().trim().min(1);
const createBody = z.strictObject({
  threadId: nonEmpty,
  message: nonEmpty,
  assistantContext: z.unknown().optional(),
  aiProvider: nonEmpty.optional(),
  aiModel: nonEmpty.optional(),
  attachmentFileIds: z
    .array(nonEmpty)
    .max(20)
    .refine((ids) => new Set(ids).size === ids.length, 'attachmentFileIds must be unique')
    .optional(),
});

/** Bad command create bodies are `request_malformed` (the spec's envelope table), not `validation_failed`. */
function parseCreateBody(raw: unknown): z.output<typeof createBody> {
  const parsed = createBody.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  // A failed parse always carries at least one issue.
  const issue = parsed.error.issues.at(0)!;
  throw invalidInput(`Invalid request body: ${issue.path.join('.') || 'body'} ${issue.message}`, { code: 'request_malformed' });
}

const confirmationIdOf = (raw: unknown): unknown =>
  raw && typeof raw === 'object' ? (raw as { confirmationId?: unknown }).confirmationId : undefined;

const SESSION_CONFIRM_KINDS: Record<ConfirmErrorCode, DomainError['kind']> = {
  request_malformed: 'invalid',
  confirmation_not_found: 'not_found',
  confirmation_mismatch: 'conflict',
  confirmation_expired: 'conflict',
  confirmation_consumed: 'conflict',
  execution_failed: 'conflict',
  internal_error: 'internal',
};

/** A confirmation failure in the session family: `{ error, errorCode, job? }`. */
function sessionConfirmError(err: unknown): unknown {
  if (!(err instanceof CommandConfirmError)) return err;
  return new DomainError(SESSION_CONFIRM_KINDS[err.code], err.message, {
    details: { errorCode: err.code, ...(err.job ? { job: jobView(err.job) } : {}) },
  });
}

/** A confirmation failure in the envelope family: 400 request_malformed, 500 internal_error, else 409 conflict. */
function v1ConfirmError(err: unknown): unknown {
  if (!(err instanceof CommandConfirmError)) return err;
  if (err.code === 'request_malformed') return invalidInput(err.message, { code: 'request_malformed' });
  if (err.code === 'internal_error') return new DomainError('internal', err.message, { code: 'internal_error' });
  return new DomainError('conflict', err.message, { code: 'conflict', envelope: { reason: err.code } });
}

/** Session bodies may name the workspace; it must be the session's. */
function requireSessionWorkspace(principal: WorkspacePrincipal, workspaceId: unknown): void {
  if (workspaceId !== undefined && workspaceId !== principal.workspaceId)
    throw forbidden('The session is not signed in to that workspace.');
}

const sendBody = z.object({
  message: z.unknown().optional(),
  threadId: z.string().min(1).max(200).optional(),
  workspaceId: z.string().optional(),
});

/** Chat threads (our design), in both styles; the two are mounted apart, around createCommandThread. */
const [listThreadsEnvelope, listThreadsBare] = defineRoutePair(
  {
    method: 'get',
    summary: 'Chat threads of the workspace, newest first (at most 200)',
    tags,
    responses: { 200: { description: '`{ threads }`', schema: threadListEnvelope } },
    handler: async (ctx, { principal }) => ({ status: 200, body: { threads: await listThreads(ctx.state.em, principal) } }),
  },
  {
    envelope: { path: '/api/v1/svc-command/threads', operationId: 'listCommandThreads', access: WORKSPACE_READ, responses: envelopeErrors },
    bare: {
      path: '/api/svc-command/threads',
      operationId: 'listCommandThreadsSession',
      summary: 'Chat threads of the session workspace, newest first (at most 200)',
      access: SESSION_READ,
      responses: sessionErrors,
    },
  },
);

type JobRow = Awaited<ReturnType<typeof cancelJob>>;
type JobStyle = 'session' | 'v1';

/** What a job action sees of its request, whichever style mounts it. */
interface JobActionInput {
  principal: WorkspacePrincipal;
  params: { id: string };
  deps: AppDeps;
}

/** What one style of a job action declares on its own. */
interface JobActionStyle {
  /** When this style's summary differs from the action's. */
  summary?: string;
  /** The success answer and this style's own errors (its group adds the shared ones). */
  responses: GroupResponses;
  /** Turns the action's failures into this style's errors. */
  failure?: (err: unknown) => unknown;
}

/** A job action (confirm, cancel, retry): what it does, and each style it is mounted in. */
interface JobActionSpec {
  action: 'confirm' | 'cancel' | 'retry';
  summary: string;
  status: 200 | 202;
  /** Runs the action; `style` says which route asked. */
  run: (ctx: AppContext, input: JobActionInput, style: JobStyle) => Promise<JobRow>;
  /** The session style; `extra` is added to its answer next to `job`. */
  session: JobActionStyle & { extra?: Record<string, unknown> };
  v1?: JobActionStyle;
}

/**
 * A job action (`POST .../jobs/{id}/<action>`) declared once and mounted in each style it has:
 * the session route answers the job's full view, the v1 route the projection for the key's role
 * and requires an Idempotency-Key.
 */
function jobActionRoutes(spec: JobActionSpec & { v1: JobActionStyle }): { session: AnyRoute; v1: AnyRoute };
function jobActionRoutes(spec: JobActionSpec): { session: AnyRoute; v1?: AnyRoute };
function jobActionRoutes(spec: JobActionSpec): { session: AnyRoute; v1?: AnyRoute } {
  const declared = (style: JobStyle, own: JobActionStyle) => ({
    method: 'post' as const,
    path: `/jobs/{id}/${spec.action}`,
    operationId: `${spec.action}CommandJob${style === 'session' ? 'Session' : ''}`,
    summary: own.summary ?? spec.summary,
    params: idParams,
    responses: own.responses,
  });
  const attempt = async (ctx: AppContext, input: JobActionInput, style: JobStyle, own: JobActionStyle): Promise<JobRow> => {
    try {
      return await spec.run(ctx, input, style);
    } catch (err) {
      throw own.failure ? own.failure(err) : err;
    }
  };
  const { session, v1 } = spec;
  // Routes are declared as consts first: inside the returned object their handlers' types would be inferred from AnyRoute.
  const sessionDef = sessionRoute({
    ...declared('session', session),
    handler: async (ctx, input) => ({
      status: spec.status,
      body: { job: jobView(await attempt(ctx, input, 'session', session)), ...session.extra },
    }),
  });
  const v1Def =
    v1 &&
    v1Route({
      ...declared('v1', v1),
      idempotency: 'required',
      handler: async (ctx, input) => ({
        status: spec.status,
        body: { job: projectJob(input.principal, await attempt(ctx, input, 'v1', v1)) },
      }),
    });
  return { session: sessionDef, v1: v1Def };
}

/** v1 confirmations must name a `cnf_` confirmation id. */
function v1ConfirmationId(raw: unknown): string {
  const confirmationId = confirmationIdOf(raw);
  if (typeof confirmationId !== 'string' || !confirmationId.startsWith('cnf_'))
    throw invalidInput('confirmationId must be a cnf_ confirmation id.', { code: 'request_malformed' });
  return confirmationId;
}

const confirmRoutes = jobActionRoutes({
  action: 'confirm',
  summary: 'Confirm the plan of a waiting job; failures carry `errorCode` (and the settled job where the spec says)',
  status: 200,
  run: (ctx, { principal, params, deps }, style) =>
    confirmJob(
      ctx.state.em,
      deps.services.commands.engine,
      deps.config.commands.confirmWaitMs,
      principal,
      params.id,
      style === 'v1' ? v1ConfirmationId(ctx.request.body) : confirmationIdOf(ctx.request.body),
    ),
  session: {
    responses: {
      200: { description: '`{ job }`', schema: sessionJobOnlySchema },
      400: '`request_malformed`',
      409: '`confirmation_mismatch`, `confirmation_expired` (with job), `confirmation_consumed` (with job), `execution_failed` (with job)',
      500: '`internal_error`',
    },
    failure: sessionConfirmError,
  },
  v1: {
    summary: 'Confirm a waiting job with its `cnf_` confirmation id; a replay after it resumed the job answers 200 with the current job',
    responses: {
      200: { description: '`{ job }`', schema: jobEnvelope },
      400: '`request_malformed`: missing confirmationId; `idempotency_key_invalid`',
      409: '`conflict` (error.reason names the confirmation failure); `idempotency_replay_mismatch`',
      500: '`internal_error`',
    },
    failure: v1ConfirmError,
  },
});

const cancelRoutes = jobActionRoutes({
  action: 'cancel',
  summary: 'Cancel a non-terminal job (a queued one releases its thread slot); 409 from a terminal status',
  status: 200,
  run: (ctx, { principal, params, deps }) => cancelJob(ctx.state.em, deps.services.commands.engine, principal, params.id),
  session: { responses: { 200: { description: '`{ job }`', schema: sessionJobOnlySchema }, 409: 'terminal job' } },
  v1: {
    responses: {
      200: { description: '`{ job }`', schema: jobEnvelope },
      400: '`idempotency_key_invalid`',
      409: '`conflict`: terminal job',
    },
  },
});

// Retry is a session route only.
const retryRoutes = jobActionRoutes({
  action: 'retry',
  summary: 'Queue a failed or canceled job again as a new job on its thread',
  status: 202,
  run: (ctx, { principal, params, deps }) => retryJob(ctx.state.em, deps.services.commands.engine, principal, params.id),
  session: {
    responses: { 202: { description: '`{ job, queued }`', schema: sessionRetrySchema }, 409: 'not failed or canceled' },
    extra: { queued: true },
  },
});

const sendMessageRoute = sessionRoute({
  method: 'post',
  path: '',
  operationId: 'sendCommandMessage',
  summary: 'Send a chat message: queues a command job on the thread (a new thread without threadId)',
  body: sendBody,
  responses: {
    201: { description: '`{ threadId, job }`', schema: sessionSendSchema },
    400: 'Message is required.',
  },
  handler: async (ctx, { principal, body, deps }) => {
    requireSessionWorkspace(principal, body.workspaceId);
    if (typeof body.message !== 'string' || body.message.trim() === '') throw invalidInput(COMMAND_MESSAGES.messageRequired);
    const row = await createJob(
      ctx.state.em,
      deps.services.commands.engine,
      principal,
      { message: body.message, threadId: body.threadId },
      { idStyle: 'session', chat: true },
    );
    return { status: 201, body: { threadId: row.thread_id, job: jobView(row) } };
  },
});

const getJobSessionRoute = sessionRoute({
  method: 'get',
  path: '/jobs/{id}',
  operationId: 'getCommandJobSession',
  summary: 'A command job with its plan and outcome',
  access: SESSION_READ,
  params: idParams,
  responses: {
    200: {
      description:
        '`{ threadId, plan, job, result?, error?, attempt?, retryOfJobId? }`, or the chat-message fallback `{ threadId, plan: null, job: null, message }` when the id names a chat message (or a job that is gone but left messages)',
      schema: sessionJobOrMessageSchema,
    },
  },
  handler: async (ctx, { principal, params, deps }) => {
    let found;
    try {
      found = await getJob(ctx.state.em, deps.services.commands.engine, principal, params.id);
    } catch (err) {
      if (!(err instanceof DomainError && err.kind === 'not_found')) throw err;
      const message = await findMessageFallback(ctx.state.em, principal.workspaceId, params.id);
      if (!message) throw err;
      return { status: 200, body: { threadId: message.thread_id, plan: null, job: null, message: messageView(message) } };
    }
    const { row, events } = found;
    return {
      status: 200,
      body: {
        threadId: row.thread_id,
        plan: row.plan,
        job: jobView(row, events),
        ...(row.result ? { result: row.result } : {}),
        ...(row.error ? { error: row.error } : {}),
        attempt: row.attempt,
        ...(row.retry_of_job_id ? { retryOfJobId: row.retry_of_job_id } : {}),
      },
    };
  },
});

const createThreadRoute = v1Route({
  method: 'post',
  path: '/threads',
  operationId: 'createCommandThread',
  summary: 'Start a chat thread (optional title)',
  body: z.strictObject({ title: z.string().max(200).optional() }),
  idempotency: 'required',
  responses: {
    201: { description: '`{ thread }`', schema: threadEnvelope },
    400: '`validation_failed`; `idempotency_key_invalid`',
  },
  handler: async (ctx, { principal, body }) => ({ status: 201, body: { thread: await createThread(ctx.state.em, principal, body) } }),
});

const createThreadSessionRoute = sessionRoute({
  method: 'post',
  path: '/threads',
  operationId: 'createCommandThreadSession',
  summary: 'Start a chat thread (optional title)',
  body: z.strictObject({ title: z.string().max(200).optional(), workspaceId: z.string().optional() }),
  responses: {
    201: { description: '`{ thread }`', schema: threadEnvelope },
    400: 'Invalid request body',
  },
  handler: async (ctx, { principal, body }) => {
    requireSessionWorkspace(principal, body.workspaceId);
    return { status: 201, body: { thread: await createThread(ctx.state.em, principal, { title: body.title }) } };
  },
});

const listJobsRoute = v1Route({
  method: 'get',
  path: '/jobs',
  operationId: 'listCommandJobs',
  summary: 'Jobs of the workspace (thread sequence desc with threadId); `cursor` is the last job id of the previous page',
  access: WORKSPACE_READ,
  query: listQuery,
  responses: {
    200: { description: '`{ jobs, nextCursor }`', schema: jobListEnvelope },
    400: '`request_malformed`: bad limit or cursor',
  },
  handler: async (ctx, { principal, query }) => {
    const { rows, nextCursor } = await listJobs(ctx.state.em, principal, query);
    return { status: 200, body: { jobs: rows.map((r) => projectJob(principal, r)), nextCursor } };
  },
});

const createJobRoute = v1Route({
  method: 'post',
  path: '/jobs',
  operationId: 'createCommandJob',
  summary: 'Queue a command job on a thread (FIFO: it stays queued while the thread has an active job); attachments must be ready files',
  idempotency: 'required',
  responses: {
    202: { description: '`{ job }`', schema: jobEnvelope },
    400: '`request_malformed`: bad body; `idempotency_key_invalid`',
    409: '`idempotency_replay_mismatch`',
    423: '`conflict`: an attachment is not ready',
  },
  handler: async (ctx, { principal, deps }) => {
    const body = parseCreateBody(ctx.request.body);
    const input: CreateJobInput = body;
    const row = await createJob(ctx.state.em, deps.services.commands.engine, principal, input, { idStyle: 'v1' });
    return { status: 202, body: { job: projectJob(principal, row) } };
  },
});

const getJobRoute = v1Route({
  method: 'get',
  path: '/jobs/{id}',
  operationId: 'getCommandJob',
  summary: 'One job (viewer keys get the workspace-safe.v1 projection)',
  access: WORKSPACE_READ,
  params: idParams,
  responses: { 200: { description: '`{ job }`', schema: jobEnvelope } },
  handler: async (ctx, { principal, params, deps }) => {
    const { row, events } = await getJob(ctx.state.em, deps.services.commands.engine, principal, params.id);
    return { status: 200, body: { job: projectJob(principal, row, events) } };
  },
});

const registerArtifactRoute = v1Route({
  method: 'post',
  path: '/jobs/{id}/artifacts',
  operationId: 'registerCommandArtifact',
  summary: 'Register a file of the workspace as an output of the job (body `{ fileId }`)',
  params: idParams,
  body: z.strictObject({ fileId: pathId }),
  idempotency: 'required',
  responses: {
    201: { description: '`{ job }`', schema: jobEnvelope },
    400: '`validation_failed`; `idempotency_key_invalid`',
  },
  handler: async (ctx, { principal, params, body }) => ({
    status: 201,
    body: { job: projectJob(principal, await registerArtifact(ctx.state.em, principal, params.id, body.fileId)) },
  }),
});

const completeArtifactRoute = v1Route({
  method: 'post',
  path: '/jobs/{id}/artifacts/{fileId}/complete',
  operationId: 'completeCommandArtifact',
  summary: 'Complete a registered artifact; its file must be ready (423 otherwise)',
  params: artifactParams,
  idempotency: 'required',
  responses: {
    200: { description: '`{ job }`', schema: jobEnvelope },
    400: '`idempotency_key_invalid`',
    423: '`conflict`: the file is not ready',
  },
  handler: async (ctx, { principal, params }) => ({
    status: 200,
    body: { job: projectJob(principal, await completeArtifact(ctx.state.em, principal, params.id, params.fileId)) },
  }),
});

export const commandRoutes: AnyRoute[] = [
  // ---- session routes ----
  sendMessageRoute,
  getJobSessionRoute,
  confirmRoutes.session,
  cancelRoutes.session,
  retryRoutes.session,

  // ---- v1 threads (our design) ----
  listThreadsEnvelope,
  createThreadRoute,

  listThreadsBare,
  createThreadSessionRoute,

  // ---- chat messages of a thread (our design) ----
  ...defineRoutePair(
    {
      method: 'get',
      summary: 'Chat messages of a thread, oldest first; `cursor` is the last message id of the previous page',
      tags,
      params: idParams,
      query: messageListQuery,
      responses: { 200: { description: '`{ messages, nextCursor }`', schema: messageListSchema } },
      handler: async (ctx, { principal, params, query }) => {
        const { rows, nextCursor } = await listMessages(ctx.state.em, principal, params.id, query);
        return { status: 200, body: { messages: rows.map((r) => projectMessage(principal, r)), nextCursor } };
      },
    },
    {
      envelope: {
        path: '/api/v1/svc-command/threads/{id}/messages',
        operationId: 'listCommandMessages',
        access: WORKSPACE_READ,
        responses: { 400: { description: '`request_malformed`: bad limit or cursor', schema: envelopeErrorSchema }, ...envelopeErrors },
      },
      bare: {
        path: '/api/svc-command/threads/{id}/messages',
        operationId: 'listCommandMessagesSession',
        access: SESSION_READ,
        responses: { 400: { description: 'bad limit or cursor', schema: bareErrorSchema }, ...sessionErrors },
      },
    },
  ),

  // ---- v1 jobs ----
  listJobsRoute,
  createJobRoute,
  getJobRoute,
  confirmRoutes.v1,
  cancelRoutes.v1,
  registerArtifactRoute,
  completeArtifactRoute,
  ...commandScheduleRoutes,
];
