/**
 * Read-only SQL: the endpoint, and the sandbox's layers 2 (the READ ONLY session as the
 * database's own role) and 3 (the cursor with row and byte caps) each on their own, without
 * the statement checker in front of them. Layer 1 alone: test/unit/services/databases/sqlCheck.test.ts.
 */
import { UserDatabaseSchema, type UserDatabase } from '../../../db/entities';
import { fetchCapped, withClient, withSandboxSession } from '../../../services/databases';
import { ESCAPES } from '../../support/sqlEscapes';
import {
  createTable,
  http,
  useTestStack,
  type ApiError,
  type CreatedTable,
  type QueryAnswer,
  type RowPage,
  type WorkspaceFixture,
} from '../../kit';

const TIMEOUT_MS = 1_000;
// Routes only: read-only SQL runs no workflow, so the stack has no worker.
const stack = useTestStack({ worker: false, config: { databaseQuery: { timeoutMs: TIMEOUT_MS, maxRows: 1000, maxBytes: 1024 * 1024 } } });
let other: WorkspaceFixture;
let shop: { databaseId: string; ordersId: string };
let foreign: { databaseId: string; schema: string };

beforeAll(async () => {
  other = await stack.workspace('Other');
  const customers = await createTable(stack, {
    databaseName: 'shop',
    tableName: 'customers',
    columns: [{ name: 'name', type: 'text' }],
    rows: [{ name: 'Ada' }, { name: 'Alan' }],
  });
  const orders = await createTable(stack, {
    databaseName: 'shop',
    tableName: 'orders',
    columns: [
      { name: 'customer', type: 'number' },
      { name: 'total', type: 'number' },
      { name: 'status', type: 'status' },
      { name: 'placed', type: 'date' },
      { name: 'meta', type: 'json' },
    ],
    rows: Array.from({ length: 30 }, (_, i) => ({
      customer: (i % 2) + 1,
      total: i * 10,
      status: i % 3 ? 'paid' : 'open',
      placed: `2024-01-${String((i % 28) + 1).padStart(2, '0')}`,
      meta: { i },
    })),
  });
  shop = { databaseId: customers.database.id, ordersId: orders.table.id };
  const theirs = await createTable(
    { app: stack.app, ws: other },
    { databaseName: 'vault', tableName: 'orders', columns: [{ name: 'secret', type: 'text' }], rows: [{ secret: 'theirs' }] },
  );
  foreign = { databaseId: theirs.database.id, schema: `udb_${theirs.database.id.slice(4)}` };
});

const query = (sql: string, token = stack.ws.token, databaseId = shop.databaseId) =>
  http<QueryAnswer>(stack.app, 'POST', '/api/v1/databases/query', { token, body: { databaseId, sql } });
const dbRecord = (id: string): Promise<UserDatabase> => stack.app.orm.em.fork().findOneOrFail(UserDatabaseSchema, { id });

describe('the endpoint', () => {
  test('a SELECT answers { columns, rows, truncated, durationMs } with JSON-friendly values', async () => {
    const res = await query(
      `select c.name, count(*) as orders, sum(o.total) as spent, min(o.placed) as first, max(o."rowIndex") as last_row, (array_agg(o.meta order by o."rowIndex"))[1] as meta
         from orders o join customers c on c."rowIndex" = o.customer group by c.name order by c.name`,
    );
    expect(res.status).toBe(200);
    expect(res.body.columns).toEqual(['name', 'orders', 'spent', 'first', 'last_row', 'meta']);
    expect(res.body.rows).toEqual([
      { name: 'Ada', orders: 15, spent: 2100, first: '2024-01-01T00:00:00.000Z', last_row: 29, meta: { i: 0 } },
      { name: 'Alan', orders: 15, spent: 2250, first: '2024-01-02T00:00:00.000Z', last_row: 30, meta: { i: 1 } },
    ]);
    expect(res.body.truncated).toBe(false);
    expect(typeof res.body.durationMs).toBe('number');
    const cte = await query(
      `with paid as (select * from orders where status = 'paid') select count(*) as n, '2024-02-03'::date as d from paid`,
    );
    expect(cte.body.rows).toEqual([{ n: 20, d: '2024-02-03' }]);
  });

  test('rows over the cap (1000 by default) and bytes over the cap (1 MiB) are cut with truncated: true', async () => {
    const many = await query('select n from generate_series(1, 5000) as g(n)');
    expect(many.body.rows).toHaveLength(1000);
    expect(many.body.rows.at(-1)).toEqual({ n: 1000 });
    expect(many.body.truncated).toBe(true);
    const wide = await query(
      `select n, (select string_agg(md5(i::text), '') from generate_series(1, 3125) as s(i)) as blob from generate_series(1, 30) as g(n)`,
    );
    expect(wide.body.truncated).toBe(true);
    expect(wide.body.rows.length).toBeGreaterThan(5);
    expect(wide.body.rows.length).toBeLessThan(11);
    expect(Buffer.byteLength(JSON.stringify(wide.body.rows))).toBeLessThanOrEqual(1024 * 1024);
  });

  test('a slow query is a 408 { error, code, availableTables }', async () => {
    const res = await query('select count(*) from generate_series(1, 2000000000)');
    expect(res.status).toBe(408);
    expect(res.body).toEqual({
      error: `The query ran over the ${TIMEOUT_MS} ms time limit; narrow it (filters, LIMIT) and try again.`,
      code: 'query_timeout',
      availableTables: [
        { name: 'customers', columns: [{ name: 'name', type: 'text' }] },
        { name: 'orders', columns: expect.arrayContaining([{ name: 'total', type: 'number' }]) },
      ],
    });
    // The connection went back to the pool clean: the next query works.
    expect((await query('select 1 as one')).body.rows).toEqual([{ one: 1 }]);
  });

  test("PostgreSQL's own errors are 400 with its message; a missing or foreign database is 404", async () => {
    const res = await query('select nope from orders');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'column "nope" does not exist', code: 'sql_error' });
    expect((await query('select 1/0')).body.error).toBe('division by zero');
    expect((await query('select 1', stack.ws.token, 'udb_missing')).status).toBe(404);
    const crossing = await query('select * from orders', stack.ws.token, foreign.databaseId);
    expect(crossing.status).toBe(404);
    expect(crossing.body).toEqual({ error: 'Database not found' });
    expect(
      (await http<ApiError>(stack.app, 'POST', '/api/v1/databases/query', { token: stack.ws.token, body: { sql: 'select 1' } })).status,
    ).toBe(400);
    expect(
      (await http(stack.app, 'POST', '/api/v1/databases/query', { token: stack.ws.token, body: { databaseId: shop.databaseId } })).status,
    ).toBe(400);
  });

  test('a trashed table is out of reach until restored', async () => {
    const t = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
      token: stack.ws.token,
      body: { databaseName: 'shop', tableName: 'scratch', columns: [] },
    });
    expect((await query('select count(*) from scratch')).status).toBe(200);
    await http(stack.app, 'PATCH', `/api/v1/databases/${t.body.table.id}`, { token: stack.ws.token, body: { trashed: true } });
    const res = await query('select count(*) from scratch');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/Unknown table "scratch"/);
  });
});

describe('the escape corpus through the API: every attempt is a 400 and nothing changes', () => {
  test.each(ESCAPES)('%s', async (_label, sql) => {
    const res = await query(sql);
    expect(res.status).toBe(400);
    expect(['sql_not_allowed', 'sql_error']).toContain(res.body.code);
  });
  afterAll(async () => {
    const mine = await http<RowPage>(stack.app, 'GET', `/api/v1/databases/${shop.ordersId}/rows`, { token: stack.ws.token });
    expect(mine.body.pagination.total).toBe(30);
    const theirs = await query('select secret from orders', other.token, foreign.databaseId);
    expect(theirs.body.rows).toEqual([{ secret: 'theirs' }]);
  });
});

describe('layer 2 on its own: the READ ONLY session as the database role (no statement checker)', () => {
  async function inSession(sql: string, timeoutMs = TIMEOUT_MS): Promise<{ rows?: unknown[]; error?: string }> {
    const db = await dbRecord(shop.databaseId);
    return withClient(stack.app.orm.em.fork(), async (client) => {
      try {
        return await withSandboxSession(client, db, timeoutMs, async (c) => ({ rows: (await c.query(sql)).rows }));
      } catch (err) {
        return { error: (err as Error).message };
      }
    });
  }

  test.each([
    ['writes', `insert into orders (total) values (1)`, /read-only transaction/],
    ['updates', `update orders set total = 0`, /read-only transaction/],
    ['DDL', `create table sneaky (a int)`, /read-only transaction/],
    ["another workspace's schema", '', /permission denied for schema/],
    ["the service's own tables", 'select * from public.api_keys', /permission denied for table api_keys/],
    ["the service's tables by search_path", 'select * from workflows', /relation "workflows" does not exist/],
    ['pg_authid', 'select rolpassword from pg_authid', /permission denied for table pg_authid/],
    ['pg_shadow', 'select passwd from pg_shadow', /permission denied for (table|view) pg_shadow/],
    ['server files', `select pg_read_file('/etc/hostname')`, /permission denied for function pg_read_file/],
    [
      'large objects from files',
      `select lo_import('/etc/hostname')`,
      /permission denied for function lo_import|must be superuser|read-only transaction/,
    ],
    ['COPY to a server file', `copy orders to '/tmp/svc-escape'`, /permission denied|must be superuser|pg_write_server_files/],
    ['role switch via set_config', `select set_config('role', 'none', true)`, /permission denied for function set_config/],
    ['timeout lifted via set_config', `select set_config('statement_timeout', '0', true)`, /permission denied for function set_config/],
    ['pg_sleep past the statement timeout', 'select pg_sleep(30)', /statement timeout/],
  ])('%s', async (label, sqlText, expected) => {
    const sql = label === "another workspace's schema" ? `select * from ${foreign.schema}.orders` : sqlText;
    const result = await inSession(sql);
    expect(result.error).toMatch(expected);
  });

  test('the session sees its own tables only, with search_path set to its schema, then pg_catalog and pg_temp', async () => {
    expect((await inSession('select count(*)::int as n from orders')).rows).toEqual([{ n: 30 }]);
    const [{ search_path }] = (await inSession('show search_path')).rows as Array<{ search_path: string }>;
    expect(search_path).toBe(`udb_${shop.databaseId.slice(4)}, pg_catalog, pg_temp`);
    const [{ current_user }] = (await inSession('select current_user')).rows as Array<{ current_user: string }>;
    expect(current_user).toBe(`udbr_${shop.databaseId.slice(4)}`);
  });
});

describe('layer 3 on its own: the cursor, the extended protocol and the caps (no statement checker)', () => {
  async function capped(sql: string, caps = { maxRows: 10, maxBytes: 1024 * 1024 }) {
    return withClient(stack.app.orm.em.fork(), async (client) => {
      await client.query('begin read only');
      try {
        return await fetchCapped(client, sql, caps);
      } catch (err) {
        return { error: (err as Error).message };
      } finally {
        await client.query('rollback');
      }
    });
  }

  test('rows beyond maxRows are left unread and the result says truncated', async () => {
    expect(await capped('select generate_series(1, 50) as n')).toMatchObject({
      truncated: true,
      rows: Array.from({ length: 10 }, (_, i) => ({ n: i + 1 })),
    });
    expect(await capped('select generate_series(1, 10) as n')).toMatchObject({ truncated: false, columns: ['n'] });
    const bytes = await capped(`select lpad('', 1000, 'x') as s from generate_series(1, 10)`, { maxRows: 100, maxBytes: 3000 });
    expect(bytes).toMatchObject({ truncated: true });
    expect((bytes as { rows: unknown[] }).rows).toHaveLength(2);
  });

  test.each([
    ['two statements', 'select 1; select 2', /cannot insert multiple commands|syntax error/],
    ['a statement smuggled after the query', 'select 1; set statement_timeout = 0', /cannot insert multiple commands|syntax error/],
    ['SET', 'set statement_timeout = 0', /syntax error/],
    ['SET ROLE', 'set role none', /syntax error/],
    ['RESET ROLE', 'reset role', /syntax error/],
    ['DO', 'do $$ begin end $$', /syntax error/],
    ['COPY', 'copy (select 1) to stdout', /syntax error/],
    ['INSERT', 'insert into x values (1)', /syntax error/],
  ])('a cursor takes one SELECT only: %s', async (_label, sql, expected) => {
    expect((await capped(sql)) as { error?: string }).toMatchObject({ error: expect.stringMatching(expected) });
  });
});
