/** Layer 1 of the SQL sandbox on its own: the real PostgreSQL parser and the statement checker. */
import { ALLOWED_FUNCTIONS, checkReadOnlySql } from '../../../../services/databases/sqlCheck';
import { loadConfig } from '../../../../services/kernel/config';
import { DomainError } from '../../../../services/kernel/errors';
import { ESCAPES } from '../../../support/sqlEscapes';

const TABLES = ['orders', 'customers'];

async function refusal(sql: string): Promise<{ code: string | undefined; message: string }> {
  try {
    await checkReadOnlySql(sql, TABLES);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).kind).toBe('invalid');
    return { code: (err as DomainError).code, message: (err as Error).message };
  }
  throw new Error(`accepted: ${sql}`);
}

describe('accepted: single read-only SELECTs over this database', () => {
  test.each([
    'select * from orders',
    'SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.total > 10 ORDER BY 1 DESC LIMIT 5',
    'select count(*), avg(total), max("rowIndex") from orders group by status having count(*) > 1',
    'with big as (select * from orders where total > 100) select * from big',
    'with recursive r(n) as (select 1 union all select n + 1 from r where n < 5) select * from r',
    'with a as (select 1 as x), b as (select * from a) select * from b',
    'select * from orders union all select * from orders',
    'values (1, 2), (3, 4)',
    'table orders',
    "select meta->>'a', meta @> '{\"b\":1}'::jsonb, jsonb_array_length(meta->'items') from orders",
    "select date_trunc('day', created), extract(year from created), created at time zone 'UTC' from orders",
    "select lower(name), substring(name from 1 for 3), coalesce(note, ''), greatest(1, 2), nullif(a, b), case when a then 1 end from customers",
    'select row_number() over (partition by status order by total) from orders',
    'select * from orders where customer_id in (select id from customers where name ilike $$a%$$)',
    'select exists (select 1 from customers), (array[1,2])[1], (select max(total) from orders)',
    'select n from generate_series(1, 3) as g(n)',
    "select json_build_object('a', 1), to_jsonb(o) from orders o",
    'select pg_catalog.lower(name) from customers',
    "select cast(total as integer), total::numeric(10,2), '2024-01-01'::date, interval '1 day' from orders",
  ])('%s', async (sql) => {
    await expect(checkReadOnlySql(sql, TABLES)).resolves.toBeUndefined();
  });
});

describe('refused: the escape corpus (layer 1 on its own)', () => {
  test(`has at least 30 attempts (${ESCAPES.length})`, () => expect(ESCAPES.length).toBeGreaterThanOrEqual(30));
  test.each(ESCAPES)('%s', async (_label, sql, message) => {
    const r = await refusal(sql);
    expect(r.code).toBe('sql_not_allowed');
    expect(r.message).toMatch(message);
  });
});

test('syntax errors carry PostgreSQL parser messages', async () => {
  const r = await refusal('select from where');
  expect(r).toEqual({ code: 'sql_error', message: 'syntax error at or near "where"' });
});

test('oversized and absurdly nested queries are refused without blowing the stack', async () => {
  expect((await refusal(`select ${'1+'.repeat(60_000)}1`)).message).toMatch(/over 100000 characters/);
  const nested = `select ${'(1 + '.repeat(1000)}1${')'.repeat(1000)}`;
  expect(await refusal(nested)).toEqual({ code: 'sql_not_allowed', message: 'The query is nested too deeply.' });
  // Ordinary nesting is fine.
  await expect(checkReadOnlySql(`select ${'(1 + '.repeat(30)}1${')'.repeat(30)}`, TABLES)).resolves.toBeUndefined();
});

test('the function allowlist holds none of the dangerous families', () => {
  for (const name of ALLOWED_FUNCTIONS)
    expect(name).not.toMatch(
      /^(pg_|lo_|dblink|txid|set_config|current_setting|query_to|nextval|setval|version|inet_|repeat$|lpad$|rpad$|format$)/,
    );
});

test('the sandbox settings default to a 5 s statement timeout, 1000 rows and 1 MiB, and are configurable', () => {
  expect(loadConfig({}).databaseQuery).toEqual({
    timeoutMs: 5000,
    maxRows: 1000,
    maxBytes: 1024 * 1024,
    pool: { poolMax: 4, perWorkspace: 2, queuePerWorkspace: 8 },
  });
  expect(
    loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '250', DATABASE_QUERY_MAX_ROWS: '10', DATABASE_QUERY_MAX_BYTES: '4096' }).databaseQuery,
  ).toMatchObject({ timeoutMs: 250, maxRows: 10, maxBytes: 4096 });
  expect(() => loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '0' })).toThrow(/DATABASE_QUERY_TIMEOUT_MS/);
});

describe('the catalogue (issue 27, item 3): out of reach by name', () => {
  test.each([
    ['pg_tables', 'select * from pg_tables'],
    ['pg_class', 'select relname from pg_class'],
    ['pg_stat_activity', 'select query from pg_stat_activity'],
    ['a pg_ name in a subquery', 'select (select count(*) from pg_roles) from orders'],
    ['a pg_ name hidden by a CTE of another scope', 'select * from (with pg_settings as (select 1) select 1) x, pg_settings'],
  ])('%s: refused as the catalogue', async (_label, sql) => {
    expect((await refusal(sql)).message).toMatch(/is not allowed: PostgreSQL's catalogue is out of reach/);
  });

  test.each(['pg_catalog.pg_class', 'information_schema.tables', 'information_schema.columns', 'pg_temp.x', 'public.api_keys'])(
    '%s: schema-qualified, refused',
    async (name) => {
      expect((await refusal(`select * from ${name}`)).message).toMatch(/name this database's tables without a schema/);
    },
  );

  test('a table of this database with a pg_ name (made before such names were refused) is its own', async () => {
    await expect(checkReadOnlySql('select * from pg_class', ['pg_class'])).resolves.toBeUndefined();
  });

  test('a CTE may take a pg_ name within its scope', async () => {
    await expect(checkReadOnlySql('with pg_class as (select 1 as n) select n from pg_class', TABLES)).resolves.toBeUndefined();
  });

  test.each(['session_user', 'current_catalog'])('%s (the login role, the database name) is refused', async (fn) => {
    expect((await refusal(`select ${fn}`)).message).toBe(`${fn.toUpperCase()} is not allowed in read-only queries.`);
  });

  test("current_user and current_schema (the database's own role and schema) stay allowed", async () => {
    await expect(checkReadOnlySql('select current_user, current_schema, current_date', TABLES)).resolves.toBeUndefined();
  });

  test("a cast to a type that a table's row type would shadow asks for pg_catalog", async () => {
    const tables = ['orders', 'date'];
    await expect(checkReadOnlySql("select '2024-01-01'::date, '{}'::date[] from orders", tables)).rejects.toThrow(
      'Type "date" is ambiguous: this database has a table named "date"; write pg_catalog.date.',
    );
    await expect(checkReadOnlySql("select '2024-01-01'::pg_catalog.date, cast(1 as integer) from date", tables)).resolves.toBeUndefined();
  });
});
