/**
 * The rules of table, column and cell values (spec: Database, table, column, row), shared by
 * the API, CSV import and the workflow nodes so they accept and refuse exactly the same input.
 * Every refusal names the offending column.
 */
import { type ColumnType, type TableColumn } from '../../db/entities';
import { COLUMN_TYPES } from '../../engine/statuses';
import { invalidInput } from '../kernel/errors';
import { storableString, toStorable } from '../kernel/storableText';

/** Table and column names: lowercase SQL identifiers, usable unquoted in the read-only SQL. */
export const NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;
const NAME_RULE = 'must be 1 to 63 characters of lowercase letters, digits and "_", starting with a letter';
export const MAX_COLUMNS = 100;
export const MAX_DATABASE_NAME = 100;
/** The identity column every table has; user columns cannot take its name (they are lowercase). */
export const ROW_INDEX = 'rowIndex';
/**
 * Names PostgreSQL keeps for itself. Every relation of its catalogue (pg_class, pg_tables,
 * pg_stat_activity, …) starts with `pg_`, and a user table of such a name would put read-only
 * SQL one search_path entry away from the catalogue of every workspace; the system columns
 * cannot be declared at all (PostgreSQL refuses them).
 */
const RESERVED_PREFIX = 'pg_';
const SYSTEM_COLUMNS = new Set(['tableoid', 'xmin', 'cmin', 'xmax', 'cmax', 'ctid']);
const RESERVED_RULE = `is reserved: names starting with "${RESERVED_PREFIX}" belong to PostgreSQL's catalogue`;

/** SQL types of the column types; `rowIndex` is `integer generated always as identity`. */
export const SQL_TYPES: Record<ColumnType, string> = {
  text: 'text',
  number: 'double precision',
  status: 'text',
  date: 'timestamptz',
  json: 'jsonb',
};

/** A double-quoted SQL identifier. Names reaching SQL are checked first; this is the second guard. */
export function ident(name: string): string {
  if (name.includes('\u0000')) throw new Error('identifier contains NUL');
  return `"${name.replace(/"/g, '""')}"`;
}

export function checkTableName(name: unknown): string {
  if (typeof name !== 'string' || !NAME_PATTERN.test(name))
    throw invalidInput(`Table name ${JSON.stringify(name)} ${NAME_RULE}.`, { details: { field: 'tableName' } });
  if (name.startsWith(RESERVED_PREFIX))
    throw invalidInput(`Table name ${JSON.stringify(name)} ${RESERVED_RULE}.`, { details: { field: 'tableName' } });
  return name;
}

export function checkDatabaseName(name: unknown): string {
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (trimmed.length === 0 || trimmed.length > MAX_DATABASE_NAME) {
    throw invalidInput(`databaseName must be 1 to ${MAX_DATABASE_NAME} characters.`, { details: { field: 'databaseName' } });
  }
  return trimmed;
}

/** Checks a column definition; the error names the column. */
export function checkColumn(raw: unknown, index: number): TableColumn {
  const c = raw as { name?: unknown; type?: unknown } | null;
  const label = c && typeof c.name === 'string' ? c.name : `#${index + 1}`;
  if (!c || typeof c !== 'object' || Array.isArray(c)) throw columnError(label, `Column ${label} must be an object { name, type }.`);
  if (typeof c.name !== 'string' || !NAME_PATTERN.test(c.name))
    throw columnError(label, `Column name ${JSON.stringify(c.name ?? null)} ${NAME_RULE}.`);
  if (c.name.startsWith(RESERVED_PREFIX)) throw columnError(c.name, `Column name ${JSON.stringify(c.name)} ${RESERVED_RULE}.`);
  if (SYSTEM_COLUMNS.has(c.name))
    throw columnError(
      c.name,
      `Column name ${JSON.stringify(c.name)} is reserved: PostgreSQL gives every table a system column of that name.`,
    );
  if (typeof c.type !== 'string' || !(COLUMN_TYPES as readonly string[]).includes(c.type)) {
    throw columnError(c.name, `Column "${c.name}" has type ${JSON.stringify(c.type ?? null)}; expected one of ${COLUMN_TYPES.join(', ')}.`);
  }
  const extra = Object.keys(c).filter((k) => k !== 'name' && k !== 'type' && k !== 'tableReference');
  if (extra.length > 0) throw columnError(c.name, `Column "${c.name}" has unknown field "${extra[0]}".`);
  const ref = (c as { tableReference?: unknown }).tableReference;
  if (ref !== undefined && typeof ref !== 'boolean') throw columnError(c.name, `Column "${c.name}": tableReference must be true or false.`);
  // `tableReference: false` is the same as leaving the flag out.
  if (ref === true) {
    if (c.type !== 'text') throw columnError(c.name, `Column "${c.name}": only text columns can be table references.`);
    return { name: c.name, type: 'text', tableReference: true };
  }
  return { name: c.name, type: c.type as ColumnType };
}

export function checkColumns(raw: unknown, existing: TableColumn[] = []): TableColumn[] {
  if (!Array.isArray(raw)) throw invalidInput('columns must be an array of { name, type }.', { details: { field: 'columns' } });
  const columns = raw.map((c, i) => checkColumn(c, i));
  const seen = new Set(existing.map((c) => c.name));
  for (const c of columns) {
    if (seen.has(c.name)) throw columnError(c.name, `Column "${c.name}" is declared twice.`);
    seen.add(c.name);
  }
  if (seen.size > MAX_COLUMNS) throw invalidInput(`A table has at most ${MAX_COLUMNS} columns.`, { details: { field: 'columns' } });
  return columns;
}

function columnError(column: string, message: string) {
  return invalidInput(message, { details: { column } });
}

/** A cell as stored: the parameter bound to its SQL column. */
export type SqlCell = string | number | null;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;
const MIN_DATE_MS = Date.UTC(-4713, 0, 1);
const MAX_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

/** A finite number read from a cell string (CSV or API), or null when it is not one. */
export function parseNumber(text: string): number | null {
  const t = text.trim();
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/** Epoch milliseconds of an ISO-8601 date or date-time, or null. */
export function parseDate(text: string): number | null {
  const t = text.trim();
  if (!ISO_DATE.test(t)) return null;
  const ms = Date.parse(t.length === 10 ? `${t}T00:00:00Z` : t.replace(' ', 'T'));
  return Number.isFinite(ms) && ms >= MIN_DATE_MS && ms <= MAX_DATE_MS ? ms : null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

/**
 * The SQL parameter for one cell. Scalar columns take strings or finite numbers; arrays,
 * objects, booleans and null only `json` columns. Throws a 400 naming the column.
 */
export function cellToSql(column: TableColumn, value: unknown): SqlCell {
  const refuse = (why: string) => columnError(column.name, `Column "${column.name}" (${column.type}) ${why}.`);
  if (column.type === 'json') {
    if (value === undefined) throw refuse('needs a JSON value');
    // JSON.stringify writes NUL and lone surrogates as escapes jsonb refuses: the stored rule first.
    return JSON.stringify(toStorable(value));
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw refuse(`does not accept ${describe(value)}: numbers must be finite`);
  } else if (typeof value !== 'string') {
    throw refuse(
      `does not accept ${describe(value)}: only strings and finite numbers (structured values, booleans and null go in json columns)`,
    );
  }
  switch (column.type) {
    case 'text':
    case 'status':
      return storableString(String(value));
    case 'number': {
      const n = typeof value === 'number' ? value : parseNumber(value);
      if (n === null) throw refuse(`does not accept ${describe(value)}: expected a finite number`);
      return n;
    }
    case 'date': {
      const ms = typeof value === 'number' ? value : parseDate(value);
      if (ms === null || !Number.isFinite(ms) || ms < MIN_DATE_MS || ms > MAX_DATE_MS) {
        throw refuse(`does not accept ${describe(value)}: expected an ISO-8601 date or date-time, or epoch milliseconds`);
      }
      return new Date(ms).toISOString();
    }
  }
}

/**
 * Checks a row's values against the table's columns and returns the SQL cells by column name.
 * `partial`: JSON null means "leave the cell as it is" (PATCH); otherwise null is a value that
 * only json columns accept.
 */
export function valuesToSql(columns: TableColumn[], values: unknown, opts: { partial?: boolean } = {}): Map<string, SqlCell> {
  if (values === null || typeof values !== 'object' || Array.isArray(values))
    throw invalidInput('values must be an object of column name to value.', { details: { field: 'values' } });
  const byName = new Map(columns.map((c) => [c.name, c]));
  const out = new Map<string, SqlCell>();
  for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
    const column = byName.get(key);
    if (!column) throw columnError(key, `Unknown column "${key}": the table has ${columns.map((c) => c.name).join(', ') || 'no columns'}.`);
    if (opts.partial && value === null) continue;
    out.set(key, cellToSql(column, value));
  }
  return out;
}

/** A stored cell as the API shows it: dates as ISO strings, json as its value. */
export function cellFromSql(column: TableColumn, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (column.type === 'date') return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
  return value;
}
