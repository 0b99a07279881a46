/**
 * CSV import and export of user tables. Import: csv-parse reads the upload record by record
 * (its streaming parser), the delimiter is detected from the first lines when not given, column
 * types are inferred from the data unless overridden, and the table (and its database, when
 * new) and every row are written in one transaction. Export: rows are read in rowIndex order in
 * batches and streamed out as JSON or as CSV (csv-stringify).
 */
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { parse, CsvError } from 'csv-parse';
import { stringify } from 'csv-stringify';
import { type ColumnType, type TableColumn, type UserDatabase, type UserTable } from '../../db/entities';
import { COLUMN_TYPES } from '../../engine/statuses';
import { invalidInput, unprocessable } from '../kernel/errors';
import {
  cellFromSql,
  cellToSql,
  checkColumns,
  checkDatabaseName,
  checkTableName,
  ident,
  MAX_COLUMNS,
  parseDate,
  parseNumber,
  ROW_INDEX,
  type SqlCell,
} from './columns';
import {
  createDatabaseInTransaction,
  createTable,
  findDatabaseByName,
  getTable,
  insertCells,
  liveTables,
  loadDatabase,
  loadTable,
  qualified,
  refuseManagedWrite,
  type TableData,
} from './tables';
import { inTransaction, queryRows, withClient } from './storage';
import { neutralizeCsvText, restoreCsvText } from '../kernel/csvCells';

/** Largest CSV upload (spec Limits: 5 MB). */
export const CSV_MAX_BYTES = 5 * 1024 * 1024;
export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;
/** MIME types taken as CSV (besides any file named *.csv). */
export const CSV_MIME_TYPES = [
  'text/csv',
  'application/csv',
  'text/x-csv',
  'application/x-csv',
  'text/comma-separated-values',
  'text/tab-separated-values',
];

export function isCsvUpload(fileName: string, mimeType: string): boolean {
  return /\.csv$/i.test(fileName) || CSV_MIME_TYPES.includes((mimeType.toLowerCase().split(';')[0] ?? '').trim());
}

/** A name made into a table or column name: lowercase letters, digits and `_`, starting with a letter. */
export function cleanName(raw: string, fallback: string): string {
  let name = raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (!name) name = fallback;
  if (!/^[a-z]/.test(name)) name = `c_${name}`;
  return name.slice(0, 63).replace(/_+$/, '');
}

/**
 * The delimiter of a CSV text among comma, semicolon, tab and pipe: the candidate found the
 * same (non-zero) number of times, outside quotes, on the most of the first 20 lines; ties go
 * to the one found more often, then to the order above. Comma when none is found.
 */
export function detectDelimiter(sample: string): string {
  const lines: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of sample) {
    if (ch === '"') quoted = !quoted;
    if (!quoted && (ch === '\n' || ch === '\r')) {
      if (current.length > 0) lines.push(current);
      current = '';
      if (lines.length >= 20) break;
      continue;
    }
    current += ch;
  }
  if (current.length > 0 && lines.length < 20) lines.push(current);
  let best: { delimiter: string; consistent: number; total: number } = { delimiter: ',', consistent: 0, total: 0 };
  for (const delimiter of CSV_DELIMITERS) {
    const counts = lines.map((line) => countOutsideQuotes(line, delimiter));
    const total = counts.reduce((a, b) => a + b, 0);
    if (total === 0) continue;
    const first = counts[0];
    const consistent = counts.filter((c) => c === first && c > 0).length;
    if (consistent > best.consistent || (consistent === best.consistent && total > best.total)) best = { delimiter, consistent, total };
  }
  return best.delimiter;
}

function countOutsideQuotes(line: string, delimiter: string): number {
  let n = 0;
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === delimiter) n++;
  }
  return n;
}

/** The type of a column from its non-empty cells: number, date, json (objects and arrays) or text. */
export function inferType(values: string[]): ColumnType {
  const present = values.filter((v) => v.trim() !== '');
  if (present.length === 0) return 'text';
  if (present.every((v) => parseNumber(v) !== null)) return 'number';
  if (present.every((v) => parseDate(v) !== null)) return 'date';
  if (present.every((v) => isJsonStructure(v))) return 'json';
  return 'text';
}

function isJsonStructure(text: string): boolean {
  const t = text.trim();
  if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[') && t.endsWith(']'))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

export interface CsvImportInput {
  fileName: string;
  data: Buffer;
  databaseId?: string;
  databaseName?: string;
  tableName?: string;
  hasHeader?: string;
  delimiter?: string;
  /** JSON array of `{ name, type }` overrides. */
  columns?: string;
}

export interface CsvImportResult {
  table: TableData;
  stats: {
    rowsInserted: number;
    columns: number;
    bytes: number;
    delimiter: string;
    hasHeader: boolean;
    createdTable: boolean;
    createdDatabase: boolean;
    inferredTypes: Record<string, ColumnType>;
  };
}

function parseFlag(raw: string | undefined): boolean {
  if (raw === undefined || raw.trim() === '') return true;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw invalidInput(`hasHeader must be true, 1, yes, false, 0 or no; got ${JSON.stringify(raw)}.`, { details: { field: 'hasHeader' } });
}

function parseDelimiterField(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const named: Record<string, string> = { comma: ',', semicolon: ';', tab: '\t', '\\t': '\t', pipe: '|' };
  const delimiter = named[raw.toLowerCase()] ?? raw;
  if (delimiter.length !== 1 || /["\r\n]/.test(delimiter))
    throw invalidInput('delimiter must be one character (or comma, semicolon, tab, pipe), not a quote or line break.', {
      details: { field: 'delimiter' },
    });
  return delimiter;
}

function parseOverrides(raw: string | undefined): Map<string, ColumnType> {
  if (raw === undefined || raw.trim() === '') return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalidInput('columns must be a JSON array of { name, type }.', { details: { field: 'columns' } });
  }
  if (!Array.isArray(parsed)) throw invalidInput('columns must be a JSON array of { name, type }.', { details: { field: 'columns' } });
  const out = new Map<string, ColumnType>();
  parsed.forEach((c: { name?: unknown; type?: unknown }, i) => {
    const name = c && typeof c.name === 'string' ? c.name : null;
    if (!name) throw invalidInput(`columns[${i}] needs a name.`, { details: { field: 'columns' } });
    if (typeof c.type !== 'string' || !(COLUMN_TYPES as readonly string[]).includes(c.type)) {
      throw invalidInput(`Column "${name}" has type ${JSON.stringify(c.type ?? null)}; expected one of ${COLUMN_TYPES.join(', ')}.`, {
        details: { column: name },
      });
    }
    out.set(name, c.type as ColumnType);
    out.set(cleanName(name, name), c.type as ColumnType);
  });
  return out;
}

/** Parses the whole upload with csv-parse's streaming parser; a malformed record is a 422 naming its line. */
async function readRecords(data: Buffer, delimiter: string): Promise<string[][]> {
  // Fed in 64 KiB slices (no copies): csv-parse is about twice as fast on those as on one 5 MB chunk.
  const slices = function* () {
    for (let at = 0; at < data.length; at += 64 * 1024) yield data.subarray(at, at + 64 * 1024);
  };
  const parser = Readable.from(slices()).pipe(
    parse({ delimiter, bom: true, skip_empty_lines: true, relax_column_count: false, max_record_size: CSV_MAX_BYTES }),
  );
  const records: string[][] = [];
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (record.length > MAX_COLUMNS)
        throw unprocessable(
          `Malformed CSV at line ${parser.info.lines}: ${record.length} fields, a table has at most ${MAX_COLUMNS} columns.`,
          { code: 'csv_malformed', details: { line: parser.info.lines } },
        );
      const nul = record.findIndex((cell) => cell.includes('\u0000'));
      if (nul >= 0)
        throw unprocessable(`Malformed CSV at line ${parser.info.lines}: field ${nul + 1} contains a NUL character.`, {
          code: 'csv_malformed',
          details: { line: parser.info.lines },
        });
      records.push(record);
    }
  } catch (err) {
    if (err instanceof CsvError) {
      const line = (err as CsvError & { lines?: number }).lines ?? parser.info.lines;
      throw unprocessable(`Malformed CSV at line ${line}: ${err.message}`, { code: 'csv_malformed', details: { line } });
    }
    throw err;
  }
  return records;
}

/**
 * Imports a CSV upload into a new table (named by `tableName` or the cleaned file name) or,
 * when the database already has a live table of that name, appends to it. Every cell is
 * checked before anything is written; a refused cell is a 400 naming its line and column.
 */
export async function importCsv(em: EntityManager, workspaceId: string, input: CsvImportInput): Promise<CsvImportResult> {
  const hasHeader = parseFlag(input.hasHeader);
  const text = input.data.toString('utf8');
  const delimiter = parseDelimiterField(input.delimiter) ?? detectDelimiter(text.slice(0, 64 * 1024));
  const overrides = parseOverrides(input.columns);
  const tableName = checkTableName(
    input.tableName?.trim() ? input.tableName.trim() : cleanName(input.fileName.replace(/\.[^.]*$/, ''), 'imported'),
  );
  if (!input.databaseId && !input.databaseName)
    throw invalidInput('Send databaseId or databaseName.', { details: { field: 'databaseId' } });
  const databaseName = input.databaseId ? undefined : checkDatabaseName(input.databaseName);

  const records = await readRecords(input.data, delimiter);
  const header = hasHeader ? (records.shift() ?? []) : [];
  const width = Math.max(header.length, records[0]?.length ?? 0);
  const names: string[] = [];
  for (let i = 0; i < width; i++) {
    const given = header[i];
    let name = hasHeader && given !== undefined ? cleanName(given, `column_${i + 1}`) : `column_${i + 1}`;
    for (let n = 2; names.includes(name); n++) name = `${name.slice(0, 60)}_${n}`;
    names.push(name);
  }
  const lineOf = (i: number) => i + (hasHeader ? 2 : 1);

  return inTransaction(em, async (client) => {
    let createdDatabase = false;
    let db: UserDatabase;
    if (input.databaseId) db = await loadDatabase(client, workspaceId, input.databaseId);
    else {
      const found = await findDatabaseByName(client, workspaceId, databaseName!);
      db = found ?? (await createDatabaseInTransaction(client, workspaceId, databaseName!));
      createdDatabase = !found;
    }
    const existing = (await liveTables(client, db.id)).find((t) => t.name === tableName);
    let table: UserTable;
    const inferredTypes: Record<string, ColumnType> = {};
    let columns: TableColumn[];
    if (existing) {
      const locked = await loadTable(client, workspaceId, existing.id, { lock: 'share' });
      table = locked.table;
      refuseManagedWrite(locked.managed, table, 'CSV appends');
      const byName = new Map(table.columns.map((c) => [c.name, c]));
      columns = names.map((name) => {
        const column = byName.get(name);
        if (!column)
          throw invalidInput(
            `Unknown column "${name}": table "${table.name}" has ${table.columns.map((c) => c.name).join(', ') || 'no columns'}.`,
            { details: { column: name } },
          );
        return column;
      });
    } else {
      columns = checkColumns(
        names.map((name, i) => {
          const original = hasHeader ? (header[i] ?? '') : '';
          const type = overrides.get(name) ?? overrides.get(original) ?? inferType(records.map((r) => r[i] ?? ''));
          inferredTypes[name] = type;
          return { name, type };
        }),
      );
    }
    const rows = records.map((record, r) => {
      const cells = new Map<string, SqlCell>();
      columns.forEach((column, i) => {
        const raw = record[i] ?? '';
        if (raw === '') return;
        try {
          cells.set(column.name, cellToSql(column, column.type === 'json' ? parseJsonCell(raw) : restoreCsvText(raw)));
        } catch (err) {
          if (err instanceof Error) err.message = `Line ${lineOf(r)}: ${err.message}`;
          throw err;
        }
      });
      return cells;
    });
    if (!existing) table = await createTable(client, workspaceId, db, tableName, columns);
    await insertCells(client, db, table!, rows);
    // count(*) always yields one row.
    const [{ n } = { n: 0 }] = await queryRows<{ n: number }>(client, `select count(*)::int as n from ${qualified(db, table!)}`);
    return {
      table: {
        id: table!.id,
        databaseId: db.id,
        databaseName: db.name,
        name: table!.name,
        columns: table!.columns,
        rowCount: n,
        trashed: false,
        createdAt: table!.createdAt,
        updatedAt: table!.updatedAt,
      },
      stats: {
        rowsInserted: rows.length,
        columns: columns.length,
        bytes: input.data.length,
        delimiter,
        hasHeader,
        createdTable: !existing,
        createdDatabase,
        inferredTypes,
      },
    };
  });
}

/** A json column's cell in a CSV: JSON text; anything that is not JSON is kept as a string. */
function parseJsonCell(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

// ---------------------------------------------------------------------------------------------
// Export

export type ExportFormat = 'csv' | 'json';
const EXPORT_BATCH = 1000;

export interface TableExport {
  table: TableData;
  fileName: string;
  contentType: string;
  stream: Readable;
}

/**
 * A table's rows as a download, streamed: rows are read in rowIndex order, EXPORT_BATCH at a
 * time, and written as they come. JSON is an array of objects (column → value, structure
 * kept); CSV has a header line of the column names and writes json cells as compact JSON text.
 */
export async function exportTable(em: EntityManager, workspaceId: string, tableId: string, format: ExportFormat): Promise<TableExport> {
  const table = await getTable(em, workspaceId, tableId);
  const batches = async function* (): AsyncGenerator<Array<Record<string, unknown>>> {
    let after = 0;
    for (;;) {
      const rows = await withClient(em, async (client) => {
        const { table: t, db } = await loadTable(client, workspaceId, tableId);
        const list = [ident(ROW_INDEX), ...t.columns.map((c) => ident(c.name))].join(', ');
        const raw = await queryRows(
          client,
          `select ${list} from ${qualified(db, t)} where ${ident(ROW_INDEX)} > $1 order by ${ident(ROW_INDEX)} limit $2`,
          [after, EXPORT_BATCH],
        );
        return raw.map((r) => ({
          rowIndex: Number(r[ROW_INDEX]),
          values: Object.fromEntries(t.columns.map((c) => [c.name, cellFromSql(c, r[c.name])])),
        }));
      });
      const last = rows.at(-1);
      if (last === undefined) return;
      after = last.rowIndex;
      yield rows.map((r) => r.values);
      if (rows.length < EXPORT_BATCH) return;
    }
  };
  const names = table.columns.map((c) => c.name);
  const stream =
    format === 'json'
      ? Readable.from(
          (async function* () {
            yield '[';
            let first = true;
            for await (const batch of batches()) {
              for (const values of batch) {
                yield `${first ? '\n' : ',\n'}${JSON.stringify(values)}`;
                first = false;
              }
            }
            yield first ? ']\n' : '\n]\n';
          })(),
        )
      : Readable.from(
          (async function* () {
            for await (const batch of batches())
              for (const values of batch)
                yield names.map((n) =>
                  csvCell(
                    table.columns.find((c) => c.name === n)!,
                    values[n],
                  ),
                );
          })(),
          { objectMode: true },
          // A lone CR is quoted too (csv-stringify quotes it only through quoted_match), or it would split the record.
        ).pipe(stringify({ header: true, columns: names, record_delimiter: 'windows', quoted_match: /\r/ }));
  return {
    table,
    fileName: `${table.name}.${format}`,
    contentType: format === 'json' ? 'application/json; charset=utf-8' : 'text/csv; charset=utf-8',
    stream,
  };
}

/** A cell as CSV text: json compact, text and status neutralized against spreadsheet formulas, numbers and dates as they are. */
function csvCell(column: TableColumn, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (column.type === 'json') return JSON.stringify(value);
  if (column.type === 'text' || column.type === 'status') return neutralizeCsvText(String(value));
  return String(value);
}
