/**
 * Raw SQL of the skills area: what the ORM has no form for, an atomic increment and the highest
 * version of a lineage read inside the transaction that creates the next one.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** Counts one use of each skill of `ids` now, in one atomic update: concurrent loads never lose a count. */
export async function countSkillUses(em: EntityManager, ids: string[]): Promise<void> {
  await em.execute(
    `update skills set usage_count = usage_count + 1, last_used_at = now() where id in (${ids.map(() => '?').join(', ')})`,
    ids,
  );
}

/**
 * The highest version of a lineage, read on `tx`'s transaction context (so a version the
 * transaction already archived or inserted counts); null when the lineage has no row yet.
 */
export async function maxLineageVersion(tx: EntityManager, lineageId: string): Promise<number | null> {
  const rows: Array<{ max: number }> = await tx
    .getConnection()
    .execute('select max(version) as max from skills where lineage_id = ?', [lineageId], 'all', tx.getTransactionContext());
  return rows[0]?.max ?? null;
}
