/**
 * Raw SQL of the publishing area: the only file of the area that talks SQL.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** Locks the workflow's row until the end of `tx`, so two concurrent deploys cannot claim the same version number. */
export async function lockWorkflowRow(tx: EntityManager, workflowId: string): Promise<void> {
  await tx.execute('select id from workflows where id = ? for update', [workflowId], 'all');
}

/**
 * Whether another destination of the workflow (not `exceptId`) has this name, compared
 * case-insensitively. Raw SQL for `lower(name)`, read in `tx`'s transaction.
 */
export async function destinationNameTaken(tx: EntityManager, workflowId: string, name: string, exceptId: string | null): Promise<boolean> {
  const rows = await tx.execute<Array<{ id: string }>>(
    'select id from workflow_targets where workflow_id = ? and lower(name) = lower(?) and id <> ?',
    [workflowId, name, exceptId ?? ''],
    'all',
    tx.getTransactionContext(),
  );
  return rows.length > 0;
}
