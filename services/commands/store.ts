/**
 * SQL of the command jobs area and the public shapes built from its rows. Every state move is
 * a conditional update (`where status in …`), so the API, the job workflow's activities and
 * the expiry settlement on read never move a job twice.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { toStorable, wellFormedParams } from '../kernel/storableText';
import {
  type CommandJobRow,
  type CommandJobStatus,
  type CommandMessageRow,
  type CommandScheduleRow,
  type CommandThreadRow,
  type CommandTrace,
} from '../../db/entities';
import { COMMAND_ACTIVE_STATUSES } from '../../engine/statuses';
import { notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';

export const COMMAND_MESSAGES = {
  jobNotFound: 'Command job not found',
  threadNotFound: 'Command thread not found',
  messageRequired: 'Message is required.',
  titleRequired: 'Schedule title is required.',
  promptRequired: 'Schedule prompt is required.',
} as const;

export async function sql<T = Record<string, unknown>>(em: EntityManager, query: string, params: unknown[] = []): Promise<T[]> {
  return em.execute(query, wellFormedParams(params), 'all');
}

const JSON_COLUMNS = new Set(['assistant_context', 'attachments', 'artifacts', 'plan', 'traces', 'result']);

/** `set a = ?, b = ?::jsonb` with its parameters, from a partial row. */
function assignments(patch: Partial<CommandJobRow>): { text: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const [column, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (JSON_COLUMNS.has(column)) {
      parts.push(`${column} = ?::jsonb`);
      params.push(value === null ? null : JSON.stringify(toStorable(value)));
    } else {
      parts.push(`${column} = ?`);
      params.push(value);
    }
  }
  parts.push('updated_at = now()');
  return { text: parts.join(', '), params };
}

/**
 * Moves a job when its status is one of `from` (and `extra` holds); returns the updated row,
 * or null when the job was elsewhere.
 */
export async function moveJob(
  em: EntityManager,
  jobId: string,
  from: readonly CommandJobStatus[],
  patch: Partial<CommandJobRow>,
  extra?: { where: string; params: unknown[] },
): Promise<CommandJobRow | null> {
  const set = assignments(patch);
  // A chat job that ends appends the assistant's message in the same statement (so the move and
  // the message commit together): the answer, why it failed, or the progress message.
  const rows = await sql<CommandJobRow>(
    em,
    `with moved as (
       update command_jobs set ${set.text} where id = ? and status in (${from.map(() => '?').join(', ')})${extra ? ` and ${extra.where}` : ''} returning *
     ), answer as (
       insert into command_messages (id, workspace_id, thread_id, role, content, job_id, job_status, created_by_id, created_at)
       select ?, workspace_id, thread_id, 'assistant',
              case status when 'succeeded' then coalesce(result->>'content', '')
                          when 'failed' then 'The job failed: ' || coalesce(error, 'unknown error')
                          else coalesce(progress_message, 'The job ended ' || status || '.') end,
              id, status, null, clock_timestamp()
         from moved where chat and status in ('succeeded', 'failed', 'canceled', 'blocked')
       on conflict (job_id, role) where job_id is not null do nothing
     )
     select * from moved`,
    [...set.params, jobId, ...from, ...(extra?.params ?? []), newId('cmsg')],
  );
  return rows[0] ?? null;
}

/** A chat message (once per job and role: a retried step or a repeated firing appends nothing). */
export async function insertMessage(
  em: EntityManager,
  message: {
    workspaceId: string;
    threadId: string;
    role: 'user' | 'assistant';
    content: string;
    jobId: string | null;
    jobStatus?: CommandJobStatus | null;
    createdById: string | null;
  },
): Promise<CommandMessageRow | null> {
  const rows = await sql<CommandMessageRow>(
    em,
    `insert into command_messages (id, workspace_id, thread_id, role, content, job_id, job_status, created_by_id, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, clock_timestamp()) on conflict (job_id, role) where job_id is not null do nothing returning *`,
    [
      newId('cmsg'),
      message.workspaceId,
      message.threadId,
      message.role,
      message.content,
      message.jobId,
      message.jobStatus ?? null,
      message.createdById,
    ],
  );
  return rows[0] ?? null;
}

export async function updateJob(em: EntityManager, jobId: string, patch: Partial<CommandJobRow>): Promise<CommandJobRow | null> {
  const set = assignments(patch);
  const rows = await sql<CommandJobRow>(em, `update command_jobs set ${set.text} where id = ? returning *`, [...set.params, jobId]);
  return rows[0] ?? null;
}

export async function findJob(em: EntityManager, jobId: string): Promise<CommandJobRow | null> {
  const rows = await sql<CommandJobRow>(em, 'select * from command_jobs where id = ?', [jobId]);
  return rows[0] ?? null;
}

/** The job of this workspace, or 404 (another workspace's id is not found). */
export async function loadJob(em: EntityManager, workspaceId: string, jobId: string): Promise<CommandJobRow> {
  const rows = await sql<CommandJobRow>(em, 'select * from command_jobs where id = ? and workspace_id = ?', [jobId, workspaceId]);
  if (!rows[0]) throw notFound(COMMAND_MESSAGES.jobNotFound);
  return rows[0];
}

export async function findThread(em: EntityManager, workspaceId: string, threadId: string): Promise<CommandThreadRow | null> {
  const rows = await sql<CommandThreadRow>(em, 'select * from command_threads where id = ? and workspace_id = ?', [threadId, workspaceId]);
  return rows[0] ?? null;
}

export async function insertThread(
  em: EntityManager,
  row: { id: string; workspaceId: string; createdById: string; title: string },
): Promise<CommandThreadRow> {
  const rows = await sql<CommandThreadRow>(
    em,
    `insert into command_threads (id, workspace_id, created_by_id, title, created_at, updated_at) values (?, ?, ?, ?, now(), now()) returning *`,
    [row.id, row.workspaceId, row.createdById, row.title],
  );
  const [inserted] = rows;
  if (!inserted) throw new Error('insert into command_threads returned no row');
  return inserted;
}

export interface NewJob {
  id: string;
  workspaceId: string;
  threadId: string;
  createdById: string;
  message: string;
  assistantContext?: unknown;
  aiProvider?: string | null;
  aiModel?: string | null;
  attachments: CommandJobRow['attachments'];
  attempt?: number;
  retryOfJobId?: string | null;
  /** Started from a chat message: the user's message is appended with it, and its end appends the assistant's. */
  chat?: boolean;
}

/**
 * Inserts a `queued` job at the end of its thread (the thread row is locked, so sequences are
 * gapless and in arrival order). Returns the existing row when the id is already taken
 * (a retried schedule firing).
 */
export async function insertJob(em: EntityManager, job: NewJob): Promise<CommandJobRow> {
  return em.transactional(async (tx) => {
    const existing = await findJob(tx, job.id);
    if (existing) return existing;
    const [thread] = await sql<{ next_sequence: number }>(
      tx,
      'update command_threads set next_sequence = next_sequence + 1, updated_at = now() where id = ? returning next_sequence - 1 as next_sequence',
      [job.threadId],
    );
    if (!thread) throw notFound(COMMAND_MESSAGES.threadNotFound);
    const [inserted] = await sql<CommandJobRow>(
      tx,
      `insert into command_jobs (id, workspace_id, thread_id, sequence, created_by_id, status, message, assistant_context, ai_provider, ai_model, attachments, attempt, retry_of_job_id, chat, created_at, updated_at)
       values (?, ?, ?, ?, ?, 'queued', ?, ?::jsonb, ?, ?, ?::jsonb, ?, ?, ?, now(), now()) returning *`,
      [
        job.id,
        job.workspaceId,
        job.threadId,
        thread.next_sequence,
        job.createdById,
        job.message,
        job.assistantContext === undefined ? null : JSON.stringify(toStorable(job.assistantContext)),
        job.aiProvider ?? null,
        job.aiModel ?? null,
        JSON.stringify(toStorable(job.attachments)),
        job.attempt ?? 1,
        job.retryOfJobId ?? null,
        job.chat === true,
      ],
    );
    if (!inserted) throw new Error('insert into command_jobs returned no row');
    // A retry re-runs a message already in the chat: only a new send appends the user's message.
    if (job.chat && !job.retryOfJobId) {
      await insertMessage(tx, {
        workspaceId: job.workspaceId,
        threadId: job.threadId,
        role: 'user',
        content: job.message,
        jobId: job.id,
        createdById: job.createdById,
      });
    }
    return inserted;
  });
}

/** The oldest queued job of a thread (its FIFO owner runs one job at a time, so none is active). */
export async function nextQueuedJob(em: EntityManager, threadId: string): Promise<string | null> {
  const rows = await sql<{ id: string }>(
    em,
    `select id from command_jobs where thread_id = ? and status = 'queued' order by sequence limit 1`,
    [threadId],
  );
  return rows[0]?.id ?? null;
}

export const isActive = (status: CommandJobStatus) => COMMAND_ACTIVE_STATUSES.includes(status);

export async function findSchedule(em: EntityManager, scheduleId: string): Promise<CommandScheduleRow | null> {
  const rows = await sql<CommandScheduleRow>(em, 'select * from command_schedules where id = ?', [scheduleId]);
  return rows[0] ?? null;
}

/** Adds a model call's cost to the job's running total (in one statement, so concurrent calls never lose an addition). */
export async function addJobCost(em: EntityManager, jobId: string, credits: number): Promise<void> {
  await em.execute('update command_jobs set cost_credits = cost_credits + ? where id = ?', [credits, jobId]);
}

/** Marks the job's confirmation resumed when it is still pending or consumed. */
export async function markConfirmationResumed(em: EntityManager, jobId: string): Promise<void> {
  await em.execute(
    `update command_jobs set confirmation_state = 'resumed' where id = ? and confirmation_state in ('pending', 'consumed')`,
    [jobId],
  );
}

/**
 * Appends an action's trace unless the job already has one for that action (a retried
 * activity), and points the progress at the trace's run. Tenant text made storable here.
 */
export async function appendTrace(em: EntityManager, jobId: string, trace: CommandTrace): Promise<void> {
  await em.execute(
    `update command_jobs set traces = traces || ?::jsonb, progress_run_id = coalesce(?, progress_run_id), updated_at = now()
      where id = ? and not exists (select 1 from jsonb_array_elements(traces) t where t->>'actionId' = ?)`,
    [JSON.stringify(toStorable([trace])), trace.runId, jobId, trace.actionId],
  );
}

/** The workspace's knowledge base names by id. */
export async function knowledgeBaseNames(em: EntityManager, workspaceId: string): Promise<Map<string, string>> {
  const rows = await em.execute<Array<{ id: string; name: string }>>('select id, name from knowledge_bases where workspace_id = ?', [
    workspaceId,
  ]);
  return new Map(rows.map((r) => [r.id, r.name]));
}
