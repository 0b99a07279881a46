import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema } from '../../db/entities';
import { sealedKeyId, SealedValueError, type Keyring } from '../kernel/secrets';
import { openCredentialValue, sealCredentialValue } from './keys';

export interface RotationReport {
  /** Id of the key every readable row is now encrypted with. */
  keyId: string;
  scanned: number;
  rotated: number;
  alreadyCurrent: number;
  /** Rows that could not be re-encrypted (tampered, or their key is not in the ring): ids and reasons only. */
  failed: Array<{ id: string; reason: string }>;
}

/**
 * Re-encrypts every credential that is not under the ring's current key, in batches ordered by
 * id, while the service keeps running: every process that has the old key in its ring reads
 * both forms, each row is replaced in one statement, and a row changed concurrently (an edit,
 * a token refresh) is read again and retried, so no write is lost.
 *
 * Rollout: give every process the new key as CREDENTIALS_KEY and the old one in
 * CREDENTIALS_PREVIOUS_KEYS, run this, then drop the old key.
 */
export async function rotateCredentialKeys(
  em: EntityManager,
  ring: Keyring,
  opts: { batchSize?: number; onBatch?: (progress: { scanned: number; rotated: number }) => Promise<void> } = {},
): Promise<RotationReport> {
  const batchSize = opts.batchSize ?? 100;
  const report: RotationReport = { keyId: ring.current.id, scanned: 0, rotated: 0, alreadyCurrent: 0, failed: [] };
  let after = '';
  for (;;) {
    const batch = await em
      .fork()
      .find(
        CredentialSchema,
        { id: { $gt: after } },
        { orderBy: { id: 'asc' }, limit: batchSize, fields: ['id', 'workspaceId', 'secretEncrypted'] },
      );
    const last = batch.at(-1);
    if (last === undefined) break;
    for (const row of batch) {
      report.scanned++;
      const outcome = await rotateRow(em, ring, row.id);
      if (outcome === 'rotated') report.rotated++;
      else if (outcome === 'current') report.alreadyCurrent++;
      else report.failed.push({ id: row.id, reason: outcome });
    }
    after = last.id;
    await opts.onBatch?.({ scanned: report.scanned, rotated: report.rotated });
  }
  return report;
}

async function rotateRow(em: EntityManager, ring: Keyring, id: string): Promise<'rotated' | 'current' | string> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await em.fork().findOne(CredentialSchema, { id }, { fields: ['id', 'workspaceId', 'secretEncrypted'] });
    if (!row) return 'current'; // deleted meanwhile: nothing left to rotate
    if (sealedKeyId(row.secretEncrypted) === ring.current.id) return 'current';
    let value: Record<string, unknown>;
    try {
      value = openCredentialValue(ring, row.workspaceId, row.id, row.secretEncrypted);
    } catch (err) {
      if (err instanceof SealedValueError) return err.reason;
      throw err;
    }
    const sealed = sealCredentialValue(ring, row.workspaceId, row.id, value);
    const updated = await em
      .fork()
      .nativeUpdate(CredentialSchema, { id, secretEncrypted: row.secretEncrypted }, { secretEncrypted: sealed });
    if (updated === 1) return 'rotated';
  }
  return 'changed_concurrently';
}
