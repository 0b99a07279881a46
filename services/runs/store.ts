/**
 * Raw SQL of the runs area that is not the run read model's projection (readModel.ts) or the
 * filtered listings (queries.ts, logs.ts, summaries.ts), which build their SQL from filters.
 * State moves are conditional updates (`where status …`), so a run that reached a terminal
 * state is never overwritten by a late cancel or the stuck-run guard.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** Records a cancel on request unless the run already ended; the duration runs to now. */
export async function markRunCanceled(em: EntityManager, runId: string): Promise<void> {
  await em.execute(
    `update runs set status = 'canceled', waits = '[]'::jsonb, cancel_reason = coalesce(cancel_reason, 'Canceled on request'),
            finished_at = coalesce(finished_at, now()),
            duration_ms = coalesce(duration_ms, (extract(epoch from (now() - coalesce(started_at, created_at))) * 1000)::int),
            updated_at = now()
      where id = ? and status not in ('succeeded', 'failed', 'canceled')`,
    [runId],
  );
}

/** Stores an event wait's resume token unless the run and node already have one (a retried activity). */
export async function insertResumeTokenOnce(
  em: EntityManager,
  t: { id: string; token: string; workspaceId: string; runId: string; nodeId: string; expiresAt: string | null },
): Promise<void> {
  await em.execute(
    `insert into resume_tokens (id, token, workspace_id, run_id, node_id, created_at, expires_at)
     values (?, ?, ?, ?, ?, now(), ?) on conflict (run_id, node_id) do nothing`,
    [t.id, t.token, t.workspaceId, t.runId, t.nodeId, t.expiresAt],
  );
}

/** Marks an unused, unexpired token used; its run and node (one row) when this call won the claim, no row otherwise. */
export async function markResumeTokenUsed(em: EntityManager, token: string): Promise<Array<{ run_id: string; node_id: string }>> {
  return em.execute(
    `update resume_tokens set used_at = now()
      where token = ? and used_at is null and (expires_at is null or expires_at > now())
      returning run_id, node_id`,
    [token],
  );
}

/**
 * Queued and running runs (not dry runs) not updated for `staleMs` and with no pending outbox
 * entry, oldest first. A waiting run's projection is legitimately still for days, so it is left out.
 */
export async function staleLiveRuns(em: EntityManager, staleMs: number, batch: number): Promise<Array<{ id: string; status: string }>> {
  return em.execute(
    `select id, status from runs where status in ('queued', 'running') and dry_run = false and updated_at < now() - (? * interval '1 millisecond')
        and not exists (select 1 from webhook_outbox o where o.run_id = runs.id and o.status = 'pending')
      order by updated_at limit ?`,
    [staleMs, batch],
  );
}

/** Fails a run still queued (its execution never started) with `error`. */
export async function failQueuedRun(em: EntityManager, runId: string, error: string): Promise<void> {
  await em.execute(
    `update runs set status = 'failed', error = ?, waits = '[]'::jsonb, finished_at = coalesce(finished_at, now()), duration_ms = coalesce(duration_ms, 0), updated_at = now()
      where id = ? and status = 'queued'`,
    [error, runId],
  );
}

/** Fails a run that has not ended with `error` (already made storable by the caller); the duration runs to now. */
export async function failLiveRun(em: EntityManager, runId: string, error: string): Promise<void> {
  await em.execute(
    `update runs set status = 'failed', error = ?, waits = '[]'::jsonb, finished_at = coalesce(finished_at, now()),
            duration_ms = coalesce(duration_ms, (extract(epoch from (now() - coalesce(started_at, created_at))) * 1000)::int),
            updated_at = now()
      where id = ? and status not in ('succeeded', 'failed', 'canceled')`,
    [error, runId],
  );
}
