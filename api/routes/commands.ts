import { z } from 'zod';
import { defineRoute, defineRoutePair, type AnyRoute } from '../http/route';
import { bareErrorSchema, envelopeErrorSchema, pathId } from '../schemas';
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
const v1Read = { kind: 'apiKey', scopes: 'workspace', roles: 'read' } as const;
const v1Write = { kind: 'apiKey', scopes: 'workspace', roles: 'write' } as const;
const sessionRead = { kind: 'session', roles: 'read' } as const;
const sessionWrite = { kind: 'session', roles: 'write' } as const;

const idParams = z.object({ id: pathId });
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

const listQuery = z.object({
  threadId: z.string().min(1).max(200).optional(),
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  workspaceId: z.string().optional(),
});

const messageListQuery = z.object({
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  workspaceId: z.string().optional(),
});

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
    envelope: { path: '/api/v1/svc-command/threads', operationId: 'listCommandThreads', access: v1Read, responses: envelopeErrors },
    bare: {
      path: '/api/svc-command/threads',
      operationId: 'listCommandThreadsSession',
      summary: 'Chat threads of the session workspace, newest first (at most 200)',
      access: sessionRead,
      responses: sessionErrors,
    },
  },
);

export const commandRoutes: AnyRoute[] = [
  // ---- session routes ----
  defineRoute({
    method: 'post',
    path: '/api/svc-command',
    operationId: 'sendCommandMessage',
    summary: 'Send a chat message: queues a command job on the thread (a new thread without threadId)',
    tags,
    family: 'bare',
    access: sessionWrite,
    body: sendBody,
    responses: {
      201: { description: '`{ threadId, job }`', schema: sessionSendSchema },
      400: { description: 'Message is required.', schema: bareErrorSchema },
      ...sessionErrors,
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
  }),
  defineRoute({
    method: 'get',
    path: '/api/svc-command/jobs/{id}',
    operationId: 'getCommandJobSession',
    summary: 'A command job with its plan and outcome',
    tags,
    family: 'bare',
    access: sessionRead,
    params: idParams,
    responses: {
      200: {
        description:
          '`{ threadId, plan, job, result?, error?, attempt?, retryOfJobId? }`, or the chat-message fallback `{ threadId, plan: null, job: null, message }` when the id names a chat message (or a job that is gone but left messages)',
        schema: sessionJobOrMessageSchema,
      },
      ...sessionErrors,
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
  }),
  defineRoute({
    method: 'post',
    path: '/api/svc-command/jobs/{id}/confirm',
    operationId: 'confirmCommandJobSession',
    summary: 'Confirm the plan of a waiting job; failures carry `errorCode` (and the settled job where the spec says)',
    tags,
    family: 'bare',
    access: sessionWrite,
    params: idParams,
    responses: {
      200: { description: '`{ job }`', schema: sessionJobOnlySchema },
      400: { description: '`request_malformed`', schema: bareErrorSchema },
      409: {
        description:
          '`confirmation_mismatch`, `confirmation_expired` (with job), `confirmation_consumed` (with job), `execution_failed` (with job)',
        schema: bareErrorSchema,
      },
      500: { description: '`internal_error`', schema: bareErrorSchema },
      ...sessionErrors,
    },
    handler: async (ctx, { principal, params, deps }) => {
      try {
        const row = await confirmJob(
          ctx.state.em,
          deps.services.commands.engine,
          deps.config.commands.confirmWaitMs,
          principal,
          params.id,
          confirmationIdOf(ctx.request.body),
        );
        return { status: 200, body: { job: jobView(row) } };
      } catch (err) {
        throw sessionConfirmError(err);
      }
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/svc-command/jobs/{id}/cancel',
    operationId: 'cancelCommandJobSession',
    summary: 'Cancel a non-terminal job (a queued one releases its thread slot); 409 from a terminal status',
    tags,
    family: 'bare',
    access: sessionWrite,
    params: idParams,
    responses: {
      200: { description: '`{ job }`', schema: sessionJobOnlySchema },
      409: { description: 'terminal job', schema: bareErrorSchema },
      ...sessionErrors,
    },
    handler: async (ctx, { principal, params, deps }) => ({
      status: 200,
      body: { job: jobView(await cancelJob(ctx.state.em, deps.services.commands.engine, principal, params.id)) },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/svc-command/jobs/{id}/retry',
    operationId: 'retryCommandJobSession',
    summary: 'Queue a failed or canceled job again as a new job on its thread',
    tags,
    family: 'bare',
    access: sessionWrite,
    params: idParams,
    responses: {
      202: { description: '`{ job, queued }`', schema: sessionRetrySchema },
      409: { description: 'not failed or canceled', schema: bareErrorSchema },
      ...sessionErrors,
    },
    handler: async (ctx, { principal, params, deps }) => ({
      status: 202,
      body: { job: jobView(await retryJob(ctx.state.em, deps.services.commands.engine, principal, params.id)), queued: true },
    }),
  }),

  // ---- v1 threads (our design) ----
  listThreadsEnvelope,
  defineRoute({
    method: 'post',
    path: '/api/v1/svc-command/threads',
    operationId: 'createCommandThread',
    summary: 'Start a chat thread (optional title)',
    tags,
    family: 'envelope',
    access: v1Write,
    body: z.strictObject({ title: z.string().max(200).optional() }),
    idempotency: 'required',
    responses: {
      201: { description: '`{ thread }`', schema: threadEnvelope },
      400: { description: '`validation_failed`; `idempotency_key_invalid`', schema: envelopeErrorSchema },
      ...envelopeErrors,
    },
    handler: async (ctx, { principal, body }) => ({ status: 201, body: { thread: await createThread(ctx.state.em, principal, body) } }),
  }),

  listThreadsBare,
  defineRoute({
    method: 'post',
    path: '/api/svc-command/threads',
    operationId: 'createCommandThreadSession',
    summary: 'Start a chat thread (optional title)',
    tags,
    family: 'bare',
    access: sessionWrite,
    body: z.strictObject({ title: z.string().max(200).optional(), workspaceId: z.string().optional() }),
    responses: {
      201: { description: '`{ thread }`', schema: threadEnvelope },
      400: { description: 'Invalid request body', schema: bareErrorSchema },
      ...sessionErrors,
    },
    handler: async (ctx, { principal, body }) => {
      requireSessionWorkspace(principal, body.workspaceId);
      return { status: 201, body: { thread: await createThread(ctx.state.em, principal, { title: body.title }) } };
    },
  }),

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
        access: v1Read,
        responses: { 400: { description: '`request_malformed`: bad limit or cursor', schema: envelopeErrorSchema }, ...envelopeErrors },
      },
      bare: {
        path: '/api/svc-command/threads/{id}/messages',
        operationId: 'listCommandMessagesSession',
        access: sessionRead,
        responses: { 400: { description: 'bad limit or cursor', schema: bareErrorSchema }, ...sessionErrors },
      },
    },
  ),

  // ---- v1 jobs ----
  defineRoute({
    method: 'get',
    path: '/api/v1/svc-command/jobs',
    operationId: 'listCommandJobs',
    summary: 'Jobs of the workspace (thread sequence desc with threadId); `cursor` is the last job id of the previous page',
    tags,
    family: 'envelope',
    access: v1Read,
    query: listQuery,
    responses: {
      200: { description: '`{ jobs, nextCursor }`', schema: jobListEnvelope },
      400: { description: '`request_malformed`: bad limit or cursor', schema: envelopeErrorSchema },
      ...envelopeErrors,
    },
    handler: async (ctx, { principal, query }) => {
      const { rows, nextCursor } = await listJobs(ctx.state.em, principal, query);
      return { status: 200, body: { jobs: rows.map((r) => projectJob(principal, r)), nextCursor } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/svc-command/jobs',
    operationId: 'createCommandJob',
    summary: 'Queue a command job on a thread (FIFO: it stays queued while the thread has an active job); attachments must be ready files',
    tags,
    family: 'envelope',
    access: v1Write,
    idempotency: 'required',
    responses: {
      202: { description: '`{ job }`', schema: jobEnvelope },
      400: { description: '`request_malformed`: bad body; `idempotency_key_invalid`', schema: envelopeErrorSchema },
      409: { description: '`idempotency_replay_mismatch`', schema: envelopeErrorSchema },
      423: { description: '`conflict`: an attachment is not ready', schema: envelopeErrorSchema },
      ...envelopeErrors,
    },
    handler: async (ctx, { principal, deps }) => {
      const body = parseCreateBody(ctx.request.body);
      const input: CreateJobInput = body;
      const row = await createJob(ctx.state.em, deps.services.commands.engine, principal, input, { idStyle: 'v1' });
      return { status: 202, body: { job: projectJob(principal, row) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/svc-command/jobs/{id}',
    operationId: 'getCommandJob',
    summary: 'One job (viewer keys get the workspace-safe.v1 projection)',
    tags,
    family: 'envelope',
    access: v1Read,
    params: idParams,
    responses: { 200: { description: '`{ job }`', schema: jobEnvelope }, ...envelopeErrors },
    handler: async (ctx, { principal, params, deps }) => {
      const { row, events } = await getJob(ctx.state.em, deps.services.commands.engine, principal, params.id);
      return { status: 200, body: { job: projectJob(principal, row, events) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/svc-command/jobs/{id}/confirm',
    operationId: 'confirmCommandJob',
    summary: 'Confirm a waiting job with its `cnf_` confirmation id; a replay after it resumed the job answers 200 with the current job',
    tags,
    family: 'envelope',
    access: v1Write,
    params: idParams,
    idempotency: 'required',
    responses: {
      200: { description: '`{ job }`', schema: jobEnvelope },
      400: { description: '`request_malformed`: missing confirmationId; `idempotency_key_invalid`', schema: envelopeErrorSchema },
      409: {
        description: '`conflict` (error.reason names the confirmation failure); `idempotency_replay_mismatch`',
        schema: envelopeErrorSchema,
      },
      500: { description: '`internal_error`', schema: envelopeErrorSchema },
      ...envelopeErrors,
    },
    handler: async (ctx, { principal, params, deps }) => {
      const confirmationId = confirmationIdOf(ctx.request.body);
      if (typeof confirmationId !== 'string' || !confirmationId.startsWith('cnf_'))
        throw invalidInput('confirmationId must be a cnf_ confirmation id.', { code: 'request_malformed' });
      try {
        const row = await confirmJob(
          ctx.state.em,
          deps.services.commands.engine,
          deps.config.commands.confirmWaitMs,
          principal,
          params.id,
          confirmationId,
        );
        return { status: 200, body: { job: projectJob(principal, row) } };
      } catch (err) {
        throw v1ConfirmError(err);
      }
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/svc-command/jobs/{id}/cancel',
    operationId: 'cancelCommandJob',
    summary: 'Cancel a non-terminal job (a queued one releases its thread slot); 409 from a terminal status',
    tags,
    family: 'envelope',
    access: v1Write,
    params: idParams,
    idempotency: 'required',
    responses: {
      200: { description: '`{ job }`', schema: jobEnvelope },
      400: { description: '`idempotency_key_invalid`', schema: envelopeErrorSchema },
      409: { description: '`conflict`: terminal job', schema: envelopeErrorSchema },
      ...envelopeErrors,
    },
    handler: async (ctx, { principal, params, deps }) => ({
      status: 200,
      body: { job: projectJob(principal, await cancelJob(ctx.state.em, deps.services.commands.engine, principal, params.id)) },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/svc-command/jobs/{id}/artifacts',
    operationId: 'registerCommandArtifact',
    summary: 'Register a file of the workspace as an output of the job (body `{ fileId }`)',
    tags,
    family: 'envelope',
    access: v1Write,
    params: idParams,
    body: z.strictObject({ fileId: pathId }),
    idempotency: 'required',
    responses: {
      201: { description: '`{ job }`', schema: jobEnvelope },
      400: { description: '`validation_failed`; `idempotency_key_invalid`', schema: envelopeErrorSchema },
      ...envelopeErrors,
    },
    handler: async (ctx, { principal, params, body }) => ({
      status: 201,
      body: { job: projectJob(principal, await registerArtifact(ctx.state.em, principal, params.id, body.fileId)) },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/svc-command/jobs/{id}/artifacts/{fileId}/complete',
    operationId: 'completeCommandArtifact',
    summary: 'Complete a registered artifact; its file must be ready (423 otherwise)',
    tags,
    family: 'envelope',
    access: v1Write,
    params: artifactParams,
    idempotency: 'required',
    responses: {
      200: { description: '`{ job }`', schema: jobEnvelope },
      400: { description: '`idempotency_key_invalid`', schema: envelopeErrorSchema },
      423: { description: '`conflict`: the file is not ready', schema: envelopeErrorSchema },
      ...envelopeErrors,
    },
    handler: async (ctx, { principal, params }) => ({
      status: 200,
      body: { job: projectJob(principal, await completeArtifact(ctx.state.em, principal, params.id, params.fileId)) },
    }),
  }),
  ...commandScheduleRoutes,
];
