/**
 * Issue 27, item 3: read-only SQL once read PostgreSQL's catalogue (every workspace's table
 * and column names, row counts, the service's own tables, roles, settings) through a user
 * table named after a catalogue relation. Here A tries every spelling of the catalogue it can
 * think of, as table names, column names and in queries; B holds the data A is after. Every
 * answer to A is a 4xx naming none of B's tables or the service's, and B keeps working.
 */
import { abuseStackPerFile, expect4xx, type AbuseStack } from './kit';

const kit: AbuseStack = abuseStackPerFile({ config: { databaseQuery: { timeoutMs: 5_000, maxRows: 1_000, maxBytes: 1024 * 1024 } } });

/** Table names: each refused (reserved, or not a name at all). */
const TABLE_NAMES = [
  'pg_class',
  'pg_tables',
  'pg_attribute',
  'pg_stat_user_tables',
  'pg_stat_activity',
  'pg_roles',
  'pg_settings',
  'pg_namespace',
  'pg_database',
  'pg_',
  'PG_CLASS',
  'Pg_Class',
  'pg_catalog.pg_class',
  'information_schema.tables',
  '"pg_class"',
  'pg_class ',
  ' pg_class',
];

/** Queries over the catalogue, spelled every way the parser accepts. */
const QUERIES = [
  'select * from pg_class',
  'select * from PG_CLASS',
  'select * from "pg_class"',
  'select * from U&"pg\\005fclass"',
  'select * from pg_catalog.pg_class',
  'select * from pg_catalog . pg_class',
  'select * from pg_catalog/**/.pg_class',
  'select * from "pg_catalog"."pg_class"',
  'select * from information_schema.tables',
  'select * from information_schema.columns',
  'select * from (with pg_class as (select 1) select 1) s, pg_class',
  'with x as (select relname from pg_class) select * from x',
  "select (select string_agg(relname, ',') from pg_class)",
  'select * from pg_stat_user_tables',
  'select * from pg_stat_activity',
  'select * from pg_roles',
  'select * from pg_settings',
  'select * from pg_tables, lateral (select 1) l',
  'select * from pg_temp.pg_class',
  'select session_user, current_catalog',
  'select version()',
  "select pg_total_relation_size('public.api_keys')",
  "select 'public.api_keys'::regclass",
  'select 16384::oid::regclass',
  "select to_regclass('public.api_keys')",
  "select has_table_privilege('public.api_keys', 'select')",
];

let aDatabase: string;
let markers: string[];

test('A tries the catalogue as table and column names and in queries: every answer a 4xx that names nothing of B or of the service; B works meanwhile', async () => {
  const secret = await kit.request(kit.b, 'POST', '/api/v1/databases', {
    databaseName: 'payroll',
    tableName: 'salaries_b',
    columns: [{ name: 'employee_b', type: 'text' }],
    rows: [{ employee_b: 'Grace' }],
  });
  expect(secret.status).toBe(201);
  markers = ['salaries_b', 'employee_b', `udb_${secret.body.database.id.slice(4)}`, 'api_keys', 'user_databases', 'PostgreSQL 1'];
  const created = await kit.request(kit.a, 'POST', '/api/v1/databases', {
    databaseName: 'attack',
    tableName: 'notes',
    columns: [{ name: 'body', type: 'text' }],
    rows: [{ body: 'a' }],
  });
  expect(created.status).toBe(201);
  aDatabase = created.body.database.id;

  await kit.survives(async () => {
    for (const name of TABLE_NAMES) {
      const res = await kit.request(kit.a, 'POST', '/api/v1/databases', {
        databaseName: 'attack',
        tableName: name,
        columns: [{ name: 'body', type: 'text' }],
      });
      expect4xx(res, /Table name/);
      const column = await kit.request(kit.a, 'POST', '/api/v1/databases', {
        databaseName: 'attack',
        tableName: 'more',
        columns: [{ name, type: 'text' }],
      });
      expect4xx(column, /Column name/);
    }
    for (const sql of QUERIES) {
      const res = await kit.request(kit.a, 'POST', '/api/v1/databases/query', { databaseId: aDatabase, sql });
      expect4xx(res, /not allowed|Unknown table|syntax/);
      // A refusal may quote what A wrote (public.api_keys); nothing more.
      const answer = res.text.split('public.api_keys').join('');
      for (const m of markers) expect([sql, answer]).not.toEqual([sql, expect.stringContaining(m)]);
    }
    const listed = await kit.request(kit.a, 'GET', '/api/v1/databases');
    expect(listed.body.tables.map((t: { name: string }) => t.name)).toEqual(['notes']);
  });

  const mine = await kit.request(kit.b, 'POST', '/api/v1/databases/query', {
    databaseId: secret.body.database.id,
    sql: 'select employee_b from salaries_b',
  });
  expect(mine.body.rows).toEqual([{ employee_b: 'Grace' }]);
});
