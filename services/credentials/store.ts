/**
 * Raw SQL of the credentials area: the only file of the area that talks SQL.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** The id of the workspace's credential with this name, compared case-insensitively (raw SQL for `lower(name)`). */
export async function idByName(em: EntityManager, workspaceId: string, name: string): Promise<string | null> {
  const rows: Array<{ id: string }> = await em.execute(
    'select id from credentials where workspace_id = ? and lower(name) = lower(?) limit 1',
    [workspaceId, name],
  );
  return rows[0]?.id ?? null;
}
