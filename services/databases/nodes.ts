import type { EntityManager } from '@mikro-orm/postgresql';
import type { TableNodeType } from '../../engine/types';
import { invalidInput } from '../kernel/errors';
import { deleteRow, findRows, insertRow, updateRow } from './tables';

/**
 * What a table node does, with its config already resolved (expressions evaluated): the same
 * service calls and checks as the rows API, scoped to the run's workspace.
 */
export async function runTableNode(
  em: EntityManager,
  workspaceId: string,
  type: TableNodeType,
  config: Record<string, unknown>,
): Promise<unknown> {
  const tableId = String(config.tableId);
  const record = (field: string): Record<string, unknown> => {
    const value = config[field] ?? {};
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw invalidInput(`config.${field} must be an object of column name to value.`);
    return value as Record<string, unknown>;
  };
  switch (type) {
    case 'table_read': {
      const { rows } = await findRows(em, workspaceId, tableId, record('filter'), Number(config.limit ?? 100));
      return { rows, count: rows.length };
    }
    case 'table_insert':
      return { row: (await insertRow(em, workspaceId, tableId, record('values'))).row };
    case 'table_update':
      return { row: (await updateRow(em, workspaceId, tableId, config.rowIndex, record('values'))).row };
    case 'table_delete': {
      const { rowIndex } = await deleteRow(em, workspaceId, tableId, config.rowIndex);
      return { rowIndex, deleted: true };
    }
  }
}
