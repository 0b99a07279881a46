/**
 * Raw SQL of the mailer area: the only file of the area that talks SQL. Tenant text goes
 * through `wellFormedParams` before it reaches PostgreSQL.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { wellFormedParams } from '../kernel/storableText';

/** Runs SQL in the unit of work of `em`, parameters made well-formed text; the rows as plain objects. */
export async function sql<T = Record<string, unknown>>(em: EntityManager, query: string, params: unknown[] = []): Promise<T[]> {
  return em.execute(query, wellFormedParams(params), 'all');
}

/**
 * Binds a route to a Google domain-wide delegation (one per route, replaced when it exists).
 * Raw SQL for the `on conflict (route_id) do update` upsert in one statement.
 */
export async function upsertGoogleDwdConfig(
  em: EntityManager,
  c: { id: string; workspaceId: string; routeId: string; credentialId: string; subject: string; now: Date },
): Promise<void> {
  await sql(
    em,
    `insert into mailer_google_dwd_configs (id, workspace_id, route_id, credential_id, subject, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)
     on conflict (route_id) do update set credential_id = excluded.credential_id, subject = excluded.subject, updated_at = excluded.updated_at`,
    [c.id, c.workspaceId, c.routeId, c.credentialId, c.subject, c.now, c.now],
  );
}

/** Enabled mail polling groups (all, or those of `groupIds`) with their interval, for the Temporal schedule sync. */
export async function enabledPollingGroups(
  em: EntityManager,
  groupIds?: string[],
): Promise<Array<{ id: string; interval: number; workspaceId: string }>> {
  return em
    .getConnection()
    .execute(
      `select id, interval_seconds as interval, workspace_id as "workspaceId" from mailer_polling_groups where enabled${groupIds ? ` and id in (${groupIds.map(() => '?').join(', ') || 'null'})` : ''}`,
      groupIds ?? [],
    );
}
