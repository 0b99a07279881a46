/**
 * Raw SQL of the runs area: the read model's projection, the filtered listings and the state
 * moves. The listings' statements are built from the filters by `matchingRunsSql`
 * (queries.ts) and run here. State moves are conditional updates (`where status …`), so a run
 * that reached a terminal state is never overwritten by a late cancel or the stuck-run guard.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { LogRecord, StepRecord } from '../../engine/interpreter';
import { TERMINAL_RUN_STATUSES } from '../../engine/statuses';
import { toStorable } from '../kernel/storableText';
import type { RunProgress } from './readModel';

/** A statement selecting runs, with its parameters, as `matchingRunsSql` (queries.ts) builds it from the filters. */
export interface RunsQuery {
  sql: string;
  params: unknown[];
}

/**
 * Runs a statement built by `matchingRunsSql`; the rows carry the columns it was built with.
 * The caller names the row type: the statement's columns are only known to it.
 */
export async function selectMatchingRuns<T extends object>(em: EntityManager, query: RunsQuery): Promise<T[]> {
  return em.execute<T[]>(query.sql, query.params);
}

type Row = Record<string, unknown>;

/** The aggregates of the logs stats, one statement each over the same matched runs (`m`). */
export interface RunStatsRows {
  totals: Row;
  statusRows: Row[];
  triggerRows: Row[];
  slowest: Row[];
  failures: Row[];
}

/**
 * Totals, status and trigger breakdowns, the 5 slowest and the 5 newest failed runs among the
 * runs `matched` selects, each `summaryColumns` wide. Five statements in a row, not one
 * snapshot: a run that ends between them may count in one and not another.
 */
export async function runStats(em: EntityManager, matched: RunsQuery, summaryColumns: string): Promise<RunStatsRows> {
  const withMatched = (sql: string) => em.execute<Row[]>(`with m as (${matched.sql}) ${sql}`, matched.params);
  const terminal = TERMINAL_RUN_STATUSES.map((s) => `'${s}'`).join(', ');
  // An aggregate without `group by` yields exactly one row.
  const [totals = {}] = await withMatched(`
    select count(*)::int as total,
      count(*) filter (where status = 'failed')::int as failed,
      count(*) filter (where status = 'succeeded')::int as succeeded,
      count(*) filter (where status in (${terminal}))::int as terminal,
      count(*) filter (where status in ('queued', 'running', 'waiting'))::int as active,
      coalesce(round(avg(duration_ms)), 0)::float8 as avg_duration,
      coalesce(sum(cost_credits), 0)::float8 as cost,
      coalesce(round(percentile_cont(0.95) within group (order by duration_ms)::numeric), 0)::float8 as p95
    from m`);
  const statusRows = await withMatched(`select status, count(*)::int as count from m group by status order by count(*) desc, status asc`);
  const triggerRows = await withMatched(
    `select trigger, count(*)::int as count from m group by trigger order by count(*) desc, trigger asc`,
  );
  const slowest = await withMatched(
    `select ${summaryColumns} from m where duration_ms is not null order by duration_ms desc, created_at desc, id desc limit 5`,
  );
  const failures = await withMatched(`select ${summaryColumns} from m where status = 'failed' order by created_at desc, id desc limit 5`);
  return { totals, statusRows, triggerRows, slowest, failures };
}

const json = (v: unknown) => JSON.stringify(v === undefined ? null : v);

/** A step row's id: `runId:nodeId`, and `#iteration` after it from a loop's second iteration on. */
export function runStepId(runId: string, step: Pick<StepRecord, 'nodeId' | 'iteration'>): string {
  return step.iteration ? `${runId}:${step.nodeId}#${step.iteration}` : `${runId}:${step.nodeId}`;
}

/**
 * Upserts one chunk of a run's steps, keyed `runId:nodeId` (with `#iteration` in loops); a step keeps its first start.
 * `tx` must be the read model write's transaction: the statement runs on its connection.
 * One statement cannot upsert a row twice, so the chunk holds each node and iteration once.
 */
export async function upsertRunSteps(tx: EntityManager, run: { runId: string; workspaceId: string }, chunk: StepRecord[]): Promise<void> {
  await tx.getConnection().execute(
    `insert into run_steps (id, run_id, workspace_id, node_id, iteration, node_type, node_name, seq, status, attempts, input, output, error, started_at, finished_at, duration_ms)
     values ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?)').join(', ')}
     on conflict (id) do update set
       status = excluded.status, attempts = excluded.attempts, input = excluded.input, output = excluded.output,
       error = excluded.error, started_at = coalesce(run_steps.started_at, excluded.started_at),
       finished_at = excluded.finished_at, duration_ms = excluded.duration_ms`,
    chunk.flatMap((s) => [
      runStepId(run.runId, s),
      run.runId,
      run.workspaceId,
      s.nodeId,
      s.iteration ?? 0,
      s.nodeType,
      s.nodeName,
      s.seq,
      s.status,
      s.attempts,
      json(s.input),
      json(s.output),
      s.error,
      s.startedAt,
      s.finishedAt,
      s.durationMs,
    ]),
    'run',
    tx.getTransactionContext(),
  );
}

/**
 * Inserts one chunk of a run's logs, keyed `runId:seq`; a log already there (a retried
 * activity) is kept as it was. `tx` must be the read model write's transaction.
 */
export async function insertRunLogs(tx: EntityManager, run: { runId: string; workspaceId: string }, chunk: LogRecord[]): Promise<void> {
  await tx.getConnection().execute(
    `insert into run_logs (id, run_id, workspace_id, seq, node_id, level, message, data, created_at)
     values ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)').join(', ')} on conflict (id) do nothing`,
    chunk.flatMap((l) => [
      `${run.runId}:${l.seq}`,
      run.runId,
      run.workspaceId,
      l.seq,
      l.nodeId,
      l.level,
      l.message,
      json(l.data),
      l.createdAt,
    ]),
    'run',
    tx.getTransactionContext(),
  );
}

const TERMINAL_SQL = `('${TERMINAL_RUN_STATUSES.join("','")}')`;

/**
 * Sets the run fields a progress carries, `updated_at` to the progress's workflow time. A
 * terminal status is never overwritten by a non-terminal one (the API may already have recorded
 * a cancel); start, finish, duration and cancel reason keep their first value.
 * `tx` must be the read model write's transaction.
 */
export async function updateRunProgress(tx: EntityManager, p: Pick<RunProgress, 'runId' | 'at' | 'run'>): Promise<void> {
  const sets: string[] = ['updated_at = ?'];
  const params: unknown[] = [p.at];
  const r = p.run;
  if (r.status) {
    sets.push(`status = case when status in ${TERMINAL_SQL} then status else ? end`);
    params.push(r.status);
  }
  if (r.startedAt) {
    sets.push('started_at = coalesce(started_at, ?)');
    params.push(r.startedAt);
  }
  if (r.finishedAt) {
    sets.push(
      'finished_at = coalesce(finished_at, ?)',
      'duration_ms = coalesce(duration_ms, (extract(epoch from (?::timestamptz - coalesce(started_at, created_at))) * 1000)::int)',
    );
    params.push(r.finishedAt, r.finishedAt);
  }
  if (r.waits) {
    sets.push('waits = ?::jsonb');
    params.push(json(r.waits));
  }
  if ('output' in r) {
    sets.push('output = ?::jsonb');
    params.push(json(r.output));
  }
  if ('error' in r) {
    sets.push('error = ?');
    params.push(r.error ?? null);
  }
  if ('errorNodeId' in r) {
    sets.push('error_node_id = ?');
    params.push(r.errorNodeId ?? null);
  }
  if (r.costCredits !== undefined) {
    sets.push('cost_credits = ?');
    params.push(r.costCredits);
  }
  if (r.cancelReason) {
    sets.push('cancel_reason = coalesce(cancel_reason, ?)');
    params.push(r.cancelReason);
  }
  await tx
    .getConnection()
    .execute(`update runs set ${sets.join(', ')} where id = ?`, [...params, p.runId], 'run', tx.getTransactionContext());
}

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

/**
 * Writes one new run row in one statement (`svc_insert_run`, migration 20261128130000) and
 * returns it as stored; no row when a row with its id exists already. With `cap`, the row is
 * written only while its workspace has fewer than `cap` runs queued or running, counted under
 * the workspace's advisory lock in the same call, so admissions of every API process see each
 * other's rows; no row also means the workspace was full (admitted rows have fresh ids).
 * `columns` are the row's values by column name; every column must be given (a missing one is
 * NULL, not its default). Text is made storable (toStorable) before it is serialized.
 */
export async function insertRunRow(em: EntityManager, columns: Row, cap: number | null): Promise<Row[]> {
  return em.execute<Row[]>('select * from svc_insert_run(?::jsonb, ?::integer)', [JSON.stringify(toStorable(columns)), cap]);
}
