/**
 * Confirming a waiting job's plan (the spec's confirmation error table). The single-use
 * confirmation is claimed in PostgreSQL (pending → consumed) before the Update reaches the job's
 * execution; the job's resume activity marks it `resumed`. Failures carry a code and, where the
 * spec says so, the settled job; the routes write them in their family.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CommandJobRow } from '../../db/entities';
import type { CommandJobEngine } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { settleExpiry } from './jobs';
import { findJob, loadJob, moveJob, sql } from './store';

export type ConfirmErrorCode =
  | 'request_malformed'
  | 'confirmation_not_found'
  | 'confirmation_mismatch'
  | 'confirmation_expired'
  | 'confirmation_consumed'
  | 'execution_failed'
  | 'internal_error';

export const CONFIRM_MESSAGES: Record<ConfirmErrorCode, string> = {
  request_malformed: 'confirmationId is required.',
  confirmation_not_found: 'Confirmation not found.',
  confirmation_mismatch: 'The confirmation does not belong to this job or user.',
  confirmation_expired: 'The confirmation expired; the job is blocked.',
  confirmation_consumed: 'The confirmation was already used and the job never resumed.',
  execution_failed: 'The confirmed plan failed.',
  internal_error: 'The confirmation could not be processed.',
};

export class CommandConfirmError extends Error {
  constructor(
    readonly code: ConfirmErrorCode,
    /** The settled job, for `confirmation_expired`, `confirmation_consumed` and `execution_failed`. */
    readonly job?: CommandJobRow,
  ) {
    super(CONFIRM_MESSAGES[code]);
  }
}

const fail = (code: ConfirmErrorCode, job?: CommandJobRow) => new CommandConfirmError(code, job);

export async function confirmJob(
  em: EntityManager,
  engine: CommandJobEngine,
  waitMs: number,
  principal: WorkspacePrincipal,
  jobId: string,
  confirmationId: unknown,
): Promise<CommandJobRow> {
  let job = await loadJob(em, principal.workspaceId, jobId);
  if (typeof confirmationId !== 'string' || confirmationId.trim() === '') throw fail('request_malformed');
  if (!job.plan || !job.confirmation_id) throw fail('confirmation_not_found');
  if (confirmationId !== job.confirmation_id) {
    const [other] = await sql(em, 'select 1 from command_jobs where confirmation_id = ?', [confirmationId]);
    throw fail(other ? 'confirmation_mismatch' : 'confirmation_not_found');
  }
  if (job.created_by_id !== principal.userId) throw fail('confirmation_mismatch');
  job = await settleExpiry(em, job);
  switch (job.confirmation_state) {
    case 'resumed':
      // A replay after the confirmation resumed the job: the current job.
      return job;
    case 'expired':
      throw fail('confirmation_expired', job);
    case 'consumed':
      if (job.status === 'waiting_confirmation') {
        // Used, but the job never resumed: it fails, and a retry issues a new confirmation.
        job =
          (await moveJob(em, jobId, ['waiting_confirmation'], {
            status: 'failed',
            error: CONFIRM_MESSAGES.confirmation_consumed,
            progress_message: 'The job failed.',
          })) ?? job;
        throw fail('confirmation_consumed', job);
      }
      if (job.status === 'failed' || job.status === 'canceled') throw fail('confirmation_consumed', job);
      return job;
    default:
      break;
  }
  if (job.status !== 'waiting_confirmation') throw fail('confirmation_not_found');
  const [claimed] = await sql(
    em,
    `update command_jobs set confirmation_state = 'consumed', updated_at = now() where id = ? and status = 'waiting_confirmation' and confirmation_state = 'pending' returning id`,
    [jobId],
  );
  if (!claimed) {
    const now = (await findJob(em, jobId))!;
    if (now.confirmation_state === 'resumed') return now;
    throw fail(now.confirmation_state === 'expired' ? 'confirmation_expired' : 'confirmation_consumed', now);
  }
  let outcome;
  try {
    outcome = await engine.confirm(jobId, confirmationId, waitMs);
  } catch {
    throw fail('internal_error');
  }
  if (outcome.kind === 'refused' && outcome.reason === 'expired') {
    const blocked = await moveJob(em, jobId, ['waiting_confirmation'], {
      status: 'blocked',
      confirmation_state: 'expired',
      progress_message: 'The confirmation expired; the plan was not executed.',
    });
    throw fail('confirmation_expired', blocked ?? (await findJob(em, jobId))!);
  }
  if (outcome.kind !== 'settled' && outcome.kind !== 'running') throw fail('internal_error');
  const current = (await findJob(em, jobId))!;
  if (current.status === 'failed') throw fail('execution_failed', current);
  return current;
}
