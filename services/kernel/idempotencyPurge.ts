import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { startPeriodicPass } from './periodic';
import { deleteExpiredIdempotencyRecords, tryAdvisoryXactLock } from './store';

/**
 * Purge of expired idempotency records. A record binds its key for 24 h (the contract's
 * Idempotency-Key validity, `IDEMPOTENCY_TTL_MS`); after that a claim of the same key deletes
 * it anyway, but keys that are never reused would stay for ever. Every API process runs the
 * purge; one pass at a time in the whole deployment deletes at most `batch` rows, oldest
 * expiry first, so a large backlog drains over several passes in short transactions instead of
 * one long delete that holds locks and bloats the WAL.
 */
export const IDEMPOTENCY_PURGE = {
  /** Rows one pass deletes at most. */
  batch: 1_000,
  /** Pause between passes: up to 60,000 rows an hour, well above what the API writes. */
  intervalMs: 60_000,
} as const;

/**
 * One purge pass; returns how many records it deleted (0 when another process's pass holds the
 * purge's advisory lock, so two processes never delete the same rows side by side).
 */
export async function purgeExpiredIdempotencyRecordsOnce(orm: MikroORM, opts: { batch?: number; now?: Date } = {}): Promise<number> {
  return orm.em.fork().transactional(async (tx) => {
    if (!(await tryAdvisoryXactLock(tx, 'idempotency-purge'))) return 0;
    return deleteExpiredIdempotencyRecords(tx, opts.now ?? new Date(), opts.batch ?? IDEMPOTENCY_PURGE.batch);
  });
}

/** Runs the purge every `intervalMs` in the API process's background (main/wiring.ts). */
export function startIdempotencyPurge(opts: { orm: MikroORM; logger: Logger; intervalMs?: number; batch?: number }): {
  stop(): Promise<void>;
} {
  return startPeriodicPass({
    name: 'idempotency purge',
    intervalMs: opts.intervalMs ?? IDEMPOTENCY_PURGE.intervalMs,
    logger: opts.logger,
    pass: async () => {
      const deleted = await purgeExpiredIdempotencyRecordsOnce(opts.orm, { batch: opts.batch });
      if (deleted > 0) opts.logger.debug({ deleted }, 'expired idempotency records purged');
    },
  });
}
