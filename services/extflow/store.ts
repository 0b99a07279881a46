/**
 * Raw SQL of the extflow area: the pinned data of imported workflows, one row per workspace and
 * external id (an upsert, so a re-import replaces what the previous import pinned).
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** Forgets the pinned data of an imported workflow. */
export async function deletePinnedData(em: EntityManager, workspaceId: string, externalId: string): Promise<void> {
  await em.execute('delete from extflow_pinned_data where workspace_id = ? and external_id = ?', [workspaceId, externalId]);
}

/** Stores the pinned data (storable JSON text) of an imported workflow, replacing what was there. */
export async function upsertPinnedData(em: EntityManager, workspaceId: string, externalId: string, pinData: string): Promise<void> {
  await em.execute(
    `insert into extflow_pinned_data (workspace_id, external_id, pin_data, updated_at) values (?, ?, ?::jsonb, now())
     on conflict (workspace_id, external_id) do update set pin_data = excluded.pin_data, updated_at = excluded.updated_at`,
    [workspaceId, externalId, pinData],
  );
}

/** The stored pinned data of these imported workflows (at least one id); an id without any has no row. */
export async function storedPinnedData(
  em: EntityManager,
  workspaceId: string,
  externalIds: string[],
): Promise<Array<{ external_id: string; pin_data: Record<string, unknown> }>> {
  return em.execute<Array<{ external_id: string; pin_data: Record<string, unknown> }>>(
    `select external_id, pin_data from extflow_pinned_data where workspace_id = ? and external_id in (${externalIds.map(() => '?').join(', ')})`,
    [workspaceId, ...externalIds],
  );
}
