/**
 * Raw SQL of the workers area (health checks, heartbeats, status counters, local AI CLI
 * sessions): the only file of the area that talks SQL. Raw SQL where the ORM has no form for
 * the statement (upserts, aggregates, the database's own clock) or where loading entities would
 * only be thrown away (counts).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { LocalAiCliKind, WorkerHeartbeatState } from '../../db/entities';

/** `select 1`: proves the database answers (readiness, doctor). */
export async function pingDatabase(em: EntityManager): Promise<void> {
  await em.execute('select 1');
}

/** The database's clock (the smoke workflow proves the worker reaches PostgreSQL with it). */
export async function databaseNow(em: EntityManager): Promise<Date> {
  const rows: Array<{ now: Date }> = await em.execute('select now() as now');
  return new Date(rows.at(0)!.now); // `select now()` always yields one row
}

/** Deletes the heartbeats of processes gone for longer than `interval` (a PostgreSQL interval literal of ours, never input). */
export async function forgetHeartbeatsOlderThan(em: EntityManager, interval: string): Promise<void> {
  await em.execute(`delete from worker_heartbeats where beat_at < now() - interval '${interval}'`);
}

/** Writes a worker's beat (one row per process), stamped with the database's clock; an earlier error is kept when this beat has none. */
export async function upsertBeat(
  em: EntityManager,
  beat: { id: string; host: string; pid: number; state: WorkerHeartbeatState; error: string | null },
): Promise<void> {
  await em.execute(
    `insert into worker_heartbeats (id, host, pid, state, last_error, started_at, beat_at) values (?, ?, ?, ?, ?, now(), now())
     on conflict (id) do update set state = excluded.state, last_error = coalesce(excluded.last_error, worker_heartbeats.last_error), beat_at = now()`,
    [beat.id, beat.host, beat.pid, beat.state, beat.error],
  );
}

/** Heartbeats fresher than `staleMs` (by the database's clock), counted by state, with the newest error of each state. */
export async function freshHeartbeatsByState(
  em: EntityManager,
  staleMs: number,
): Promise<Array<{ state: WorkerHeartbeatState; n: number; last_error: string | null }>> {
  return em.execute(
    `select state, count(*)::int as n, (array_agg(last_error order by beat_at desc) filter (where last_error is not null))[1] as last_error
       from worker_heartbeats where beat_at > now() - (? * interval '1 millisecond') group by state`,
    [staleMs],
  );
}

/** Creates the workspace's session row of a CLI kind unless it exists (two first requests may race). */
export async function insertLocalAiCliSessionOnce(
  em: EntityManager,
  s: { id: string; workspaceId: string; kind: LocalAiCliKind; now: Date },
): Promise<void> {
  await em
    .getConnection()
    .execute(
      "insert into local_ai_cli_sessions (id, workspace_id, kind, status, created_at, updated_at) values (?, ?, ?, 'not_prepared', ?, ?) on conflict (workspace_id, kind) do nothing",
      [s.id, s.workspaceId, s.kind, s.now, s.now],
    );
}

/** The workspace's credential with this name, compared case-insensitively (credential names are unique that way). */
export async function credentialNamedAnyCase(
  em: EntityManager,
  workspaceId: string,
  name: string,
): Promise<{ id: string; type: string } | undefined> {
  const rows: Array<{ id: string; type: string }> = await em
    .getConnection()
    .execute('select id, type from credentials where workspace_id = ? and lower(name) = lower(?) limit 1', [workspaceId, name]);
  return rows[0];
}

/** The workspace's credentials counted by type. */
export async function credentialCountsByType(
  em: EntityManager,
  workspaceId: string,
): Promise<Array<{ type: string; count: string | number }>> {
  return em.getConnection().execute('select type, count(*) as count from credentials where workspace_id = ? group by type', [workspaceId]);
}

/** The workspace's runs counted by status. */
export async function runCountsByStatus(
  em: EntityManager,
  workspaceId: string,
): Promise<Array<{ status: string; count: string | number }>> {
  return em.getConnection().execute('select status, count(*) as count from runs where workspace_id = ? group by status', [workspaceId]);
}
