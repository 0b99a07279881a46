/**
 * The logs area: aggregates (stats), exports (JSON and CSV) and the execution detail of one
 * run. Every list is selected in SQL with the shared run filters of `runs/queries.ts`.
 *
 * The spec's Limits table: "at most 200 rows fetched from the durable store before level,
 * query, sort, limit are applied". Stats and export first take the 200 newest runs matching
 * the durable filters (status, trigger, workflowId, dateFrom, dateTo), then apply level, query,
 * sort and limit (default 200, clamped 1 to 200) to that window, both steps in one SQL
 * statement. A run older than the window is not found even when it matches `query`. Stats
 * aggregate over exactly the runs an export with the same filters returns.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import { RunLogSchema, RunSchema, RunStepSchema, type Run } from '../../db/entities';
import { TERMINAL_RUN_STATUSES } from '../../engine/statuses';
import { neutralizeCsvText } from '../kernel/csvCells';
import { notFound } from '../kernel/errors';
import type { WorkspacePrincipal } from '../kernel/principal';
import { projectionFor } from '../kernel/principal';
import { activeFilter, matchingRunsSql, queryRuns, type RunFilters, type RunSort } from './queries';
import { queryRunSummaries } from './summaries';
import { isTerminal, loadRunViews, projectRun, runTimes, runView, type RunView } from './views';

/**
 * Turns a run id into the URL of its execution detail. The API passes it in (api/http/links.ts),
 * so this module never knows a URL's shape.
 */
export type ExecutionLink = (runId: string) => string;

export const LOGS_LIMIT = { default: 200, min: 1, max: 200 } as const;
/** How many of the newest runs matching the durable filters stats and export look at. */
export const LOGS_DURABLE_WINDOW = 200;

/** The runs an export returns: see the Limits note at the top of this file. */
export function queryLogRuns(em: EntityManager, workspaceId: string, f: RunFilters): Promise<Run[]> {
  return queryRuns(em, workspaceId, f, { durableWindow: LOGS_DURABLE_WINDOW });
}
export const EXECUTION_NOT_FOUND = 'Execution not found';

/** The filters as echoed back: inactive ones (missing, empty, `all`) are null. */
export interface EchoedFilters {
  status: string | null;
  trigger: string | null;
  workflowId: string | null;
  level: string | null;
  dateFrom: string | null;
  dateTo: string | null;
  query: string | null;
  sort: RunSort;
  limit: number;
}

export function echoFilters(f: RunFilters): EchoedFilters {
  const v = (value: string | undefined) => activeFilter(value?.trim()) ?? null;
  return {
    status: v(f.status),
    trigger: v(f.trigger),
    workflowId: v(f.workflowId),
    level: v(f.level),
    dateFrom: v(f.dateFrom),
    dateTo: v(f.dateTo),
    query: v(f.query),
    sort: f.sort ?? 'newest',
    limit: f.limit,
  };
}

/** A run in the stats lists: no input, output or logs; `error` only for full projections. */
export interface RunSummary {
  id: string;
  workflowId: string;
  workflowName: string;
  status: string;
  trigger: string;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  durationMs: number | null;
  costCredits: number;
  error?: string | null;
  executionUrl: string;
}

export interface LogStats {
  totalRuns: number;
  failedRuns: number;
  succeededRuns: number;
  /** Mean duration of the runs that have one (rounded to whole ms); 0 when none has. */
  averageDurationMs: number;
  totalCostCredits: number;
  /**
   * Percentage (0 to 100, two decimals) of succeeded runs among the terminal ones
   * (succeeded, failed, canceled); queued, running and waiting runs have no outcome yet and
   * are left out. 0 when no run is terminal.
   */
  successRate: number;
  /** queued + running + waiting. */
  activeRuns: number;
  /** 95th percentile (`percentile_cont`, interpolated, rounded to whole ms) of durations; 0 when none. */
  p95DurationMs: number;
  /** Statuses present in the set, most frequent first (ties by name). */
  statusBreakdown: Array<{ status: string; count: number }>;
  /** Triggers present in the set, most frequent first (ties by name). */
  triggerBreakdown: Array<{ trigger: string; count: number }>;
  /** The 5 longest runs (runs without a duration are left out). */
  slowestRuns: RunSummary[];
  /** The 5 newest failed runs. */
  recentFailures: RunSummary[];
}

type Row = Record<string, unknown>;

const SUMMARY_COLUMNS = `id, workflow_id, workflow_name, status, trigger, created_at, started_at, finished_at, duration_ms, cost_credits, error`;

const toDate = (v: unknown): Date | null => (v == null ? null : v instanceof Date ? v : new Date(String(v)));
const toNum = (v: unknown): number => (v == null ? 0 : Number(v));

function summary(row: Row, executionLink: ExecutionLink, full: boolean): RunSummary {
  const id = String(row.id);
  return {
    id,
    workflowId: String(row.workflow_id),
    workflowName: String(row.workflow_name),
    status: String(row.status),
    trigger: String(row.trigger),
    createdAt: toDate(row.created_at)!,
    startedAt: toDate(row.started_at),
    finishedAt: toDate(row.finished_at),
    durationMs: row.duration_ms == null ? null : Number(row.duration_ms),
    costCredits: toNum(row.cost_credits),
    ...(full ? { error: (row.error as string | null) ?? null } : {}),
    executionUrl: executionLink(id),
  };
}

/** Aggregates over the runs an export with the same filters returns, all computed by PostgreSQL. */
export async function logStats(
  em: EntityManager,
  principal: WorkspacePrincipal,
  f: RunFilters,
  executionLink: ExecutionLink,
): Promise<LogStats> {
  const conn = em;
  const matched = matchingRunsSql(principal.workspaceId, f, 'r.*', { durableWindow: LOGS_DURABLE_WINDOW });
  const withMatched = (sql: string) => conn.execute<Row[]>(`with m as (${matched.sql}) ${sql}`, matched.params);
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
    `select ${SUMMARY_COLUMNS} from m where duration_ms is not null order by duration_ms desc, created_at desc, id desc limit 5`,
  );
  const failures = await withMatched(`select ${SUMMARY_COLUMNS} from m where status = 'failed' order by created_at desc, id desc limit 5`);
  const full = projectionFor(principal) === 'full';
  const terminalCount = toNum(totals.terminal);
  return {
    totalRuns: toNum(totals.total),
    failedRuns: toNum(totals.failed),
    succeededRuns: toNum(totals.succeeded),
    averageDurationMs: toNum(totals.avg_duration),
    totalCostCredits: toNum(totals.cost),
    successRate: terminalCount === 0 ? 0 : Math.round((toNum(totals.succeeded) / terminalCount) * 10_000) / 100,
    activeRuns: toNum(totals.active),
    p95DurationMs: toNum(totals.p95),
    statusBreakdown: statusRows.map((r) => ({ status: String(r.status), count: toNum(r.count) })),
    triggerBreakdown: triggerRows.map((r) => ({ trigger: String(r.trigger), count: toNum(r.count) })),
    slowestRuns: slowest.map((r) => summary(r, executionLink, full)),
    recentFailures: failures.map((r) => summary(r, executionLink, full)),
  };
}

export const CSV_COLUMNS = [
  'run_id',
  'workspace_id',
  'workflow_id',
  'workflow_name',
  'status',
  'trigger',
  'started_at',
  'finished_at',
  'duration_ms',
  'credits',
  'step_count',
  'log_count',
  'error',
] as const;

/** The export CSV; `error` stays empty for safe-projection callers. Free text is neutralized against spreadsheet formulas. */
export function runsCsv(views: RunView[], full: boolean): string {
  // RFC 4180: fields quoted only when they hold a comma, quote, CR or LF; CRLF after every record.
  // csv-stringify quotes a lone CR or LF only through quoted_match (its record delimiter is CRLF).
  return stringifyCsv(
    views.map((v) => [
      v.id,
      v.workspaceId,
      v.workflowId,
      text(v.workflowName),
      v.status,
      v.trigger,
      v.startedAt,
      v.finishedAt,
      v.durationMs,
      v.costCredits,
      v.steps.length,
      v.logs.length,
      full ? text(v.error) : null,
    ]),
    {
      header: true,
      columns: [...CSV_COLUMNS],
      record_delimiter: 'windows',
      quoted_match: /[\r\n]/,
      cast: { date: (d) => d.toISOString() },
    },
  );
}

function text(value: string | null | undefined): string | null {
  return value === null || value === undefined ? null : neutralizeCsvText(value);
}

export type LogExport =
  | { format: 'csv'; filename: string; csv: string }
  | { format: 'json'; filename: string; exportedAt: Date; filters: EchoedFilters; runs: ReturnType<typeof projectRun>[] };

/**
 * The export: the runs stats describe (same filters, window and limit), as CSV or as projected
 * run views. Safe-projection callers get no `error` column values and safe run views.
 */
export async function exportLogs(
  em: EntityManager,
  principal: WorkspacePrincipal,
  f: RunFilters,
  format: 'json' | 'csv',
): Promise<LogExport> {
  const views = await loadRunViews(em, await queryLogRuns(em, principal.workspaceId, f));
  const exportedAt = new Date();
  const filename = exportFilename(principal.workspaceId, exportedAt, format);
  if (format === 'csv') return { format, filename, csv: runsCsv(views, projectionFor(principal) === 'full') };
  return { format, filename, exportedAt, filters: echoFilters(f), runs: views.map((v) => projectRun(principal, v)) };
}

/** The session route's run list: summaries of the runs matching the shared filters, projected for the caller. */
export function sessionLogs(em: EntityManager, principal: WorkspacePrincipal, f: RunFilters) {
  return queryRunSummaries(em, principal, f);
}

/** `svc-logs-{workspaceId}-{YYYY-MM-DD}.{ext}` (UTC date of the export). */
export function exportFilename(workspaceId: string, at: Date, ext: 'json' | 'csv'): string {
  return `svc-logs-${workspaceId}-${at.toISOString().slice(0, 10)}.${ext}`;
}

type TimelineEntry =
  | { type: 'run'; at: Date; event: 'created' | 'started' | 'finished'; status: string }
  | {
      type: 'step';
      at: Date;
      nodeId: string;
      nodeType: string;
      nodeName: string | null;
      status: string;
      attempts: number;
      durationMs: number | null;
    }
  | { type: 'log'; at: Date; seq: number; nodeId: string | null; level: string; message?: string };

const relatedRun = (r: Run, executionLink: ExecutionLink) => ({
  id: r.id,
  workflowId: r.workflowId,
  workflowName: r.workflowName,
  status: r.status,
  trigger: r.trigger,
  parentNodeId: r.parentNodeId,
  createdAt: r.createdAt,
  finishedAt: r.finishedAt,
  executionUrl: executionLink(r.id),
});

/**
 * The execution detail of one run of the principal's workspace; missing and foreign runs are
 * the same 404 `Execution not found`. Safe-projection callers get the projected run, and log
 * entries of the timeline without their messages.
 */
export async function executionDetail(
  em: EntityManager,
  principal: WorkspacePrincipal,
  executionId: string,
  executionLink: ExecutionLink,
  temporal: { namespace: string; taskQueue: string },
) {
  const run = await em.findOne(RunSchema, { id: executionId, workspaceId: principal.workspaceId });
  if (!run) throw notFound(EXECUTION_NOT_FOUND);
  const [steps, logs, children, parent] = await Promise.all([
    em.find(RunStepSchema, { runId: run.id }, { orderBy: { seq: 'asc' } }),
    em.find(RunLogSchema, { runId: run.id }, { orderBy: { seq: 'asc' } }),
    em.find(RunSchema, { parentRunId: run.id, workspaceId: run.workspaceId }, { orderBy: { createdAt: 'asc', id: 'asc' } }),
    run.parentRunId ? em.findOne(RunSchema, { id: run.parentRunId, workspaceId: run.workspaceId }) : Promise.resolve(null),
  ]);
  const full = projectionFor(principal) === 'full';

  const nodeRunStates = Object.fromEntries(
    steps.map((s) => [
      s.nodeId,
      { status: s.status, attempts: s.attempts, startedAt: s.startedAt, finishedAt: s.finishedAt, durationMs: s.durationMs },
    ]),
  );

  const entries: TimelineEntry[] = [{ type: 'run', at: run.createdAt, event: 'created', status: 'queued' }];
  if (run.startedAt) entries.push({ type: 'run', at: run.startedAt, event: 'started', status: 'running' });
  for (const s of steps) {
    entries.push({
      type: 'step',
      at: s.startedAt ?? s.finishedAt ?? run.startedAt ?? run.createdAt,
      nodeId: s.nodeId,
      nodeType: s.nodeType,
      nodeName: s.nodeName,
      status: s.status,
      attempts: s.attempts,
      durationMs: s.durationMs,
    });
  }
  for (const l of logs)
    entries.push({ type: 'log', at: l.createdAt, seq: l.seq, nodeId: l.nodeId, level: l.level, ...(full ? { message: l.message } : {}) });
  if (run.finishedAt) entries.push({ type: 'run', at: run.finishedAt, event: 'finished', status: run.status });
  // Stable sort by time: ties keep the natural order (run start, steps by seq, logs by seq, run end).
  const timeline = entries
    .map((entry, i) => ({ entry, i }))
    .sort((a, b) => a.entry.at.getTime() - b.entry.at.getTime() || a.i - b.i)
    .map(({ entry }) => entry);

  return {
    executionId: run.id,
    workflowId: run.workflowId,
    workflowState: {
      status: run.status,
      active: !isTerminal(run.status),
      terminal: isTerminal(run.status),
      waiting: run.status === 'waiting',
      waitCount: run.waits.length,
      stepCount: steps.length,
      failedStepCount: steps.filter((s) => s.status === 'failed').length,
      lastNodeId: steps.at(-1)?.nodeId ?? null,
    },
    executionMetadata: {
      trigger: run.trigger,
      versionId: run.versionId,
      dryRun: run.dryRun,
      ...runTimes(run),
      // Dry runs are interpreted in the API process and never reach Temporal.
      temporal: run.dryRun ? null : { workflowId: run.id, namespace: temporal.namespace, taskQueue: temporal.taskQueue },
    },
    relatedRuns: {
      ...(parent ? { parentRun: relatedRun(parent, executionLink) } : {}),
      childRuns: children.map((c) => relatedRun(c, executionLink)),
    },
    nodeRunStates,
    timeline,
    run: projectRun(principal, runView(run, steps, logs)),
  };
}
