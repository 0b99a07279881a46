/**
 * Managed configuration: tables an Admin or Owner declares as non-sensitive configuration
 * (permanently). A declared table has a text column `key` (stable, unique, immutable, at most
 * 256 characters), lifecycle columns `active` and `retired` (no recognized secret may enter
 * either), and a per-row revision (`_revision`) that every write must name: a stale one is a
 * conflict. Its rows change only here (managed-rows) and through applied packages; the rows
 * API, CSV appends and workflow nodes refuse to write them.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TableColumn, UserDatabase, UserTable } from '../../db/entities';
import { conflict, invalidInput, notFound, unavailable } from '../kernel/errors';
import { cellFromSql, ident, valuesToSql, type SqlCell } from './columns';
import { scanForSecrets } from './secretScan';
import { asValueError, inTransaction, isPgError, queryRows, withClient, type PgClient } from './storage';
import { loadTable, qualified } from './tables';

export const KEY_COLUMN = 'key';
export const LIFECYCLE_COLUMNS = ['active', 'retired'] as const;
export const REVISION_COLUMN = '_revision';
export const MAX_KEY_LENGTH = 256;
export const MANAGED_TABLE_NOT_FOUND = 'Managed table not found';
const TABLE_KEY = /^[a-z][a-z0-9_.-]{0,99}$/;

export interface ManagedRow {
  key: string;
  revision: number;
  values: Record<string, unknown>;
}

/** The secrets found in the lifecycle values of a row, as a 400 naming where (never the secret). */
function refuseSecrets(rows: Array<{ key: string; values: Record<string, unknown> }>): void {
  const findings = rows.flatMap((r) => LIFECYCLE_COLUMNS.flatMap((c) => scanForSecrets(r.values[c], c).map((f) => ({ key: r.key, ...f }))));
  const [first] = findings;
  if (!first) return;
  throw invalidInput(
    `Configuration values must not hold secrets: row "${first.key}" has a ${first.kind} in ${first.path}${findings.length > 1 ? ` (and ${findings.length - 1} more)` : ''}. Store secrets as credentials.`,
    { code: 'secret_detected', details: { findings } },
  );
}

interface Loaded {
  table: UserTable;
  db: UserDatabase;
}

async function loadManaged(
  client: PgClient,
  workspaceId: string,
  tableId: string,
  lock?: 'share' | 'update',
): Promise<Loaded & { tableKey: string; ownerPackageKey: string | null }> {
  const { table, db, managed } = await loadTable(client, workspaceId, tableId, { lock });
  if (!managed) throw notFound(MANAGED_TABLE_NOT_FOUND);
  const [m] = await queryRows<{ table_key: string; owner_package_key: string | null }>(
    client,
    'select table_key, owner_package_key from managed_tables where table_id = $1',
    [tableId],
  );
  if (!m) throw notFound(MANAGED_TABLE_NOT_FOUND);
  return { table, db, tableKey: m.table_key, ownerPackageKey: m.owner_package_key };
}

function selectManaged(table: UserTable): string {
  return [ident(REVISION_COLUMN), ...table.columns.map((c) => ident(c.name))].join(', ');
}

function managedRow(table: UserTable, r: Record<string, unknown>): ManagedRow {
  const values = Object.fromEntries(table.columns.filter((c) => c.name !== KEY_COLUMN).map((c) => [c.name, cellFromSql(c, r[c.name])]));
  return { key: String(r[KEY_COLUMN]), revision: Number(r[REVISION_COLUMN]), values };
}

/** Every row of a managed table, by key. */
export async function readManagedRows(client: PgClient, loaded: Loaded): Promise<ManagedRow[]> {
  const rows = await queryRows(
    client,
    `select ${selectManaged(loaded.table)} from ${qualified(loaded.db, loaded.table)} order by ${ident(KEY_COLUMN)}`,
  );
  return rows.map((r) => managedRow(loaded.table, r));
}

export interface DeclaredTable {
  tableId: string;
  tableKey: string;
  databaseId: string;
  databaseName: string;
  name: string;
  keyColumn: string;
  columns: TableColumn[];
  classification: 'non_sensitive';
  ownerPackageKey: string | null;
  rowCount: number;
  declaredAt: Date;
}

/**
 * Declares an existing table as non-sensitive configuration. It needs a text column `key`
 * and columns `active` and `retired`; every existing row needs a non-empty unique key of at
 * most 256 characters and no secret in its lifecycle values. Adds the revision column and a
 * unique index on the key. Permanent: declaring again is a conflict.
 */
export async function declareTable(
  em: EntityManager,
  workspaceId: string,
  actorId: string,
  input: { tableId: string; tableKey?: string },
): Promise<DeclaredTable> {
  return inTransaction(em, async (client) => {
    const { table, db, managed } = await loadTable(client, workspaceId, input.tableId, { lock: 'update' });
    if (managed)
      throw conflict(`Table "${table.name}" is already declared as configuration; the declaration is permanent.`, {
        code: 'already_declared',
      });
    const tableKey = input.tableKey ?? table.name;
    if (!TABLE_KEY.test(tableKey))
      throw invalidInput('tableKey must be 1 to 100 characters of lowercase letters, digits, ".", "_" or "-", starting with a letter.', {
        details: { field: 'tableKey' },
      });
    const byName = new Map(table.columns.map((c) => [c.name, c]));
    if (byName.get(KEY_COLUMN)?.type !== 'text')
      throw invalidInput(`A configuration table needs a text column "${KEY_COLUMN}".`, { details: { column: KEY_COLUMN } });
    for (const c of LIFECYCLE_COLUMNS)
      if (!byName.has(c))
        throw invalidInput(`A configuration table needs the lifecycle columns active and retired; "${c}" is missing.`, {
          details: { column: c },
        });
    const rows = (await queryRows(client, `select ${table.columns.map((c) => ident(c.name)).join(', ')} from ${qualified(db, table)}`)).map(
      (r) => ({
        key: r[KEY_COLUMN] as string | null,
        values: Object.fromEntries(table.columns.map((c) => [c.name, cellFromSql(c, r[c.name])])),
      }),
    );
    const seen = new Set<string>();
    for (const r of rows) {
      if (!r.key || r.key.length > MAX_KEY_LENGTH)
        throw invalidInput(`Every row needs a key of 1 to ${MAX_KEY_LENGTH} characters; found ${JSON.stringify(r.key)}.`, {
          details: { column: KEY_COLUMN },
        });
      if (seen.has(r.key)) throw invalidInput(`Keys must be unique; "${r.key}" appears twice.`, { details: { column: KEY_COLUMN } });
      seen.add(r.key);
    }
    refuseSecrets(rows.map((r) => ({ key: r.key!, values: r.values })));
    try {
      await client.query(
        'insert into managed_tables (table_id, workspace_id, table_key, key_column, classification, declared_by, declared_at) values ($1, $2, $3, $4, $5, $6, $7)',
        [table.id, workspaceId, tableKey, KEY_COLUMN, 'non_sensitive', actorId, new Date()],
      );
    } catch (err) {
      if (isPgError(err) && err.code === '23505')
        throw conflict(`Another configuration table of this workspace has the key "${tableKey}".`, { details: { field: 'tableKey' } });
      throw err;
    }
    await client.query(`alter table ${qualified(db, table)} add column ${ident(REVISION_COLUMN)} integer not null default 1`);
    await client.query(`alter table ${qualified(db, table)} alter column ${ident(KEY_COLUMN)} set not null`);
    await client.query(`create unique index ${ident(`mk_${table.id.slice(4, 28)}`)} on ${qualified(db, table)} (${ident(KEY_COLUMN)})`);
    // Declared just above, in this transaction.
    return (await declaredTables(client, workspaceId, table.id)).at(0)!;
  });
}

/** Declared tables of the workspace (or one of them), with their row counts. */
export async function declaredTables(client: PgClient, workspaceId: string, tableId?: string): Promise<DeclaredTable[]> {
  const rows = await queryRows<{
    table_id: string;
    table_key: string;
    key_column: string;
    owner_package_key: string | null;
    declared_at: Date;
  }>(
    client,
    `select m.* from managed_tables m join user_tables t on t.id = m.table_id where m.workspace_id = $1 and not t.trashed${tableId ? ' and m.table_id = $2' : ''} order by m.table_key`,
    tableId ? [workspaceId, tableId] : [workspaceId],
  );
  const out: DeclaredTable[] = [];
  for (const m of rows) {
    const { table, db } = await loadTable(client, workspaceId, m.table_id);
    // count(*) always yields one row.
    const [{ n } = { n: 0 }] = await queryRows<{ n: number }>(client, `select count(*)::int as n from ${qualified(db, table)}`);
    out.push({
      tableId: table.id,
      tableKey: m.table_key,
      databaseId: db.id,
      databaseName: db.name,
      name: table.name,
      keyColumn: m.key_column,
      columns: table.columns,
      classification: 'non_sensitive',
      ownerPackageKey: m.owner_package_key,
      rowCount: n,
      declaredAt: new Date(m.declared_at),
    });
  }
  return out;
}

export async function getManagedRow(
  em: EntityManager,
  workspaceId: string,
  tableId: string,
  key: string,
): Promise<{ tableId: string; row: ManagedRow }> {
  return withClient(em, async (client) => {
    const loaded = await loadManaged(client, workspaceId, tableId);
    const rows = await queryRows(
      client,
      `select ${selectManaged(loaded.table)} from ${qualified(loaded.db, loaded.table)} where ${ident(KEY_COLUMN)} = $1`,
      [key],
    );
    const [row] = rows;
    if (!row) throw notFound('Managed row not found');
    return { tableId, row: managedRow(loaded.table, row) };
  });
}

/**
 * Writes one managed row: `expectedRevision` 0 creates it, otherwise it must equal the row's
 * revision (a conflict with `currentRevision` when not). Supplied values replace those cells;
 * the key cannot change. Returns the row at its new revision.
 */
export async function putManagedRow(
  em: EntityManager,
  workspaceId: string,
  tableId: string,
  input: { key: string; expectedRevision: number; values: Record<string, unknown> },
): Promise<{ tableId: string; row: ManagedRow }> {
  if (input.key.length === 0 || input.key.length > MAX_KEY_LENGTH)
    throw invalidInput(`key must be 1 to ${MAX_KEY_LENGTH} characters.`, { details: { field: 'key' } });
  return inTransaction(em, async (client) => {
    const loaded = await loadManaged(client, workspaceId, tableId, 'share');
    const { table, db } = loaded;
    if (KEY_COLUMN in input.values && input.values[KEY_COLUMN] !== input.key)
      throw invalidInput('The key of a managed row is immutable.', { details: { column: KEY_COLUMN } });
    const { [KEY_COLUMN]: _key, ...values } = input.values;
    void _key;
    const cells = valuesToSql(table.columns, values);
    refuseSecrets([{ key: input.key, values }]);
    for (const c of table.columns.filter((c) => c.tableReference)) {
      const ref = values[c.name];
      if (ref === undefined || ref === null) continue;
      const [found] = await queryRows<{ owner_package_key: string | null }>(
        client,
        'select owner_package_key from managed_tables where table_id = $1 and workspace_id = $2',
        [String(ref), workspaceId],
      );
      if (!found)
        throw invalidInput(`Column "${c.name}" must hold the id of a managed table of this workspace.`, { details: { column: c.name } });
      // A table an applied package owns may reference only tables of that same deployment.
      if (loaded.ownerPackageKey && found.owner_package_key !== loaded.ownerPackageKey) {
        throw invalidInput(
          `Column "${c.name}": this table belongs to package "${loaded.ownerPackageKey}" and may reference only tables of that package.`,
          { details: { column: c.name } },
        );
      }
    }
    const target = qualified(db, table);
    const [current] = await queryRows<{ revision: number }>(
      client,
      `select ${ident(REVISION_COLUMN)} as revision from ${target} where ${ident(KEY_COLUMN)} = $1 for update`,
      [input.key],
    );
    const currentRevision = current ? current.revision : 0;
    if (currentRevision !== input.expectedRevision) {
      throw conflict(`The row "${input.key}" is at revision ${currentRevision}, not ${input.expectedRevision}; read it again and retry.`, {
        code: 'revision_conflict',
        details: { currentRevision },
      });
    }
    const rows = await (
      current ? updateCells(client, target, table, input.key, cells) : insertManaged(client, target, table, input.key, cells)
    ).catch(asValueError);
    const [row] = rows;
    if (!row) throw notFound('Managed row not found'); // the update's row is locked above: never
    return { tableId, row: managedRow(table, row) };
  });
}

function insertManaged(client: PgClient, target: string, table: UserTable, key: string, cells: Map<string, SqlCell>) {
  const names = [KEY_COLUMN, ...cells.keys()];
  const params: SqlCell[] = [key, ...cells.values()];
  return queryRows(
    client,
    `insert into ${target} (${names.map(ident).join(', ')}) values (${params.map((_, i) => `$${i + 1}`).join(', ')}) returning ${selectManaged(table)}`,
    params,
  );
}

function updateCells(client: PgClient, target: string, table: UserTable, key: string, cells: Map<string, SqlCell>) {
  const params: SqlCell[] = [key];
  const sets = [...cells].map(([name, cell]) => (params.push(cell), `${ident(name)} = $${params.length}`));
  sets.push(`${ident(REVISION_COLUMN)} = ${ident(REVISION_COLUMN)} + 1`);
  return queryRows(
    client,
    `update ${target} set ${sets.join(', ')} where ${ident(KEY_COLUMN)} = $1 returning ${selectManaged(table)}`,
    params,
  );
}

// ---------------------------------------------------------------------------------------------
// Catalog and history

export interface ConfigurationSettings {
  /** The feature switch of configuration writes (apply). */
  writesEnabled: boolean;
}

/**
 * What can be configured: the declared tables and their databases, and whether apply is
 * enabled. Without durable storage (PostgreSQL does not answer) it is `unavailable` with
 * `applyEnabled: false`, `applyDisabledReason: storage_unavailable` and no metadata.
 */
export async function configurationCatalog(em: EntityManager, workspaceId: string, settings: ConfigurationSettings) {
  let tables: DeclaredTable[];
  try {
    tables = await withClient(em, (client) => declaredTables(client, workspaceId));
  } catch (err) {
    if (isStorageDown(err)) {
      throw unavailable('Configuration storage is unavailable.', {
        code: 'storage_unavailable',
        details: { applyEnabled: false, applyDisabledReason: 'storage_unavailable' },
      });
    }
    throw err;
  }
  const databases = [...new Map(tables.map((t) => [t.databaseId, { id: t.databaseId, name: t.databaseName }])).values()];
  return {
    applyEnabled: settings.writesEnabled,
    applyDisabledReason: settings.writesEnabled ? null : ('writes_disabled' as const),
    databases,
    tables,
  };
}

/**
 * Configuration storage cannot serve: connection-level failures (no server, refused,
 * terminated, pool closed) or its tables missing (`42P01`: a database the configuration
 * migration never reached).
 */
export function isStorageDown(err: unknown): boolean {
  if (isPgError(err)) return err.code!.startsWith('08') || ['57P01', '57P03', '42P01'].includes(err.code!);
  const message = err instanceof Error ? err.message : '';
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|Connection terminated|pool is draining|aborted|destroyed|Knex: Timeout/i.test(message);
}
