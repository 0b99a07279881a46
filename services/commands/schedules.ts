/**
 * Command schedules: a prompt sent as a chat message on a cron. Each schedule is a Temporal
 * Schedule (CommandScheduleSync) whose firing queues the prompt as a job on the schedule's
 * thread (created on the first firing when the schedule names none) and counts the run.
 */
import { Cron } from 'croner';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommandScheduleRow } from '../../db/entities';
import { invalidInput } from '../kernel/errors';
import { newId, sha256Hex } from '../kernel/ids';
import type { CommandScheduleSync } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { COMMAND_MESSAGES, findSchedule, findThread, insertJob, insertThread, sql } from './store';
import { scheduleView } from './views';
import { notFound } from '../kernel/errors';

export interface CreateScheduleInput {
  title?: unknown;
  prompt?: unknown;
  cron?: unknown;
  timezone?: unknown;
  threadId?: unknown;
}

function validTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The next firing of `cron` in `timezone` after `from`; throws 400 for an invalid cron. */
export function nextRunOf(cron: string, timezone: string, from = new Date()): Date | null {
  let job: Cron;
  try {
    job = new Cron(cron, { timezone, paused: true });
  } catch (err) {
    throw invalidInput(`Invalid cron expression: ${(err as Error).message}`);
  }
  const next = job.nextRun(from);
  job.stop();
  return next;
}

export async function listSchedules(em: EntityManager, principal: WorkspacePrincipal) {
  const rows = await sql<CommandScheduleRow>(
    em,
    'select * from command_schedules where workspace_id = ? order by created_at desc, id desc',
    [principal.workspaceId],
  );
  return rows.map(scheduleView);
}

export async function createSchedule(
  em: EntityManager,
  sync: CommandScheduleSync,
  principal: WorkspacePrincipal,
  input: CreateScheduleInput,
) {
  const title = typeof input.title === 'string' ? input.title.trim() : '';
  if (!title) throw invalidInput(COMMAND_MESSAGES.titleRequired);
  const prompt = typeof input.prompt === 'string' ? input.prompt.trim() : '';
  if (!prompt) throw invalidInput(COMMAND_MESSAGES.promptRequired);
  if (typeof input.cron !== 'string' || input.cron.trim() === '') throw invalidInput('Schedule cron is required.');
  const cron = input.cron.trim();
  if (input.timezone !== undefined && (typeof input.timezone !== 'string' || input.timezone.trim() === ''))
    throw invalidInput('Invalid timezone.');
  const timezone = typeof input.timezone === 'string' ? input.timezone.trim() : 'UTC';
  if (!validTimezone(timezone)) throw invalidInput(`Invalid timezone: ${timezone}`);
  const nextRunAt = nextRunOf(cron, timezone);
  let threadId: string | null = null;
  if (input.threadId !== undefined && input.threadId !== null) {
    if (typeof input.threadId !== 'string' || !(await findThread(em, principal.workspaceId, input.threadId)))
      throw notFound(COMMAND_MESSAGES.threadNotFound);
    threadId = input.threadId;
  }
  const id = newId('csch');
  const [row] = await sql<CommandScheduleRow>(
    em,
    `insert into command_schedules (id, workspace_id, created_by_id, title, prompt, cron, timezone, enabled, thread_id, next_run_at, run_count, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, true, ?, ?, 0, now(), now()) returning *`,
    [id, principal.workspaceId, principal.userId, title, prompt, cron, timezone, threadId, nextRunAt],
  );
  if (!row) throw new Error('insert into command_schedules returned no row');
  await sync.upsert({ id, workspaceId: principal.workspaceId, title, cron, timezone, enabled: true });
  return scheduleView(row);
}

/**
 * One firing (idempotent on `firingId`, the firing execution's id): queues the prompt as a job
 * on the schedule's thread and updates lastRunAt, runCount and nextRunAt. Null when the schedule
 * is gone or disabled.
 */
export async function fireSchedule(
  em: EntityManager,
  scheduleId: string,
  firingId: string,
): Promise<{ jobId: string; threadId: string } | null> {
  return em.transactional(async (tx) => {
    const schedule = await findSchedule(tx, scheduleId);
    if (!schedule || !schedule.enabled) return null;
    const [done] = await sql<{ job_id: string }>(
      tx,
      'select job_id from command_schedule_firings where schedule_id = ? and firing_id = ?',
      [scheduleId, firingId],
    );
    let threadId = schedule.thread_id;
    if (done) return { jobId: done.job_id, threadId: threadId! };
    if (!threadId) {
      threadId = (
        await insertThread(tx, {
          id: newId('cthr'),
          workspaceId: schedule.workspace_id,
          createdById: schedule.created_by_id,
          title: schedule.title,
        })
      ).id;
    }
    const jobId = `command_sched_${sha256Hex(`${scheduleId}\0${firingId}`).slice(0, 32)}`;
    await insertJob(tx, {
      id: jobId,
      workspaceId: schedule.workspace_id,
      threadId,
      createdById: schedule.created_by_id,
      message: schedule.prompt,
      attachments: [],
      chat: true,
    });
    await sql(tx, 'insert into command_schedule_firings (schedule_id, firing_id, job_id, created_at) values (?, ?, ?, now())', [
      scheduleId,
      firingId,
      jobId,
    ]);
    const now = new Date();
    await sql(
      tx,
      'update command_schedules set thread_id = ?, last_run_at = ?, run_count = run_count + 1, next_run_at = ?, updated_at = now() where id = ?',
      [threadId, now, nextRunOf(schedule.cron, schedule.timezone, now), scheduleId],
    );
    return { jobId, threadId };
  });
}
