import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from './shared';

/**
 * Registers the custom Keyword search attributes through the operator service. The dev
 * server ignores `--search-attribute` for an existing database file, so this runs at every
 * start; attributes that already exist are left alone.
 */
export async function registerSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.values(SEARCH_ATTRIBUTES).filter((name) => !(name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return [];
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(
        missing.map((name) => [name, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
      ),
    });
  } catch (err) {
    // Another process (a second worker, the API) may have registered them in between.
    if (!/already exists/i.test((err as Error).message)) throw err;
  }
  return missing;
}
