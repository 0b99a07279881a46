/**
 * Command jobs as the API sees them: threads, create (FIFO on the thread), list, read (expiry
 * settled on read, live events from the job's execution), cancel, retry and artifacts. The
 * job's execution is reached only through the CommandJobEngine port.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { StoredFileSchema, type CommandAttachment, type CommandJobRow } from '../../db/entities';
import { readyFileRef } from '../files';
import { conflict, invalidInput, locked, notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { CommandJobEngine } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { COMMAND_MESSAGES, findThread, insertJob, insertThread, isActive, loadJob, moveJob, sql, updateJob } from './store';
import { threadView, type CommandProgressEvent } from './views';
import { lastIdPage } from '../kernel/pagination';

export interface CreateJobInput {
  threadId?: string;
  message: string;
  assistantContext?: unknown;
  aiProvider?: string;
  aiModel?: string;
  attachmentFileIds?: string[];
}

export async function createThread(em: EntityManager, principal: WorkspacePrincipal, input: { title?: string }) {
  const row = await insertThread(em, {
    id: newId('cthr'),
    workspaceId: principal.workspaceId,
    createdById: principal.userId,
    title: input.title?.trim() || 'New thread',
  });
  return threadView(row);
}

export async function listThreads(em: EntityManager, principal: WorkspacePrincipal) {
  const rows = await sql<import('../../db/entities').CommandThreadRow>(
    em,
    'select * from command_threads where workspace_id = ? order by created_at desc, id desc limit 200',
    [principal.workspaceId],
  );
  return rows.map(threadView);
}

/** Attachments must be files of the workspace (404 otherwise) that are ready (423 otherwise). */
async function readyAttachments(em: EntityManager, workspaceId: string, ids: string[]): Promise<CommandAttachment[]> {
  if (ids.length === 0) return [];
  const files = await em.find(StoredFileSchema, { id: { $in: ids }, workspaceId });
  return ids.map((id) => {
    const file = files.find((f) => f.id === id);
    if (!file) throw notFound(`File ${id} not found.`);
    if (file.status !== 'ready') throw locked(`File ${id} is ${file.status}; only ready files can be attached.`);
    return readyFileRef(file);
  });
}

/**
 * Queues a job on its thread and wakes the thread's FIFO owner. A thread with an active job
 * keeps the new one `queued` until the earlier ones end. `idStyle` says how the id looks:
 * session sends use `command_` + UUID, v1 creates a UUID. Without `threadId` (session sends) a
 * new thread is started, titled after the message. With `chat` (session sends) the message is
 * appended to the thread's chat; v1 creates append none.
 */
export async function createJob(
  em: EntityManager,
  engine: CommandJobEngine,
  principal: WorkspacePrincipal,
  input: CreateJobInput,
  opts: { idStyle: 'session' | 'v1'; retryOf?: CommandJobRow; chat?: boolean },
): Promise<CommandJobRow> {
  const message = input.message.trim();
  if (!message) throw invalidInput(COMMAND_MESSAGES.messageRequired);
  let thread: { id: string; title: string } | null;
  if (input.threadId) {
    thread = await findThread(em, principal.workspaceId, input.threadId);
    if (!thread) throw notFound(COMMAND_MESSAGES.threadNotFound);
  } else {
    thread = await insertThread(em, {
      id: newId('cthr'),
      workspaceId: principal.workspaceId,
      createdById: principal.userId,
      title: message.slice(0, 80),
    });
  }
  const threadId = thread.id;
  const attachments = opts.retryOf
    ? opts.retryOf.attachments
    : await readyAttachments(em, principal.workspaceId, input.attachmentFileIds ?? []);
  const job = await insertJob(em, {
    id: opts.idStyle === 'session' ? `command_${randomUUID()}` : randomUUID(),
    workspaceId: principal.workspaceId,
    threadId,
    createdById: principal.userId,
    message: input.message,
    assistantContext: input.assistantContext,
    aiProvider: input.aiProvider ?? null,
    aiModel: input.aiModel ?? null,
    attachments,
    attempt: opts.retryOf ? opts.retryOf.attempt + 1 : 1,
    retryOfJobId: opts.retryOf?.id ?? null,
    // Session sends are chat messages (v1 creates append none); a retry stays in the chat its job was in.
    chat: opts.retryOf ? opts.retryOf.chat : opts.chat === true,
  });
  await engine.enqueue({ workspaceId: principal.workspaceId, threadId, title: thread.title });
  return job;
}

/** Settles an expired confirmation on read: the job moves to `blocked`. */
export async function settleExpiry(em: EntityManager, job: CommandJobRow): Promise<CommandJobRow> {
  if (job.status !== 'waiting_confirmation' || !job.confirmation_expires_at || new Date(job.confirmation_expires_at).getTime() > Date.now())
    return job;
  const moved = await moveJob(
    em,
    job.id,
    ['waiting_confirmation'],
    { status: 'blocked', confirmation_state: 'expired', progress_message: 'The confirmation expired; the plan was not executed.' },
    { where: `confirmation_state = 'pending'`, params: [] },
  );
  return moved ?? (await loadJob(em, job.workspace_id, job.id));
}

/** A job of the caller's workspace by id, an expired confirmation settled; another workspace's id is not found. */
async function loadSettledJob(em: EntityManager, principal: WorkspacePrincipal, jobId: string): Promise<CommandJobRow> {
  return settleExpiry(em, await loadJob(em, principal.workspaceId, jobId));
}

/** One job (expiry settled) with its live events when its execution has a buffer. */
export async function getJob(
  em: EntityManager,
  engine: CommandJobEngine,
  principal: WorkspacePrincipal,
  jobId: string,
): Promise<{ row: CommandJobRow; events: CommandProgressEvent[] }> {
  const row = await loadSettledJob(em, principal, jobId);
  const events = isActive(row.status) ? ((await engine.progress(row.id)) ?? []) : [];
  return { row, events };
}

/** v1 list: newest first (thread sequence desc with `threadId`); `cursor` is the last job id of the previous page. */
export async function listJobs(
  em: EntityManager,
  principal: WorkspacePrincipal,
  query: { threadId?: string; cursor?: string; limit: number },
): Promise<{ rows: CommandJobRow[]; nextCursor: string | null }> {
  const params: unknown[] = [principal.workspaceId];
  let where = 'workspace_id = ?';
  if (query.threadId) {
    where += ' and thread_id = ?';
    params.push(query.threadId);
  }
  if (query.cursor) {
    const [anchor] = await sql<CommandJobRow>(em, `select * from command_jobs where id = ? and ${where}`, [query.cursor, ...params]);
    if (!anchor) throw invalidInput('cursor does not name a job of this list.', { code: 'request_malformed' });
    if (query.threadId) {
      where += ' and sequence < ?';
      params.push(anchor.sequence);
    } else {
      where += ' and (created_at, id) < (?, ?)';
      params.push(anchor.created_at, anchor.id);
    }
  }
  const order = query.threadId ? 'sequence desc' : 'created_at desc, id desc';
  const rows = await sql<CommandJobRow>(em, `select * from command_jobs where ${where} order by ${order} limit ?`, [
    ...params,
    query.limit + 1,
  ]);
  const { page, nextCursor } = lastIdPage(rows, query.limit);
  return { rows: page, nextCursor };
}

/**
 * Cancels a non-terminal job: the row moves first (a queued job releases its thread slot at
 * once), then the execution is asked to stop. 409 from a terminal status.
 */
export async function cancelJob(
  em: EntityManager,
  engine: CommandJobEngine,
  principal: WorkspacePrincipal,
  jobId: string,
): Promise<CommandJobRow> {
  const job = await loadSettledJob(em, principal, jobId);
  const moved = await moveJob(em, jobId, ['queued', 'running', 'waiting_confirmation'], {
    status: 'canceled',
    progress_message: 'The job was canceled.',
  });
  if (!moved) throw conflict(`Cannot cancel a ${job.status} command job.`);
  if (job.status !== 'queued') await engine.cancel(jobId);
  return moved;
}

/** Session retry: a failed or canceled job is queued again as a new job on its thread. */
export async function retryJob(
  em: EntityManager,
  engine: CommandJobEngine,
  principal: WorkspacePrincipal,
  jobId: string,
): Promise<CommandJobRow> {
  const job = await loadSettledJob(em, principal, jobId);
  if (job.status !== 'failed' && job.status !== 'canceled')
    throw conflict(`Only failed or canceled command jobs can be retried; this one is ${job.status}.`);
  return createJob(
    em,
    engine,
    principal,
    {
      threadId: job.thread_id,
      message: job.message,
      assistantContext: job.assistant_context ?? undefined,
      aiProvider: job.ai_provider ?? undefined,
      aiModel: job.ai_model ?? undefined,
    },
    { idStyle: job.id.startsWith('command_') ? 'session' : 'v1', retryOf: job },
  );
}

/** Registers a file of the workspace as an output of the job (once per file). */
export async function registerArtifact(
  em: EntityManager,
  principal: WorkspacePrincipal,
  jobId: string,
  fileId: string,
): Promise<CommandJobRow> {
  const job = await loadJob(em, principal.workspaceId, jobId);
  const file = await em.findOne(StoredFileSchema, { id: fileId, workspaceId: principal.workspaceId });
  if (!file) throw notFound(`File ${fileId} not found.`);
  if (job.artifacts.some((a) => a.fileId === fileId)) return job;
  const artifacts = [
    ...job.artifacts,
    {
      fileId,
      name: file.name,
      mimeType: file.mimeType,
      status: 'registered' as const,
      registeredAt: new Date().toISOString(),
      completedAt: null,
    },
  ];
  return (await updateJob(em, jobId, { artifacts }))!;
}

/** Completes a registered artifact; its file must be ready (423 otherwise). */
export async function completeArtifact(
  em: EntityManager,
  principal: WorkspacePrincipal,
  jobId: string,
  fileId: string,
): Promise<CommandJobRow> {
  const job = await loadJob(em, principal.workspaceId, jobId);
  const artifact = job.artifacts.find((a) => a.fileId === fileId);
  if (!artifact) throw notFound(`Artifact ${fileId} not found.`);
  if (artifact.status === 'completed') return job;
  const file = await em.findOne(StoredFileSchema, { id: fileId, workspaceId: principal.workspaceId });
  if (!file) throw notFound(`File ${fileId} not found.`);
  if (file.status !== 'ready') throw locked(`File ${fileId} is ${file.status}; only ready files complete an artifact.`);
  const artifacts = job.artifacts.map((a) =>
    a.fileId === fileId ? { ...a, status: 'completed' as const, completedAt: new Date().toISOString() } : a,
  );
  return (await updateJob(em, jobId, { artifacts }))!;
}
