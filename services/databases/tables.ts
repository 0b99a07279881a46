/**
 * User databases and tables: each database a PostgreSQL schema with its own reader role, each
 * table a real table with typed columns and an identity `rowIndex`. Every change runs in one
 * transaction with the catalogue rows that describe it. All lookups are scoped by workspace:
 * another workspace's ids are "not found", and nothing is changed.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TableColumn, UserDatabase, UserTable } from '../../db/entities';
import { conflict, invalidInput, notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import {
  cellFromSql,
  cellToSql,
  checkColumn,
  checkColumns,
  checkDatabaseName,
  checkTableName,
  ident,
  ROW_INDEX,
  SQL_TYPES,
  valuesToSql,
  type SqlCell,
} from './columns';
import { asValueError, inTransaction, isPgError, queryRows, withClient, type PgClient } from './storage';

export const TABLE_NOT_FOUND = 'Table not found';
export const DATABASE_NOT_FOUND = 'Database not found';
export const ROW_NOT_FOUND = 'Row not found';
/** Rows inserted with one table creation, and per statement of a bulk insert. */
export const MAX_INITIAL_ROWS = 10_000;
const INSERT_BATCH = 5000;

export interface DatabaseData {
  id: string;
  name: string;
  tableCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface TableData {
  id: string;
  databaseId: string;
  databaseName: string;
  name: string;
  columns: TableColumn[];
  rowCount: number;
  trashed: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface RowData {
  rowIndex: number;
  values: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Catalogue rows

interface DatabaseRow {
  id: string;
  workspace_id: string;
  name: string;
  schema_name: string;
  role_name: string;
  created_at: Date;
  updated_at: Date;
}

interface TableRow {
  id: string;
  workspace_id: string;
  database_id: string;
  name: string;
  physical_name: string;
  columns: TableColumn[];
  trashed: boolean;
  trashed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const toDatabase = (r: DatabaseRow): UserDatabase => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  schemaName: r.schema_name,
  roleName: r.role_name,
  // The ORM's pool hands timestamps over as text.
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

const toTable = (r: TableRow): UserTable => ({
  id: r.id,
  workspaceId: r.workspace_id,
  databaseId: r.database_id,
  name: r.name,
  physicalName: r.physical_name,
  columns: r.columns,
  trashed: r.trashed,
  trashedAt: r.trashed_at === null ? null : new Date(r.trashed_at),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

export function qualified(db: UserDatabase, table: UserTable): string {
  return `${ident(db.schemaName)}.${ident(table.physicalName)}`;
}

/** A live table of the workspace with its database; `lock` takes a row lock on the catalogue row (schema changes use `update`). */
export async function loadTable(
  client: PgClient,
  workspaceId: string,
  tableId: string,
  opts: { lock?: 'share' | 'update'; includeTrashed?: boolean } = {},
): Promise<{ table: UserTable; db: UserDatabase; managed: boolean }> {
  const lock = opts.lock === 'update' ? ' for update of t' : opts.lock === 'share' ? ' for share of t' : '';
  const rows = await queryRows<TableRow & { db: DatabaseRow; managed: boolean }>(
    client,
    `select t.*, row_to_json(d.*) as db, (m.table_id is not null) as managed
       from user_tables t join user_databases d on d.id = t.database_id left join managed_tables m on m.table_id = t.id
      where t.id = $1 and t.workspace_id = $2${opts.includeTrashed ? '' : ' and not t.trashed'}${lock}`,
    [tableId, workspaceId],
  );
  const [row] = rows;
  if (!row) throw notFound(TABLE_NOT_FOUND);
  return { table: toTable(row), db: toDatabase(row.db), managed: row.managed };
}

/** Rows of a managed configuration table change only through managed-rows and applied packages. */
export function refuseManagedWrite(managed: boolean, table: UserTable, what = 'Row writes'): void {
  if (managed) {
    throw conflict(
      `${what} are refused: table "${table.name}" is managed configuration; write its rows one at a time with managed-rows (key, expectedRevision, values).`,
      {
        code: 'managed_table',
      },
    );
  }
}

export async function loadDatabase(client: PgClient, workspaceId: string, databaseId: string): Promise<UserDatabase> {
  const rows = await queryRows<DatabaseRow>(client, 'select * from user_databases where id = $1 and workspace_id = $2', [
    databaseId,
    workspaceId,
  ]);
  const [row] = rows;
  if (!row) throw notFound(DATABASE_NOT_FOUND);
  return toDatabase(row);
}

export async function findDatabaseByName(client: PgClient, workspaceId: string, name: string): Promise<UserDatabase | null> {
  const rows = await queryRows<DatabaseRow>(client, 'select * from user_databases where workspace_id = $1 and lower(name) = lower($2)', [
    workspaceId,
    name,
  ]);
  const [row] = rows;
  return row ? toDatabase(row) : null;
}

/** Live tables of a database, by name. */
export async function liveTables(client: PgClient, databaseId: string): Promise<UserTable[]> {
  return (
    await queryRows<TableRow>(client, 'select * from user_tables where database_id = $1 and not trashed order by name', [databaseId])
  ).map(toTable);
}

async function countRows(client: PgClient, db: UserDatabase, table: UserTable): Promise<number> {
  const [row] = await queryRows<{ n: number }>(client, `select count(*)::int as n from ${qualified(db, table)}`);
  return row?.n ?? 0; // count(*) always yields one row
}

function tableData(db: UserDatabase, table: UserTable, rowCount: number): TableData {
  return {
    id: table.id,
    databaseId: db.id,
    databaseName: db.name,
    name: table.name,
    columns: table.columns,
    rowCount,
    trashed: table.trashed,
    createdAt: table.createdAt,
    updatedAt: table.updatedAt,
  };
}

// ---------------------------------------------------------------------------------------------
// Databases

/**
 * Creates the schema, the reader role (USAGE on that schema only) and the catalogue row. The
 * role can never log in; the service switches to it with SET LOCAL ROLE, which needs membership
 * unless the service's own role is a superuser.
 */
export async function createDatabaseInTransaction(client: PgClient, workspaceId: string, name: string): Promise<UserDatabase> {
  const id = newId('udb');
  const hex = id.slice('udb_'.length);
  const now = new Date();
  const db: UserDatabase = { id, workspaceId, name, schemaName: `udb_${hex}`, roleName: `udbr_${hex}`, createdAt: now, updatedAt: now };
  try {
    await client.query(
      'insert into user_databases (id, workspace_id, name, schema_name, role_name, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $6)',
      [id, workspaceId, name, db.schemaName, db.roleName, now],
    );
  } catch (err) {
    if (isPgError(err) && err.code === '23505') throw conflict(`A database named "${name}" already exists.`);
    throw err;
  }
  await client.query(`create schema ${ident(db.schemaName)}`);
  await client.query(`create role ${ident(db.roleName)} nologin noinherit`);
  await client.query(`grant usage on schema ${ident(db.schemaName)} to ${ident(db.roleName)}`);
  const [me] = await queryRows<{ rolsuper: boolean }>(client, 'select rolsuper from pg_roles where rolname = current_user');
  if (!me?.rolsuper) await client.query(`grant ${ident(db.roleName)} to current_user`);
  return db;
}

export async function listDatabases(em: EntityManager, workspaceId: string): Promise<{ databases: DatabaseData[]; tables: TableData[] }> {
  return withClient(em, async (client) => {
    const dbs = (
      await queryRows<DatabaseRow>(client, 'select * from user_databases where workspace_id = $1 order by created_at, id', [workspaceId])
    ).map(toDatabase);
    const tables = (
      await queryRows<TableRow>(client, 'select * from user_tables where workspace_id = $1 and not trashed order by created_at, id', [
        workspaceId,
      ])
    ).map(toTable);
    const byId = new Map(dbs.map((d) => [d.id, d]));
    const out: TableData[] = [];
    for (const t of tables) {
      const db = byId.get(t.databaseId)!;
      out.push(tableData(db, t, await countRows(client, db, t)));
    }
    return {
      databases: dbs.map((d) => ({
        id: d.id,
        name: d.name,
        tableCount: tables.filter((t) => t.databaseId === d.id).length,
        createdAt: d.createdAt,
        updatedAt: d.updatedAt,
      })),
      tables: out,
    };
  });
}

export interface CreateInput {
  databaseName: string;
  tableName?: string;
  columns?: unknown;
  rows?: unknown[];
}

export type CreateResult =
  { kind: 'database'; database: DatabaseData } | { kind: 'table'; database: DatabaseData; table: TableData; rowsInserted: number };

/**
 * `databaseName` alone creates a database (409 when the workspace has one of that name);
 * with `tableName` and `columns` it creates a table in that database, creating the database
 * first when it does not exist, and inserts the optional initial rows, all in one transaction.
 */
export async function createDatabaseOrTable(em: EntityManager, workspaceId: string, input: CreateInput): Promise<CreateResult> {
  const databaseName = checkDatabaseName(input.databaseName);
  if (input.tableName === undefined) {
    if (input.columns !== undefined || input.rows !== undefined)
      throw invalidInput('columns and rows need a tableName.', { details: { field: 'tableName' } });
    return inTransaction(em, async (client) => {
      const db = await createDatabaseInTransaction(client, workspaceId, databaseName);
      return { kind: 'database', database: { id: db.id, name: db.name, tableCount: 0, createdAt: db.createdAt, updatedAt: db.updatedAt } };
    });
  }
  const tableName = checkTableName(input.tableName);
  const columns = checkColumns(input.columns ?? []);
  const rows = input.rows ?? [];
  if (!Array.isArray(rows)) throw invalidInput('rows must be an array of objects.', { details: { field: 'rows' } });
  if (rows.length > MAX_INITIAL_ROWS) throw invalidInput(`At most ${MAX_INITIAL_ROWS} initial rows.`, { details: { field: 'rows' } });
  // Every row is checked before anything is written.
  const cells = rows.map((r, i) => {
    try {
      return valuesToSql(columns, r);
    } catch (err) {
      if (err instanceof Error) err.message = `rows[${i}]: ${err.message}`;
      throw err;
    }
  });
  return inTransaction(em, async (client) => {
    const db =
      (await findDatabaseByName(client, workspaceId, databaseName)) ??
      (await createDatabaseInTransaction(client, workspaceId, databaseName));
    const table = await createTable(client, workspaceId, db, tableName, columns);
    await insertCells(client, db, table, cells);
    const tableCount = (await liveTables(client, db.id)).length;
    return {
      kind: 'table',
      database: { id: db.id, name: db.name, tableCount, createdAt: db.createdAt, updatedAt: db.updatedAt },
      table: tableData(db, table, cells.length),
      rowsInserted: cells.length,
    };
  });
}

/** Creates the real table, grants SELECT to the database's reader role, and records it. */
export async function createTable(
  client: PgClient,
  workspaceId: string,
  db: UserDatabase,
  name: string,
  columns: TableColumn[],
): Promise<UserTable> {
  // Callers check the name first; this keeps every future caller to the same rule.
  checkTableName(name);
  const existing = await queryRows<{ id: string }>(
    client,
    'select id from user_tables where database_id = $1 and name = $2 and not trashed',
    [db.id, name],
  );
  if (existing.length > 0) throw conflict(`Table "${name}" already exists in database "${db.name}".`);
  const now = new Date();
  const table: UserTable = {
    id: newId('tbl'),
    workspaceId,
    databaseId: db.id,
    name,
    physicalName: name,
    columns,
    trashed: false,
    trashedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  const columnSql = [
    `${ident(ROW_INDEX)} integer generated always as identity primary key`,
    ...columns.map((c) => `${ident(c.name)} ${SQL_TYPES[c.type]}`),
  ];
  try {
    await client.query(
      'insert into user_tables (id, workspace_id, database_id, name, physical_name, columns, trashed, created_at, updated_at) values ($1, $2, $3, $4, $4, $5, false, $6, $6)',
      [table.id, workspaceId, db.id, name, JSON.stringify(columns), now],
    );
    await client.query(`create table ${qualified(db, table)} (${columnSql.join(', ')})`);
  } catch (err) {
    if (isPgError(err) && (err.code === '23505' || err.code === '42P07'))
      throw conflict(`Table "${name}" already exists in database "${db.name}".`);
    throw err;
  }
  await client.query(`grant select on ${qualified(db, table)} to ${ident(db.roleName)}`);
  return table;
}

/**
 * Inserts checked rows, INSERT_BATCH at a time, each batch one statement whose parameters are
 * one array per column (`insert … select * from unnest($1::text[], $2::float8[], …)`), so a
 * CSV import of 50,000 rows is a dozen statements. Returns the inserted rows' indexes in order.
 */
export async function insertCells(
  client: PgClient,
  db: UserDatabase,
  table: UserTable,
  rows: Array<Map<string, SqlCell>>,
): Promise<number[]> {
  const indexes: number[] = [];
  const columns = table.columns;
  for (let start = 0; start < rows.length; start += INSERT_BATCH) {
    const batch = rows.slice(start, start + INSERT_BATCH);
    if (columns.length === 0) {
      for (let i = 0; i < batch.length; i++) {
        const [r] = await queryRows<{ rowIndex: number }>(
          client,
          `insert into ${qualified(db, table)} default values returning ${ident(ROW_INDEX)}`,
        );
        if (!r) throw new Error('insert … returning gave no row');
        indexes.push(r.rowIndex);
      }
      continue;
    }
    const arrays = columns.map((c) => batch.map((cells) => (cells.has(c.name) ? cells.get(c.name)! : null)));
    const unnest = columns.map((c, i) => `$${i + 1}::${SQL_TYPES[c.type]}[]`).join(', ');
    try {
      const inserted = await queryRows<{ rowIndex: number }>(
        client,
        `insert into ${qualified(db, table)} (${columns.map((c) => ident(c.name)).join(', ')}) select * from unnest(${unnest}) returning ${ident(ROW_INDEX)}`,
        arrays,
      );
      indexes.push(...inserted.map((r) => r.rowIndex));
    } catch (err) {
      asValueError(err);
    }
  }
  return indexes;
}

// ---------------------------------------------------------------------------------------------
// Tables

export type PatchTableInput = { trashed: boolean } | { column: unknown; defaultValue?: unknown };

/**
 * Trash or restore a table, or add a column (existing rows take `defaultValue`, checked like
 * any cell). Trashing renames the table out of the way and revokes the reader role's SELECT,
 * so its name is free and SQL cannot reach it; restoring needs the name to be free again.
 */
export async function patchTable(em: EntityManager, workspaceId: string, tableId: string, input: PatchTableInput): Promise<TableData> {
  return inTransaction(em, async (client) => {
    const { table, db, managed } = await loadTable(client, workspaceId, tableId, { lock: 'update', includeTrashed: true });
    const now = new Date();
    if ('trashed' in input) {
      if (managed && input.trashed)
        throw conflict(`Table "${table.name}" is managed configuration: its declaration is permanent, so it cannot be trashed.`, {
          code: 'managed_table',
        });
      if (input.trashed !== table.trashed) {
        if (input.trashed) {
          const physical = `_trash_${table.id.slice(4, 28)}`;
          await client.query(`revoke select on ${qualified(db, table)} from ${ident(db.roleName)}`);
          await client.query(`alter table ${qualified(db, table)} rename to ${ident(physical)}`);
          await client.query('update user_tables set trashed = true, trashed_at = $2, physical_name = $3, updated_at = $2 where id = $1', [
            table.id,
            now,
            physical,
          ]);
          Object.assign(table, { trashed: true, trashedAt: now, physicalName: physical, updatedAt: now });
        } else {
          const taken = await queryRows(client, 'select 1 from user_tables where database_id = $1 and name = $2 and not trashed', [
            db.id,
            table.name,
          ]);
          if (taken.length > 0)
            throw conflict(`Table "${table.name}" cannot be restored: database "${db.name}" has a live table of that name.`);
          await client.query(`alter table ${qualified(db, table)} rename to ${ident(table.name)}`);
          await client.query(
            'update user_tables set trashed = false, trashed_at = null, physical_name = name, updated_at = $2 where id = $1',
            [table.id, now],
          );
          Object.assign(table, { trashed: false, trashedAt: null, physicalName: table.name, updatedAt: now });
          await client.query(`grant select on ${qualified(db, table)} to ${ident(db.roleName)}`);
        }
      }
      return tableData(db, table, await countRows(client, db, table));
    }
    if (table.trashed) throw notFound(TABLE_NOT_FOUND);
    const column = checkColumn(input.column, table.columns.length);
    checkColumns([column], table.columns);
    const fill = input.defaultValue === undefined || input.defaultValue === null ? null : cellToSql(column, input.defaultValue);
    const columns = [...table.columns, column];
    await client.query(`alter table ${qualified(db, table)} add column ${ident(column.name)} ${SQL_TYPES[column.type]}`);
    if (fill !== null) await client.query(`update ${qualified(db, table)} set ${ident(column.name)} = $1`, [fill]).catch(asValueError);
    await client.query('update user_tables set columns = $2, updated_at = $3 where id = $1', [table.id, JSON.stringify(columns), now]);
    Object.assign(table, { columns, updatedAt: now });
    return tableData(db, table, await countRows(client, db, table));
  });
}

export async function getTable(em: EntityManager, workspaceId: string, tableId: string): Promise<TableData> {
  return withClient(em, async (client) => {
    const { table, db } = await loadTable(client, workspaceId, tableId);
    return tableData(db, table, await countRows(client, db, table));
  });
}

// ---------------------------------------------------------------------------------------------
// Rows

function selectList(table: UserTable): string {
  return [ident(ROW_INDEX), ...table.columns.map((c) => ident(c.name))].join(', ');
}

function rowData(table: UserTable, r: Record<string, unknown>): RowData {
  return { rowIndex: Number(r[ROW_INDEX]), values: Object.fromEntries(table.columns.map((c) => [c.name, cellFromSql(c, r[c.name])])) };
}

export interface RowPage {
  table: TableData;
  rows: RowData[];
  pagination: { limit: number; offset: number; returned: number; total: number };
}

/** Rows in rowIndex order, a page of `limit` from `offset`, with the total. */
export async function listRows(
  em: EntityManager,
  workspaceId: string,
  tableId: string,
  page: { limit: number; offset: number },
): Promise<RowPage> {
  return inTransaction(
    em,
    async (client) => {
      const { table, db } = await loadTable(client, workspaceId, tableId);
      const total = await countRows(client, db, table);
      const rows = await queryRows(
        client,
        `select ${selectList(table)} from ${qualified(db, table)} order by ${ident(ROW_INDEX)} limit $1 offset $2`,
        [page.limit, page.offset],
      );
      return {
        table: tableData(db, table, total),
        rows: rows.map((r) => rowData(table, r)),
        pagination: { limit: page.limit, offset: page.offset, returned: rows.length, total },
      };
    },
    'begin isolation level repeatable read read only',
  );
}

/** Inserts one row; values name only declared columns (400 naming the column otherwise). */
export async function insertRow(
  em: EntityManager,
  workspaceId: string,
  tableId: string,
  values: unknown,
): Promise<{ tableId: string; row: RowData }> {
  return inTransaction(em, async (client) => {
    const { table, db, managed } = await loadTable(client, workspaceId, tableId, { lock: 'share' });
    refuseManagedWrite(managed, table);
    const cells = valuesToSql(table.columns, values ?? {});
    const params = [...cells.values()];
    const sql =
      cells.size === 0
        ? `insert into ${qualified(db, table)} default values returning ${selectList(table)}`
        : `insert into ${qualified(db, table)} (${[...cells.keys()].map(ident).join(', ')}) values (${params.map((_, i) => `$${i + 1}`).join(', ')}) returning ${selectList(table)}`;
    const [row] = await queryRows(client, sql, params).catch(asValueError);
    if (!row) throw new Error('insert … returning gave no row');
    return { tableId: table.id, row: rowData(table, row) };
  });
}

function checkRowIndex(rowIndex: unknown): number {
  if (typeof rowIndex !== 'number' || !Number.isInteger(rowIndex) || rowIndex < 1 || rowIndex > 2_147_483_647) {
    throw invalidInput('rowIndex must be a positive integer.', { details: { field: 'rowIndex' } });
  }
  return rowIndex;
}

/** Updates the supplied cells of one row; absent keys and JSON null cells are left as they are. */
export async function updateRow(
  em: EntityManager,
  workspaceId: string,
  tableId: string,
  rowIndexRaw: unknown,
  values: unknown,
): Promise<{ tableId: string; row: RowData }> {
  const rowIndex = checkRowIndex(rowIndexRaw);
  return inTransaction(em, async (client) => {
    const { table, db, managed } = await loadTable(client, workspaceId, tableId, { lock: 'share' });
    refuseManagedWrite(managed, table);
    const cells = valuesToSql(table.columns, values ?? {}, { partial: true });
    const params: SqlCell[] = [rowIndex];
    const sets = [...cells].map(([name, cell]) => (params.push(cell), `${ident(name)} = $${params.length}`));
    const sql =
      sets.length > 0
        ? `update ${qualified(db, table)} set ${sets.join(', ')} where ${ident(ROW_INDEX)} = $1 returning ${selectList(table)}`
        : `select ${selectList(table)} from ${qualified(db, table)} where ${ident(ROW_INDEX)} = $1`;
    const rows = await queryRows(client, sql, params).catch(asValueError);
    const [row] = rows;
    if (!row) throw notFound(ROW_NOT_FOUND);
    return { tableId: table.id, row: rowData(table, row) };
  });
}

export async function deleteRow(
  em: EntityManager,
  workspaceId: string,
  tableId: string,
  rowIndexRaw: unknown,
): Promise<{ tableId: string; rowIndex: number; deleted: true }> {
  const rowIndex = checkRowIndex(rowIndexRaw);
  return inTransaction(em, async (client) => {
    const { table, db, managed } = await loadTable(client, workspaceId, tableId, { lock: 'share' });
    refuseManagedWrite(managed, table);
    const result = await client.query(`delete from ${qualified(db, table)} where ${ident(ROW_INDEX)} = $1`, [rowIndex]);
    if (result.rowCount === 0) throw notFound(ROW_NOT_FOUND);
    return { tableId: table.id, rowIndex, deleted: true };
  });
}

/**
 * Rows whose cells equal every entry of `filter` (values checked like cells; null matches an
 * empty cell), in rowIndex order, at most `limit`. Used by the table_read node.
 */
export async function findRows(
  em: EntityManager,
  workspaceId: string,
  tableId: string,
  filter: Record<string, unknown>,
  limit: number,
): Promise<{ tableId: string; rows: RowData[] }> {
  return withClient(em, async (client) => {
    const { table, db } = await loadTable(client, workspaceId, tableId);
    const byName = new Map(table.columns.map((c) => [c.name, c]));
    const params: unknown[] = [limit];
    const where = Object.entries(filter).map(([name, value]) => {
      const column = byName.get(name);
      if (!column)
        throw invalidInput(
          `Unknown column "${name}" in filter: the table has ${table.columns.map((c) => c.name).join(', ') || 'no columns'}.`,
          { details: { column: name } },
        );
      if (value === null) return `${ident(name)} is null`;
      params.push(cellToSql(column, value));
      return `${ident(name)} = $${params.length}`;
    });
    const rows = await queryRows(
      client,
      `select ${selectList(table)} from ${qualified(db, table)}${where.length ? ` where ${where.join(' and ')}` : ''} order by ${ident(ROW_INDEX)} limit $1`,
      params,
    ).catch(asValueError);
    return { tableId: table.id, rows: rows.map((r) => rowData(table, r)) };
  });
}
