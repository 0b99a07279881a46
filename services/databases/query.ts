/**
 * Read-only SQL over one user database, in three layers that each hold on their own:
 * 1. sqlCheck.ts: the real PostgreSQL parser; one SELECT over this database's tables, allowlisted
 *    functions and types.
 * 2. The session: a READ ONLY transaction with SET LOCAL statement_timeout, SET LOCAL search_path
 *    to the database's schema only, and SET LOCAL ROLE to the database's reader role (USAGE on
 *    that schema and SELECT on its live tables, nothing else). The statement runs as the query of
 *    a cursor (DECLARE … CURSOR FOR), over the extended protocol: a cursor takes one SELECT or
 *    VALUES, and the extended protocol one statement.
 * 3. The result: at most `maxRows` rows and `maxBytes` of JSON, fetched in batches from the
 *    cursor; anything beyond is left unread and the answer says `truncated: true`.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { types as pgTypes, type QueryConfig } from 'pg';
import type { TableColumn, UserDatabase } from '../../db/entities';
import { invalidInput, timedOut } from '../errors';
import { ident } from './columns';
import { checkReadOnlySql } from './sqlCheck';
import { isPgError, withClient, type PgClient } from './storage';
import { liveTables, loadDatabase } from './tables';

export interface QuerySettings {
  /** statement_timeout of each statement of the query (default 5 s). */
  timeoutMs: number;
  maxRows: number;
  maxBytes: number;
}

export interface QueryResult {
  columns: string[];
  rows: Array<Record<string, unknown>>;
  truncated: boolean;
  durationMs: number;
}

const FETCH_BATCH = 200;

/**
 * Layer 2: runs `fn` in a READ ONLY transaction limited to the database's schema and role,
 * always rolled back. Exported so tests can show what this layer refuses on its own.
 */
export async function withSandboxSession<T>(client: PgClient, db: UserDatabase, timeoutMs: number, fn: (client: PgClient) => Promise<T>): Promise<T> {
  try {
    // Our own statements only (names quoted, numbers computed), sent as one round trip.
    await client.query(
      [
        'begin transaction isolation level repeatable read read only',
        `set local statement_timeout = ${Math.max(1, Math.trunc(timeoutMs))}`,
        `set local idle_in_transaction_session_timeout = ${Math.max(1000, Math.trunc(timeoutMs) * 2)}`,
        `set local search_path = ${ident(db.schemaName)}`,
        `set local role ${ident(db.roleName)}`,
      ].join('; '),
    );
    return await fn(client);
  } finally {
    await client.query('rollback').catch(() => undefined);
  }
}

/** Values as JSON shows them: integers and numerics as numbers when exact enough, dates as text, timestamps ISO. */
const RESULT_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    switch (oid) {
      case 20: // int8
      case 1700: // numeric
        return (v: string) => {
          const n = Number(v);
          return Number.isFinite(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER ? n : v;
        };
      case 1082: // date
        return (v: string) => v;
      case 1114: // timestamp without time zone
        return (v: string) => v.replace(' ', 'T');
      case 1184: // timestamptz
        return (v: string) => {
          const d = new Date(v.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00'));
          return Number.isNaN(d.getTime()) ? v : d.toISOString();
        };
      default:
        return pgTypes.getTypeParser(oid, format ?? 'text');
    }
  },
};

/**
 * Layer 3: declares the cursor and fetches at most `maxRows` rows and `maxBytes` of JSON.
 * The statement is sent with the extended protocol, which refuses several statements in one
 * string.
 */
export async function fetchCapped(client: PgClient, sql: string, caps: { maxRows: number; maxBytes: number }): Promise<Omit<QueryResult, 'durationMs'>> {
  // `queryMode` (node-postgres 8.12+, missing from @types/pg) forces Parse/Bind/Execute.
  const declare = { text: `declare svc_query no scroll cursor for ${sql}`, queryMode: 'extended' } as QueryConfig;
  await client.query(declare);
  const rows: Array<Record<string, unknown>> = [];
  let columns: string[] = [];
  let bytes = 0;
  let truncated = false;
  for (;;) {
    const want = Math.min(FETCH_BATCH, caps.maxRows + 1 - rows.length);
    const batch = await client.query({ text: `fetch forward ${want} from svc_query`, rowMode: 'array', types: RESULT_TYPES });
    columns = batch.fields.map((f) => f.name);
    for (const values of batch.rows as unknown[][]) {
      const row = Object.fromEntries(columns.map((c, i) => [c, values[i]]));
      const size = Buffer.byteLength(JSON.stringify(row));
      if (rows.length >= caps.maxRows || bytes + size > caps.maxBytes) {
        truncated = true;
        break;
      }
      bytes += size;
      rows.push(row);
    }
    if (truncated || batch.rows.length < want) break;
  }
  return { columns, rows, truncated };
}

function availableTables(tables: Array<{ name: string; columns: TableColumn[] }>) {
  return tables.map((t) => ({ name: t.name, columns: t.columns }));
}

/**
 * Runs a read-only query over one database of the workspace. Missing database: 404. The
 * checker's refusals and PostgreSQL's errors: 400 with the message. A statement over the
 * timeout: 408 `query_timeout` with the database's tables, so the caller can write a narrower query.
 */
export async function runQuery(em: EntityManager, workspaceId: string, input: { databaseId: string; sql: string }, settings: QuerySettings): Promise<QueryResult> {
  return withClient(em, async (client) => {
    const db = await loadDatabase(client, workspaceId, input.databaseId);
    const tables = await liveTables(client, db.id);
    await checkReadOnlySql(input.sql, tables.map((t) => t.name));
    const started = process.hrtime.bigint();
    try {
      const result = await withSandboxSession(client, db, settings.timeoutMs, (c) => fetchCapped(c, input.sql, settings));
      return { ...result, durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000 };
    } catch (err) {
      if (isPgError(err) && err.code === '57014') {
        throw timedOut(`The query ran over the ${settings.timeoutMs} ms time limit; narrow it (filters, LIMIT) and try again.`, {
          code: 'query_timeout',
          details: { availableTables: availableTables(tables) },
        });
      }
      if (isPgError(err)) throw invalidInput(err.message, { code: 'sql_error' });
      throw err;
    }
  });
}

