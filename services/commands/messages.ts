/**
 * The chat of a thread: user messages (session sends, schedule firings) and the assistant's
 * message when such a job ends (appended by store.ts). Listed oldest first with a cursor, and
 * answered by the session job read when its id names a message rather than a job.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommandMessageRow } from '../../db/entities';
import { invalidInput, notFound } from '../kernel/errors';
import type { Principal, WorkspacePrincipal } from '../kernel/principal';
import { projectFor } from '../kernel/redaction';
import { COMMAND_MESSAGES, findThread, sql } from './store';
import { lastIdPage } from '../kernel/pagination';

export interface CommandMessageView {
  id: string;
  threadId: string;
  role: 'user' | 'assistant';
  content: string;
  jobId: string | null;
  jobStatus: string | null;
  createdById: string | null;
  createdAt: string;
}

export function messageView(row: CommandMessageRow): CommandMessageView {
  return {
    id: row.id,
    threadId: row.thread_id,
    role: row.role,
    content: row.content,
    jobId: row.job_id,
    jobStatus: row.job_status,
    createdById: row.created_by_id,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** Viewer, personal and copilot principals see a message without its text (as jobs hide their traces). */
export const COMMAND_MESSAGE_RESTRICTED_FIELDS = ['content'] as const;

export function projectMessage(principal: Principal, row: CommandMessageRow) {
  return projectFor(principal, { ...messageView(row) }, COMMAND_MESSAGE_RESTRICTED_FIELDS);
}

/** A thread's messages, oldest first; `cursor` is the last message id of the previous page. */
export async function listMessages(
  em: EntityManager,
  principal: WorkspacePrincipal,
  threadId: string,
  query: { cursor?: string; limit: number },
): Promise<{ rows: CommandMessageRow[]; nextCursor: string | null }> {
  if (!(await findThread(em, principal.workspaceId, threadId))) throw notFound(COMMAND_MESSAGES.threadNotFound);
  const params: unknown[] = [threadId];
  let where = 'thread_id = ?';
  if (query.cursor) {
    const [anchor] = await sql<CommandMessageRow>(em, 'select * from command_messages where id = ? and thread_id = ?', [
      query.cursor,
      threadId,
    ]);
    if (!anchor) throw invalidInput('cursor does not name a message of this thread.', { code: 'request_malformed' });
    where += ' and position > ?';
    params.push(anchor.position);
  }
  const rows = await sql<CommandMessageRow>(em, `select * from command_messages where ${where} order by position limit ?`, [
    ...params,
    query.limit + 1,
  ]);
  const { page, nextCursor } = lastIdPage(rows, query.limit);
  return { rows: page, nextCursor };
}

/**
 * The chat-message fallback of the session job read: the message with this id, or (when the
 * id names a job that is gone) the newest message that job left. Null when neither exists.
 */
export async function findMessageFallback(em: EntityManager, workspaceId: string, id: string): Promise<CommandMessageRow | null> {
  const [byId] = await sql<CommandMessageRow>(em, 'select * from command_messages where id = ? and workspace_id = ?', [id, workspaceId]);
  if (byId) return byId;
  const [byJob] = await sql<CommandMessageRow>(
    em,
    'select * from command_messages where job_id = ? and workspace_id = ? order by position desc limit 1',
    [id, workspaceId],
  );
  return byJob ?? null;
}
