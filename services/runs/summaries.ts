/**
 * Run summaries: what lists show (GET /api/v1/runs, the session logs list). A list is for
 * finding runs, so it carries identity, status, timing, cost and counts, never input, output,
 * steps or logs: one SQL statement reads only the summary columns (with the step and log
 * counts as aggregates), so a list of runs with megabytes of output stays small. The full run
 * is GET /api/v1/runs/{id}.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RunStatus, RunTrigger } from '../../db/entities';
import { projectionFor, type WorkspacePrincipal } from '../kernel/principal';
import { RUN_RESTRICTED_FIELDS, safeRedaction } from '../kernel/redaction';
import { matchingRunsSql, type RunFilters } from './queries';
import { selectMatchingRuns } from './store';
import { isTerminal } from './views';

export interface RunSummary {
  id: string;
  workspaceId: string;
  workflowId: string;
  versionId: string | null;
  workflowName: string;
  trigger: RunTrigger;
  status: RunStatus;
  active: boolean;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  updatedAt: Date;
  durationMs: number | null;
  costCredits: number;
  dryRun: boolean;
  parentRunId: string | null;
  parentNodeId: string | null;
  stepCount: number;
  logCount: number;
  /** Full projection only. */
  error?: string | null;
}

const SUMMARY_COLUMNS = `r.id, r.workspace_id, r.workflow_id, r.version_id, r.workflow_name, r.trigger, r.status,
  r.created_at, r.started_at, r.finished_at, r.updated_at, r.duration_ms, r.cost_credits, r.dry_run,
  r.parent_run_id, r.parent_node_id, r.error,
  (select count(*) from run_steps s where s.run_id = r.id)::int as step_count,
  (select count(*) from run_logs l where l.run_id = r.id)::int as log_count`;

type Row = Record<string, unknown>;
const date = (v: unknown): Date | null => (v == null ? null : v instanceof Date ? v : new Date(String(v)));
const str = (v: unknown): string | null => (v == null ? null : String(v));

function toSummary(row: Row): RunSummary & { error: string | null } {
  const status = String(row.status) as RunStatus;
  return {
    id: String(row.id),
    workspaceId: String(row.workspace_id),
    workflowId: String(row.workflow_id),
    versionId: str(row.version_id),
    workflowName: String(row.workflow_name),
    trigger: String(row.trigger) as RunTrigger,
    status,
    active: !isTerminal(status),
    createdAt: date(row.created_at)!,
    startedAt: date(row.started_at),
    finishedAt: date(row.finished_at),
    updatedAt: date(row.updated_at)!,
    durationMs: row.duration_ms == null ? null : Number(row.duration_ms),
    costCredits: Number(row.cost_credits ?? 0),
    dryRun: Boolean(row.dry_run),
    parentRunId: str(row.parent_run_id),
    parentNodeId: str(row.parent_node_id),
    stepCount: Number(row.step_count ?? 0),
    logCount: Number(row.log_count ?? 0),
    error: str(row.error),
  };
}

/**
 * Summaries of the workspace's runs matching the filters, sorted and limited in SQL, as the
 * principal may see them: full readers get `error`; safe readers get the `workspace-safe.v1`
 * marker instead (the same restricted fields as a safe run).
 */
export async function queryRunSummaries(em: EntityManager, principal: WorkspacePrincipal, f: RunFilters) {
  const rows = await selectMatchingRuns<Row>(em, matchingRunsSql(principal.workspaceId, f, SUMMARY_COLUMNS));
  const full = projectionFor(principal) === 'full';
  return rows.map((row) => {
    const { error, ...summary } = toSummary(row);
    return full ? { ...summary, error } : { ...summary, redaction: safeRedaction(RUN_RESTRICTED_FIELDS) };
  });
}

export type ProjectedRunSummary = Awaited<ReturnType<typeof queryRunSummaries>>[number];
