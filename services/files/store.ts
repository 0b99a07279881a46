/**
 * Raw SQL of the files area: the only file of the area that talks SQL. Conditional
 * updates (`where status = …`, `returning`) so two uploads or two scans never act on one file
 * twice.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Points a still-pending file at its uploaded blob, the row locked while it changes; returns the
 * blob key it replaced (one row), or no row when the file is no longer pending.
 */
export async function attachPendingBlob(
  em: EntityManager,
  file: { id: string; workspaceId: string },
  blob: { storageKey: string; blobId: string; size: number; sha256: string },
): Promise<Array<{ blob_key: string | null }>> {
  return em.execute<Array<{ blob_key: string | null }>>(
    `with old as (select id, blob_key from files where id = ? and workspace_id = ? and status = 'pending' for update)
     update files f set blob_key = ?, blob_id = ?, blob_size = ?, blob_sha256 = ?, updated_at = ?
       from old where f.id = old.id
     returning old.blob_key`,
    [file.id, file.workspaceId, blob.storageKey, blob.blobId, blob.size, blob.sha256, new Date()],
  );
}

/** Takes the scan lease of a file pending its scan until `until`; false when another scan holds an unexpired lease. */
export async function leaseScan(em: EntityManager, file: { id: string; workspaceId: string }, now: Date, until: Date): Promise<boolean> {
  const leased = await em.execute<Array<{ id: string }>>(
    `update files set scan_lease_until = ? where id = ? and workspace_id = ? and status = 'pending_scan'
        and (scan_lease_until is null or scan_lease_until < ?) returning id`,
    [until, file.id, file.workspaceId, now],
  );
  return leased.length > 0;
}
