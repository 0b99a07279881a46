/**
 * Raw SQL of the kernel area: the only file of the area that talks SQL. Locks, conditional
 * inserts and batch deletes PostgreSQL does in one statement and the ORM has no form for:
 * idempotency records and sign-in counters (run admission is one statement of services/runs/store.ts).
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

// ---------------------------------------------------------------------------------------------
// Idempotency records

/**
 * Deletes the record of `key` in the workspace when it no longer binds the key: expired at
 * `now`, or still in progress since `abandonedBefore` (a claim its crashed process left).
 */
export async function deleteStaleIdempotencyRecord(
  em: EntityManager,
  args: { workspaceId: string; key: string; now: Date; abandonedBefore: Date },
): Promise<void> {
  await em.execute(
    `delete from idempotency_records
      where workspace_id = ? and key = ? and (expires_at <= ? or (state = 'in_progress' and created_at <= ?))`,
    [args.workspaceId, args.key, args.now, args.abandonedBefore],
  );
}

/** Claims a key with an in-progress record; false when the workspace already has a record of that key (the caller reads it). */
export async function insertIdempotencyClaim(
  em: EntityManager,
  r: { id: string; workspaceId: string; key: string; principalId: string; fingerprint: string; now: Date; expiresAt: Date },
): Promise<boolean> {
  const inserted: Array<{ id: string }> = await em.execute(
    `insert into idempotency_records (id, workspace_id, key, principal_id, fingerprint, state, created_at, expires_at)
     values (?, ?, ?, ?, ?, 'in_progress', ?, ?)
     on conflict (workspace_id, key) do nothing
     returning id`,
    [r.id, r.workspaceId, r.key, r.principalId, r.fingerprint, r.now, r.expiresAt],
  );
  return inserted.length > 0;
}

/** Stores the response of a claimed record (body and headers as JSON text); a record deleted meanwhile is not brought back. */
export async function completeIdempotencyRecord(
  em: EntityManager,
  recordId: string,
  response: { status: number; body: string; headers: string },
): Promise<void> {
  await em.execute(
    `update idempotency_records set state = 'completed', response_status = ?, response_body = ?::jsonb, response_headers = ?::jsonb where id = ?`,
    [response.status, response.body, response.headers, recordId],
  );
}

/** Deletes a record still in progress; a completed one stays (its response is replayed). */
export async function deleteInProgressIdempotencyRecord(em: EntityManager, recordId: string): Promise<void> {
  await em.execute(`delete from idempotency_records where id = ? and state = 'in_progress'`, [recordId]);
}

// ---------------------------------------------------------------------------------------------
// Sign-in counters

/** A sign-in counter as the limiter reads it; times are epoch milliseconds of the database's clock. */
export interface SignInCounterRow {
  key: string;
  attempts: number;
  windowEndsAt: number | null;
  lockedUntil: number | null;
  locks: number;
  now: number;
}

/**
 * Creates the counters of `keys` where missing and locks them until `tx` ends, in one statement;
 * the caller passes the keys sorted, so parallel attempts lock in one order and never wait on
 * each other in a cycle.
 */
export async function lockSignInCounters(tx: EntityManager, keys: string[]): Promise<SignInCounterRow[]> {
  return tx.execute<SignInCounterRow[]>(
    `insert into sign_in_counters (key) values (?), (?)
           on conflict (key) do update set key = excluded.key
         returning key, attempts, locks,
           (extract(epoch from window_ends_at) * 1000)::float8 as "windowEndsAt",
           (extract(epoch from locked_until) * 1000)::float8 as "lockedUntil",
           (extract(epoch from clock_timestamp()) * 1000)::float8 as now`,
    keys,
  );
}

/** Writes a counter back (the caller holds its lock), with the time after which it may be forgotten. */
export async function saveSignInCounter(tx: EntityManager, row: SignInCounterRow, forgetAt: number): Promise<void> {
  await tx.execute(
    `update sign_in_counters
          set attempts = ?, locks = ?,
              window_ends_at = to_timestamp(?::float8 / 1000), locked_until = to_timestamp(?::float8 / 1000), forget_at = to_timestamp(?::float8 / 1000)
        where key = ?`,
    [row.attempts, row.locks, row.windowEndsAt, row.lockedUntil, forgetAt, row.key],
  );
}

/**
 * After a right password: deletes the address's counter, then gives the account's counter one
 * place back within its window. Two statements, not one transaction: holding the address row
 * while waiting for the account's would invert the lock order of `lockSignInCounters`.
 */
export async function clearSignInCounters(em: EntityManager, keys: { address: string; account: string }): Promise<void> {
  await em.execute('delete from sign_in_counters where key = ?', [keys.address]);
  await em.execute(
    `update sign_in_counters set attempts = greatest(attempts - 1, 0)
        where key = ? and window_ends_at > clock_timestamp()`,
    [keys.account],
  );
}

/** True when `key` (an address the account signed in from) was remembered and not yet forgotten. */
export async function isRememberedSignInAddress(tx: EntityManager, key: string): Promise<boolean> {
  const rows = await tx.execute<Array<{ known: number }>>(
    'select 1 as known from sign_in_counters where key = ? and forget_at > clock_timestamp()',
    [key],
  );
  return rows.length > 0;
}

/** Remembers `key` (an address the account signed in from) for `keepMs`, from now. */
export async function rememberSignInAddress(em: EntityManager, key: string, keepMs: number): Promise<void> {
  await em.execute(
    `insert into sign_in_counters (key, forget_at) values (?, clock_timestamp() + ?::float8 * interval '1 millisecond')
       on conflict (key) do update set forget_at = excluded.forget_at`,
    [key, keepMs],
  );
}

/** Deletes up to 10 000 counters past their forget time; `skip locked`: rows in use are not waited for, so the sweep never joins a lock cycle. */
export async function sweepSignInCounters(em: EntityManager): Promise<void> {
  await em.execute(
    `delete from sign_in_counters where key in (
           select key from sign_in_counters where forget_at < clock_timestamp() limit 10000 for update skip locked)`,
  );
}
