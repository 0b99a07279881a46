/**
 * Issue 27, item 3: read-only SQL sees only its own schema. Workspace B once created a table
 * named after a catalogue relation (pg_tables, pg_class, pg_stat_activity, …) and queried it:
 * PostgreSQL searched pg_catalog before the database's schema, so B read workspace A's table
 * and column names, row counts, the service's own tables, roles and settings. Now such names
 * are refused, a table that has one already is the table itself, and the catalogue is out of
 * the query's reach by any name. The reader roles' catalogue grants (revoked at provisioning):
 * ownerRole.test.ts.
 */
import { newId } from '../../../services/kernel/ids';
import { ident } from '../../../services/databases/columns';
import {
  http,
  useTestStack,
  type ApiError,
  type CreatedTable,
  type DatabaseList,
  type QueryAnswer,
  type WorkspaceFixture,
} from '../../kit';

let b: WorkspaceFixture;
let aSchema: string;
let bDatabaseId: string;
let bSchema: string;

/** Words that name workspace A's data or the service's own tables: none may reach B. */
let markers: string[];

const CATALOGUE_TABLES = [
  'pg_tables',
  'pg_class',
  'pg_attribute',
  'pg_stat_user_tables',
  'pg_statio_user_tables',
  'pg_stat_activity',
  'pg_roles',
  'pg_settings',
  'pg_namespace',
  'pg_database',
  'pg_type',
  'pg_views',
  'pg_indexes',
];
const QUALIFIED = [
  'pg_catalog.pg_class',
  'pg_catalog.pg_tables',
  'information_schema.tables',
  'information_schema.columns',
  'information_schema.schemata',
  'public.api_keys',
];

// Routes only (no worker): workspace A is the stack's own workspace.
const stack = useTestStack({
  worker: false,
  workspaceName: 'A',
  config: { databaseQuery: { timeoutMs: 2_000, maxRows: 1000, maxBytes: 1024 * 1024 } },
});
beforeAll(async () => {
  b = await stack.workspace('B');
  const secret = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: {
      databaseName: 'crm',
      tableName: 'secret_customers',
      columns: [{ name: 'ssn_hint', type: 'text' }],
      rows: [{ ssn_hint: 'A-only' }],
    },
  });
  expect(secret.status).toBe(201);
  aSchema = `udb_${secret.body.database.id.slice(4)}`;
  const notes = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: b.token,
    body: { databaseName: 'notes', tableName: 'notes', columns: [{ name: 'body', type: 'text' }], rows: [{ body: 'B' }] },
  });
  expect(notes.status).toBe(201);
  bDatabaseId = notes.body.database.id;
  bSchema = `udb_${bDatabaseId.slice(4)}`;
  markers = ['secret_customers', 'ssn_hint', aSchema, 'api_keys', 'workspaces', 'user_databases', 'PostgreSQL 1'];
});

const query = (sql: string, databaseId = bDatabaseId) =>
  http<QueryAnswer>(stack.app, 'POST', '/api/v1/databases/query', { token: b.token, body: { databaseId, sql } });

function revealsNothing(text: string): void {
  for (const m of markers) expect(text).not.toContain(m);
}

describe('a catalogue name as a user table or column is refused', () => {
  test.each(CATALOGUE_TABLES)('table %s: 400 naming the rule, and nothing created', async (name) => {
    const res = await http<ApiError>(stack.app, 'POST', '/api/v1/databases', {
      token: b.token,
      body: { databaseName: 'notes', tableName: name, columns: [{ name: 'body', type: 'text' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: `Table name "${name}" is reserved: names starting with "pg_" belong to PostgreSQL's catalogue.`,
      field: 'tableName',
    });
    const listed = await http<DatabaseList>(stack.app, 'GET', '/api/v1/databases', { token: b.token });
    expect(listed.body.tables.map((t) => t.name)).toEqual(['notes']);
  });

  test.each(['pg_class.csv', 'pg_stat_activity.csv'])('CSV import whose file name makes %s: 400', async (fileName) => {
    const form = new FormData();
    form.append('databaseId', bDatabaseId);
    form.append('file', new Blob(['body\nx\n'], { type: 'text/csv' }), fileName);
    const res = await fetch(`${stack.app.url}/api/v1/databases/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${b.token}` },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/is reserved: names starting with "pg_"/);
  });

  test.each(['pg_relname', 'xmin', 'ctid'])('column %s: 400 naming the column, on create and on add', async (name) => {
    const created = await http<ApiError>(stack.app, 'POST', '/api/v1/databases', {
      token: b.token,
      body: { databaseName: 'notes', tableName: 'more', columns: [{ name, type: 'text' }] },
    });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatch(new RegExp(`^Column name "${name}" is reserved`));
    expect(created.body.column).toBe(name);
    const tables = (await http<DatabaseList>(stack.app, 'GET', '/api/v1/databases', { token: b.token })).body.tables;
    const added = await http<ApiError>(stack.app, 'PATCH', `/api/v1/databases/${tables.find((t) => t.name === 'notes')!.id}`, {
      token: b.token,
      body: { column: { name, type: 'text' } },
    });
    expect(added.status).toBe(400);
    expect(added.body.error).toMatch(new RegExp(`^Column name "${name}" is reserved`));
  });
});

describe("workspace B's queries never read the catalogue", () => {
  test.each([...CATALOGUE_TABLES, ...QUALIFIED])('select * from %s: 400, nothing of A or of the service', async (name) => {
    const res = await query(`select * from ${name}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('sql_not_allowed');
    // A refusal quotes the name it was given (public.api_keys); nothing else.
    revealsNothing(res.text.replaceAll(name, ''));
  });

  test.each([
    'select session_user',
    'select current_catalog',
    'select version()',
    "select current_setting('server_version')",
    "select pg_total_relation_size('public.api_keys')",
  ])('%s: 400', async (sql) => {
    const res = await query(sql);
    expect(res.status).toBe(400);
    revealsNothing(res.text);
  });

  test('a table\'s row type never shadows a type silently: ::date asks for pg_catalog.date when the database has a table "date"', async () => {
    const created = await http(stack.app, 'POST', '/api/v1/databases', {
      token: b.token,
      body: { databaseName: 'notes', tableName: 'date', columns: [{ name: 'day', type: 'date' }] },
    });
    expect(created.status).toBe(201);
    const bare = await query(`select '2024-02-03'::date as d`);
    expect(bare.status).toBe(400);
    expect(bare.body.error).toBe('Type "date" is ambiguous: this database has a table named "date"; write pg_catalog.date.');
    const qualified = await query(`select '2024-02-03'::pg_catalog.date as d, count(*) as n from date`);
    expect(qualified.body.rows).toEqual([{ d: '2024-02-03', n: 0 }]);
  });
});

describe('a table that already bears a catalogue name (made before such names were refused) is that table', () => {
  // Made as the service made them then, with the SQL of tables.ts's createTable.
  async function legacyTable(name: string): Promise<void> {
    const conn = stack.app.orm.em.fork().getConnection();
    const [{ workspace_id }] = await conn.execute<Array<{ workspace_id: string }>>('select workspace_id from user_databases where id = ?', [
      bDatabaseId,
    ]);
    await conn.execute(
      `insert into user_tables (id, workspace_id, database_id, name, physical_name, columns, trashed, created_at, updated_at) values (?, ?, ?, ?, ?, ?, false, now(), now())`,
      [newId('tbl'), workspace_id, bDatabaseId, name, name, JSON.stringify([{ name: 'body', type: 'text' }])],
    );
    const table = `${ident(bSchema)}.${ident(name)}`;
    await conn.execute(`create table ${table} ("rowIndex" integer generated always as identity primary key, "body" text)`);
    await conn.execute(`grant select on ${table} to ${ident(`udbr_${bDatabaseId.slice(4)}`)}`);
    await conn.execute(`insert into ${table} (body) values ('only B''s own row')`);
  }
  beforeAll(async () => {
    for (const name of CATALOGUE_TABLES) await legacyTable(name);
  });

  test.each(CATALOGUE_TABLES)('select * from %s: B reads its own row, nothing of A or of the service', async (name) => {
    const res = await query(`select * from ${name}`);
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([{ rowIndex: 1, body: "only B's own row" }]);
    revealsNothing(res.text);
  });

  test('joined and counted, still its own', async () => {
    const res = await query('select count(*) as n from pg_class c join pg_attribute a on true join pg_stat_user_tables s on true');
    expect(res.body.rows).toEqual([{ n: 1 }]);
  });

  test('A keeps reading its own table meanwhile', async () => {
    const tables = (await http<DatabaseList>(stack.app, 'GET', '/api/v1/databases', { token: stack.ws.token })).body.databases;
    const res = await http<QueryAnswer>(stack.app, 'POST', '/api/v1/databases/query', {
      token: stack.ws.token,
      body: { databaseId: tables[0].id, sql: 'select ssn_hint from secret_customers' },
    });
    expect(res.body.rows).toEqual([{ ssn_hint: 'A-only' }]);
  });
});
