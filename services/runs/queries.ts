import type { EntityManager } from '@mikro-orm/postgresql';
import { RunSchema, type Run } from '../../db/entities';
import { invalidInput } from '../kernel/errors';
import { selectMatchingRuns } from './store';

/** Sort orders shared by the runs list and the logs routes. */
export const RUN_SORTS = ['newest', 'oldest', 'duration', 'cost', 'workflow', 'status'] as const;
export type RunSort = (typeof RUN_SORTS)[number];

export interface RunFilters {
  status?: string;
  trigger?: string;
  workflowId?: string;
  level?: string;
  dateFrom?: string;
  dateTo?: string;
  query?: string;
  sort?: RunSort;
  limit: number;
  /**
   * Safe readers may search only what they may see (ids, names, status, trigger, node ids),
   * or a free-text query would let them probe restricted content.
   */
  projection: 'full' | 'safe';
}

const ORDER: Record<RunSort, string> = {
  newest: 'r.created_at desc, r.id desc',
  oldest: 'r.created_at asc, r.id asc',
  duration: 'r.duration_ms desc nulls last, r.created_at desc',
  cost: 'r.cost_credits desc, r.created_at desc',
  workflow: 'lower(r.workflow_name) asc, r.created_at desc',
  status: 'r.status asc, r.created_at desc',
};

/** `all` and empty mean "no filter" (the spec's rule for shared filters). */
export const activeFilter = (value: string | undefined): string | undefined =>
  value === undefined || value === '' || value === 'all' ? undefined : value;

function parseDate(value: string | undefined, name: string): Date | undefined {
  const v = activeFilter(value);
  if (!v) return undefined;
  const date = new Date(v);
  if (Number.isNaN(date.getTime())) throw invalidInput(`${name} must be an ISO-8601 date.`);
  return date;
}

type Clauses = { where: string[]; params: unknown[] };

function clauses(): Clauses & { add: (clause: string, ...values: unknown[]) => void } {
  const where: string[] = [];
  const params: unknown[] = [];
  return { where, params, add: (clause, ...values) => void (where.push(clause), params.push(...values)) };
}

/** The filters stored on the run row itself (status, trigger, workflowId, dates). Invalid dates throw a 400. */
function durableClauses(workspaceId: string, f: RunFilters): Clauses {
  const c = clauses();
  c.add('r.workspace_id = ?', workspaceId);
  const status = activeFilter(f.status);
  const trigger = activeFilter(f.trigger);
  const workflowId = activeFilter(f.workflowId);
  const from = parseDate(f.dateFrom, 'dateFrom');
  const to = parseDate(f.dateTo, 'dateTo');
  if (status) c.add('r.status = ?', status);
  if (trigger) c.add('r.trigger = ?', trigger);
  if (workflowId) c.add('r.workflow_id = ?', workflowId);
  if (from) c.add('r.created_at >= ?', from);
  if (to) c.add('r.created_at <= ?', to);
  return c;
}

/**
 * The filters that look into a run's content (level over its logs, the free-text query over
 * the run id, workflow name, status, trigger, error, input, output, steps and logs; safe
 * readers: only what they may see).
 */
function contentClauses(f: RunFilters): Clauses {
  const c = clauses();
  const level = activeFilter(f.level);
  if (level) c.add('exists (select 1 from run_logs l where l.run_id = r.id and l.level = ?)', level);
  const text = activeFilter(f.query?.trim());
  if (text) {
    const like = `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
    if (f.projection === 'full') {
      c.add(
        `(r.id ilike ? or r.workflow_name ilike ? or r.status ilike ? or r.trigger ilike ? or coalesce(r.error, '') ilike ?
          or coalesce(r.input::text, '') ilike ? or coalesce(r.output::text, '') ilike ?
          or exists (select 1 from run_steps s where s.run_id = r.id and (s.node_id ilike ? or coalesce(s.node_name, '') ilike ? or coalesce(s.error, '') ilike ? or coalesce(s.output::text, '') ilike ?))
          or exists (select 1 from run_logs l where l.run_id = r.id and l.message ilike ?))`,
        ...Array(12).fill(like),
      );
    } else {
      c.add(
        `(r.id ilike ? or r.workflow_name ilike ? or r.status ilike ? or r.trigger ilike ?
          or exists (select 1 from run_steps s where s.run_id = r.id and (s.node_id ilike ? or coalesce(s.node_name, '') ilike ?)))`,
        ...Array(6).fill(like),
      );
    }
  }
  return c;
}

const whereSql = (c: Clauses) => (c.where.length > 0 ? `where ${c.where.join(' and ')}` : '');

/**
 * The SQL that selects the runs of one workspace matching the filters, sorted and limited:
 * `select <columns> from runs r where … order by … limit ?` with its parameters, every filter
 * in one statement (the runs list). Invalid dates throw a 400.
 *
 * With `durableWindow`, the logs reading of the spec's Limits table: first the `durableWindow`
 * newest runs matching the durable filters (status, trigger, workflowId, dates), and only then
 * level, query, sort and limit over that window, so a match older than the window is not found.
 */
export function matchingRunsSql(
  workspaceId: string,
  f: RunFilters,
  columns = 'r.id',
  opts: { durableWindow?: number } = {},
): { sql: string; params: unknown[] } {
  const durable = durableClauses(workspaceId, f);
  const content = contentClauses(f);
  const order = `order by ${ORDER[f.sort ?? 'newest']} limit ?`;
  if (opts.durableWindow === undefined) {
    const all: Clauses = { where: [...durable.where, ...content.where], params: [...durable.params, ...content.params] };
    return { sql: `select ${columns} from runs r ${whereSql(all)} ${order}`, params: [...all.params, f.limit] };
  }
  const window = `select r.* from runs r ${whereSql(durable)} order by ${ORDER.newest} limit ?`;
  return {
    sql: `select ${columns} from (${window}) r ${whereSql(content)} ${order}`,
    params: [...durable.params, opts.durableWindow, ...content.params, f.limit],
  };
}

/** Runs of one workspace matching the filters, filtered, sorted and limited in SQL (see `matchingRunsSql` for `durableWindow`). */
export async function queryRuns(
  em: EntityManager,
  workspaceId: string,
  f: RunFilters,
  opts: { durableWindow?: number } = {},
): Promise<Run[]> {
  const rows = await selectMatchingRuns<{ id: string }>(em, matchingRunsSql(workspaceId, f, 'r.id', opts));
  if (rows.length === 0) return [];
  const runs = await em.find(RunSchema, { id: { $in: rows.map((r) => r.id) } });
  const byId = new Map(runs.map((r) => [r.id, r]));
  return rows.map((r) => byId.get(r.id)!).filter(Boolean);
}
