/**
 * Raw SQL of the extflow area, one row per workspace and external id in each table: the pinned
 * data of imported workflows (an upsert, so a re-import replaces what the previous import
 * pinned), and the provenance of imported drafts (which draft an import wrote, so a later import
 * never overwrites a workflow it does not own).
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

/** What an extflow import wrote: the workflow that carries the externalId and the draft it wrote (null: imported before this was recorded). */
export interface ImportProvenance {
  external_id: string;
  workflow_id: string;
  draft_version_id: string | null;
}

/** The import provenance of these externalIds in a workspace (at least one id); an id never imported has no row. */
export async function importProvenance(em: EntityManager, workspaceId: string, externalIds: string[]): Promise<ImportProvenance[]> {
  return em.execute<ImportProvenance[]>(
    `select external_id, workflow_id, draft_version_id from extflow_imports where workspace_id = ? and external_id in (${externalIds.map(() => '?').join(', ')})`,
    [workspaceId, ...externalIds],
  );
}

/** Records that an import of `externalId` wrote this draft (candidate version id) of this workflow, replacing the previous record. */
export async function recordImportProvenance(
  em: EntityManager,
  workspaceId: string,
  externalId: string,
  workflowId: string,
  draftVersionId: string,
): Promise<void> {
  await em.execute(
    `insert into extflow_imports (workspace_id, external_id, workflow_id, draft_version_id, imported_at) values (?, ?, ?, ?, now())
     on conflict (workspace_id, external_id) do update set workflow_id = excluded.workflow_id, draft_version_id = excluded.draft_version_id, imported_at = excluded.imported_at`,
    [workspaceId, externalId, workflowId, draftVersionId],
  );
}

/**
 * Moves the recorded draft of an imported workflow from `fromVersionId` to `toVersionId` (a
 * change the import machinery itself made, such as linking a sub-workflow). Caveat: a row whose
 * draft is another one (edited since) is left as it is, so the edit still counts as not imported.
 */
export async function advanceImportProvenance(
  em: EntityManager,
  workspaceId: string,
  workflowId: string,
  fromVersionId: string,
  toVersionId: string,
): Promise<void> {
  await em.execute(`update extflow_imports set draft_version_id = ? where workspace_id = ? and workflow_id = ? and draft_version_id = ?`, [
    toVersionId,
    workspaceId,
    workflowId,
    fromVersionId,
  ]);
}
