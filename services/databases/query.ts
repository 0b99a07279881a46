/**
 * Read-only SQL over one user database, in three layers that each hold on their own:
 * 1. sqlCheck.ts: the real PostgreSQL parser; one SELECT over this database's tables, allowlisted
 *    functions and types.
 * 2. The session: a READ ONLY transaction with SET LOCAL statement_timeout, SET LOCAL search_path
 *    to the database's schema, then pg_catalog and pg_temp named after it (so a name resolves to
 *    the database's own table before any catalogue relation), and SET LOCAL ROLE to the
 *    database's reader role (USAGE on that schema and SELECT on its live tables; the catalogue
 *    views that describe other schemas are revoked from it where the service was provisioned
 *    by scripts/lib/ownerRole.ts). The statement runs as the query of
 *    a cursor (DECLARE … CURSOR FOR), over the extended protocol: a cursor takes one SELECT or
 *    VALUES, and the extended protocol one statement.
 * 3. The result: at most `maxRows` rows and `maxBytes` of JSON. PostgreSQL measures each row and
 *    nulls the values of rows past the budget, so they never cross the wire; fetching stops
 *    there and the answer says `truncated: true`.
 * All of it runs on the user-SQL pool behind a per-workspace fair queue (userSql.ts), never on
 * the ORM's connections.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { types as pgTypes, type QueryConfig } from 'pg';
import type { TableColumn, UserDatabase } from '../../db/entities';
import { DomainError, invalidInput, rateLimited, timedOut, unavailable } from '../kernel/errors';
import { FairQueueFull } from '../kernel/fairQueue';
import { ident } from './columns';
import { checkReadOnlySql } from './sqlCheck';
import { isPgError, type PgClient } from './storage';
import { withClient } from './store';
import { ConnectionClosed, DEFAULT_USER_SQL_POOL, withUserSqlClient, type UserSqlPoolSettings } from './userSql';
import { liveTables, loadDatabase } from './tables';

export interface QuerySettings {
  /** statement_timeout of each statement of the query (default 5 s). */
  timeoutMs: number;
  maxRows: number;
  maxBytes: number;
  /** The user-SQL pool and its per-workspace queue (defaults: DEFAULT_USER_SQL_POOL). */
  pool?: Partial<UserSqlPoolSettings>;
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
export async function withSandboxSession<T>(
  client: PgClient,
  db: UserDatabase,
  timeoutMs: number,
  fn: (client: PgClient) => Promise<T>,
): Promise<T> {
  try {
    // Our own statements only (names quoted, numbers computed), sent as one round trip.
    await client.query(
      [
        'begin transaction isolation level repeatable read read only',
        `set local statement_timeout = ${Math.max(1, Math.trunc(timeoutMs))}`,
        `set local idle_in_transaction_session_timeout = ${Math.max(1000, Math.trunc(timeoutMs) * 2)}`,
        // A statement whose client went away (the backstop closed it) stops within a second.
        'set local client_connection_check_interval = 1000',
        // Unnamed, pg_catalog would be searched first: a table "pg_class" would be the catalogue's.
        `set local search_path = ${ident(db.schemaName)}, pg_catalog, pg_temp`,
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
 * The user's statement as the body of a subquery, its columns renamed by position (so
 * duplicate or unnamed columns need no quoting). The line breaks keep a trailing `--` comment
 * of the user's text from swallowing our closing parenthesis; a trailing semicolon is dropped.
 */
function asSubquery(sql: string, columns: number): string {
  const body = sql.replace(/;\s*$/, '');
  const names = Array.from({ length: columns }, (_, i) => `c${i + 1}`);
  return `(\n${body}\n) as q${columns > 0 ? `(${names.join(', ')})` : ''}`;
}

/** Sets the statement timeout of the next statements to what is left until `deadlineAt`. */
async function timeLeft(client: PgClient, deadlineAt: number | undefined): Promise<void> {
  if (deadlineAt === undefined) return;
  await client.query(`set local statement_timeout = ${Math.max(1, Math.ceil(deadlineAt - Date.now()))}`);
}

export interface FetchCaps {
  maxRows: number;
  maxBytes: number;
  /** Epoch ms by which the whole query (every FETCH) must be done; each statement gets what is left. */
  deadlineAt?: number;
}

/**
 * Layer 3: fetches at most `maxRows` rows and `maxBytes` of JSON, with the bytes measured by
 * PostgreSQL: the statement is wrapped so the server computes each value's text size and a
 * running total, and sends the values of a row only while that total is within `maxBytes`
 * (past it, the row comes with its values nulled, and fetching stops). So no value or row
 * over the budget ever reaches Node, however large the server computed it. The statement is
 * first described (`limit 0`) to learn its columns, then declared as a cursor; both go over
 * the extended protocol, which refuses several statements in one string.
 */
export async function fetchCapped(client: PgClient, sql: string, caps: FetchCaps): Promise<Omit<QueryResult, 'durationMs'>> {
  // `queryMode` (node-postgres 8.12+, missing from @types/pg) forces Parse/Bind/Execute.
  await timeLeft(client, caps.deadlineAt);
  const described = await client.query({ text: `select * from ${asSubquery(sql, 0)} limit 0`, queryMode: 'extended' } as QueryConfig);
  const columns = described.fields.map((f) => f.name);
  const cols = columns.map((_, i) => `c${i + 1}`);
  // JSON bytes of a row ≈ each value's text + its quoted name, colon and comma, + 2 braces; NULL counts as `null`.
  const rowBytes = [
    2,
    ...cols.map((c, i) => `coalesce(octet_length(q.${c}::text), 4) + ${Buffer.byteLength(JSON.stringify(columns[i])) + 4}`),
  ].join(' + ');
  const cap = Math.trunc(caps.maxBytes);
  const declare = {
    text: `declare svc_query no scroll cursor for
      select ${[...cols.map((c) => `case when w.svc_total <= ${cap} then w.${c} end`), 'w.svc_total'].join(', ')}
        from (select q.*, sum(${rowBytes}) over (rows between unbounded preceding and current row) as svc_total from ${asSubquery(sql, cols.length)}) as w`,
    queryMode: 'extended',
  } as QueryConfig;
  await client.query(declare);
  const rows: Array<Record<string, unknown>> = [];
  let bytes = 0;
  let truncated = false;
  for (;;) {
    const want = Math.min(FETCH_BATCH, caps.maxRows + 1 - rows.length);
    await timeLeft(client, caps.deadlineAt);
    const batch = await client.query({ text: `fetch forward ${want} from svc_query`, rowMode: 'array', types: RESULT_TYPES });
    for (const values of batch.rows as unknown[][]) {
      const total = Number(values[cols.length]);
      if (rows.length >= caps.maxRows || total > cap) {
        truncated = true;
        break;
      }
      const row = Object.fromEntries(columns.map((c, i) => [c, values[i]]));
      // The server's figure is an estimate of JSON (escapes, number formats); this is exact.
      const size = Buffer.byteLength(JSON.stringify(row));
      if (bytes + size > caps.maxBytes) {
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

/** Room above `maxBytes` for one protocol message: the row's framing, names and the running total. */
const MESSAGE_SLACK_BYTES = 64 * 1024;

/**
 * Runs a read-only query over one database of the workspace, on the user-SQL pool behind the
 * workspace's fair queue (userSql.ts). Missing database: 404. The checker's refusals and
 * PostgreSQL's errors: 400 with the message. Over the time limit (each statement gets what is
 * left of it; past it plus a second, the connection is closed): 408 `query_timeout` with the
 * database's tables, so the caller can write a narrower query. The workspace's queue full:
 * 429 `query_queue_full`. A message from the server over the byte budget (an error text that
 * quotes a huge value): 400 `query_result_too_large`; the connection is destroyed.
 */
export async function runQuery(
  em: EntityManager,
  workspaceId: string,
  input: { databaseId: string; sql: string },
  settings: QuerySettings,
): Promise<QueryResult> {
  let tables: Array<{ name: string; columns: TableColumn[] }> = [];
  const timeout = () =>
    timedOut(`The query ran over the ${settings.timeoutMs} ms time limit; narrow it (filters, LIMIT) and try again.`, {
      code: 'query_timeout',
      details: { availableTables: availableTables(tables) },
    });
  const pool = { ...DEFAULT_USER_SQL_POOL, ...settings.pool };
  try {
    // Everything, the catalogue reads and the statement check included, waits for the
    // workspace's turn: a refused query costs nothing but the refusal.
    return await withUserSqlClient(
      em,
      workspaceId,
      { ...pool, maxMessageBytes: settings.maxBytes + MESSAGE_SLACK_BYTES },
      async ({ client, close }) => {
        // The catalogue is read on the service's own pool: quick, and not the tenant's SQL.
        const db = await withClient(em, async (c) => {
          const found = await loadDatabase(c, workspaceId, input.databaseId);
          tables = await liveTables(c, found.id);
          return found;
        });
        await checkReadOnlySql(
          input.sql,
          tables.map((t) => t.name),
        );
        const started = process.hrtime.bigint();
        const deadlineAt = Date.now() + settings.timeoutMs;
        // The server's timeouts end the statement cleanly; this only catches a connection that stops answering.
        const backstop = setTimeout(
          () => close(new ConnectionClosed('deadline', 'The query ran over its time limit.')),
          settings.timeoutMs + 1_000,
        );
        try {
          const result = await withSandboxSession(client, db, settings.timeoutMs, (c) =>
            fetchCapped(c, input.sql, { ...settings, deadlineAt }),
          );
          return { ...result, durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000 };
        } finally {
          clearTimeout(backstop);
        }
      },
    );
  } catch (err) {
    if (err instanceof FairQueueFull) {
      throw rateLimited(
        `This workspace already has ${err.limits.perKey} queries running and ${err.limits.queuePerKey} waiting; retry when they are done.`,
        {
          code: 'query_queue_full',
          retryAfterSeconds: Math.max(1, Math.ceil(settings.timeoutMs / 1000)),
        },
      );
    }
    if (err instanceof ConnectionClosed) {
      if (err.reason === 'deadline') throw timeout();
      throw invalidInput(
        `The database's answer was over the ${settings.maxBytes}-byte budget (a value or an error message that quotes one); narrow the query.`,
        { code: 'query_result_too_large' },
      );
    }
    if (isPgError(err) && err.code === '57014') throw timeout();
    if (isPgError(err) && !err.code!.startsWith('08') && !err.code!.startsWith('57P'))
      throw invalidInput(err.message, { code: 'sql_error' });
    if (err instanceof DomainError) throw err;
    throw unavailable('The database connection failed while running the query; try again.', { code: 'database_unavailable' });
  }
}
