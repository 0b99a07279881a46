/**
 * Raw SQL of the sources area (RSS and CI polls of a destination): the only file of the area
 * that talks SQL. Tenant text goes through `wellFormedParams` before it reaches PostgreSQL.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { wellFormedParams } from '../kernel/storableText';

export type Exec = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** Runs SQL in the unit of work of `em` (inside its transaction when it is one), parameters made well-formed text. */
export const execOf =
  (em: EntityManager): Exec =>
  (q, p = []) =>
    em.execute(q, wellFormedParams(p), 'all');

/**
 * The RSS and CI sources that should be polled: those of enabled destinations with an active
 * version, of workflows not in the trash, with their poll interval. Raw SQL: one join over
 * three tables and a jsonb field, read for the Temporal schedule sync.
 */
export async function pollableSources(
  em: EntityManager,
): Promise<Array<{ id: string; kind: 'rss' | 'ci'; interval: number; workspaceId: string; workflowId: string; workflowName: string }>> {
  return em.getConnection().execute(
    `select s.id, s.kind, (s.config->>'intervalSeconds')::int as interval,
            s.workspace_id as "workspaceId", s.workflow_id as "workflowId", w.name as "workflowName"
       from workflow_target_sources s
       join workflow_targets t on t.id = s.target_id
       join workflows w on w.id = s.workflow_id
      where s.kind in ('rss', 'ci') and t.enabled and t.active_version_id is not null and not coalesce(w.trashed, false)`,
  );
}
