/**
 * Raw SQL of the kernel area: the only file of the area that talks SQL. Locks and
 * batch deletes PostgreSQL does in one statement and the ORM has no form for.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** Takes the transaction-scoped advisory lock named `name` if free; false when another transaction holds it. */
export async function tryAdvisoryXactLock(tx: EntityManager, name: string): Promise<boolean> {
  const [lock] = await tx.execute<Array<{ held: boolean }>>(`select pg_try_advisory_xact_lock(hashtext(?)) as held`, [name]);
  return Boolean(lock?.held);
}

/**
 * Deletes up to `batch` idempotency records expired at `now`, oldest first; returns how many.
 * `skip locked`: a record a claim is deleting or replacing right now is left to that claim.
 */
export async function deleteExpiredIdempotencyRecords(tx: EntityManager, now: Date, batch: number): Promise<number> {
  const deleted = await tx.execute<Array<{ id: string }>>(
    `delete from idempotency_records where id in (
       select id from idempotency_records where expires_at <= ? order by expires_at limit ? for update skip locked)
     returning id`,
    [now, batch],
  );
  return deleted.length;
}
