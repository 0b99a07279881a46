/**
 * Raw SQL of the platform area: the only file of the area that talks SQL. Counts and
 * pings over every workspace, for readiness and the metrics scrape: aggregates the ORM would
 * only answer by loading rows.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** `select 1`: proves the database answers. */
export async function pingDatabase(em: EntityManager): Promise<void> {
  await em.execute('select 1');
}

/** Runs of all workspaces counted by status and trigger. */
export async function runCountsByStatusAndTrigger(em: EntityManager): Promise<Array<{ status: string; trigger: string; count: string }>> {
  return em.getConnection().execute('select status, trigger, count(*) as count from runs group by status, trigger');
}

/** Webhook outbox entries of all workspaces still waiting to be handed to Temporal. */
export async function pendingOutboxCount(em: EntityManager): Promise<number> {
  const rows: Array<{ count: string }> = await em.execute(`select count(*) as count from webhook_outbox where status = 'pending'`);
  return Number(rows[0]?.count ?? 0); // count(*) always yields one row
}
