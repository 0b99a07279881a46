/** F5's slow queries without burning the shared CPU: a lock on a user database's tables, held from a connection of our own. */
import pg from 'pg';

/**
 * Holds ACCESS EXCLUSIVE on every table of user database `databaseId` until `release`, so
 * read-only queries of it wait (holding their pool connection) until their statement timeout.
 * Without jest, for the abuse tests and the abuse benchmark alike.
 */
export async function lockTablesOf(databaseUrl: string, databaseId: string): Promise<{ tables: number; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const schema = `udb_${databaseId.slice('udb_'.length)}`;
  const tables = await client.query<{ table_name: string }>('select table_name from information_schema.tables where table_schema = $1', [
    schema,
  ]);
  await client.query('begin');
  for (const t of tables.rows) await client.query(`lock table "${schema}"."${t.table_name}" in access exclusive mode`);
  return {
    tables: tables.rows.length,
    release: async () => {
      await client.query('rollback');
      await client.end();
    },
  };
}
