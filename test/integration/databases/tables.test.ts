/** User databases: real schemas and tables, typed rows, validation naming the column, workspace scoping. */
import {
  addUserWithKey,
  http,
  useTestStack,
  type ApiError,
  type CreatedTable,
  type DatabaseList,
  type RowPage,
  type RowResult,
  type TableEnvelope,
} from '../../kit';

// Routes only: tables are read and written over HTTP with no workflow, so the stack has no worker.
const stack = useTestStack({ worker: false });

/** A row of a catalogue query; the columns are the query's own. */
type SqlRow = Record<string, unknown>;
const sql = <T = SqlRow>(text: string, params: unknown[] = []): Promise<T[]> =>
  stack.app.orm.em.fork().getConnection().execute(text, params);
/** A 400 naming the offending column. */
type ColumnError = ApiError & { column?: string };

const COLUMNS = [
  { name: 'name', type: 'text' },
  { name: 'age', type: 'number' },
  { name: 'stage', type: 'status' },
  { name: 'born', type: 'date' },
  { name: 'meta', type: 'json' },
];

async function createTable(tableName: string, extra: Record<string, unknown> = {}, token = stack.ws.token, databaseName = 'crm') {
  const res = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token,
    body: { databaseName, tableName, columns: COLUMNS, ...extra },
  });
  expect(res.status).toBe(201);
  return res.body;
}

test('databaseName alone creates a database: a real schema and a reader role holding USAGE on it only', async () => {
  const res = await http<{ database: CreatedTable['database'] }>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: { databaseName: 'Analytics' },
  });
  expect(res.status).toBe(201);
  expect(res.body).toEqual({
    database: {
      id: expect.stringMatching(/^udb_/),
      name: 'Analytics',
      tableCount: 0,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    },
  });
  const hex = res.body.database.id.slice(4);
  expect(await sql('select nspname from pg_namespace where nspname = ?', [`udb_${hex}`])).toHaveLength(1);
  const [role] = await sql('select rolcanlogin, rolsuper from pg_roles where rolname = ?', [`udbr_${hex}`]);
  expect(role).toEqual({ rolcanlogin: false, rolsuper: false });
  const [usage] = await sql(`select has_schema_privilege(?, ?, 'USAGE') as usage, has_schema_privilege(?, 'public', 'CREATE') as pub`, [
    `udbr_${hex}`,
    `udb_${hex}`,
    `udbr_${hex}`,
  ]);
  expect(usage).toEqual({ usage: true, pub: false });
  // The same name again (case-insensitively) is a conflict.
  const again = await http<ApiError>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: { databaseName: 'analytics' },
  });
  expect(again.status).toBe(409);
  expect(again.body.error).toMatch(/already exists/);
});

test('a table is a real table with typed columns and an identity rowIndex; initial rows are inserted with it', async () => {
  const body = await createTable('people', {
    rows: [
      { name: 'Ada', age: 36, stage: 'lead', born: '1815-12-10', meta: { tags: ['math'] } },
      { name: 'Alan', age: '41', meta: [1, 2] },
    ],
  });
  expect(body.rowsInserted).toBe(2);
  expect(body.table).toMatchObject({ name: 'people', databaseName: 'crm', columns: COLUMNS, rowCount: 2, trashed: false });
  const hex = body.database.id.slice(4);
  const cols = await sql(
    `select column_name, data_type, is_identity from information_schema.columns where table_schema = ? and table_name = 'people' order by ordinal_position`,
    [`udb_${hex}`],
  );
  expect(cols).toEqual([
    { column_name: 'rowIndex', data_type: 'integer', is_identity: 'YES' },
    { column_name: 'name', data_type: 'text', is_identity: 'NO' },
    { column_name: 'age', data_type: 'double precision', is_identity: 'NO' },
    { column_name: 'stage', data_type: 'text', is_identity: 'NO' },
    { column_name: 'born', data_type: 'timestamp with time zone', is_identity: 'NO' },
    { column_name: 'meta', data_type: 'jsonb', is_identity: 'NO' },
  ]);
  const [grant] = await sql(`select has_table_privilege(?, ?, 'SELECT') as sel, has_table_privilege(?, ?, 'INSERT') as ins`, [
    `udbr_${hex}`,
    `udb_${hex}.people`,
    `udbr_${hex}`,
    `udb_${hex}.people`,
  ]);
  expect(grant).toEqual({ sel: true, ins: false });

  const rows = await http<RowPage>(stack.app, 'GET', `/api/v1/databases/${body.table.id}/rows`, { token: stack.ws.token });
  expect(rows.status).toBe(200);
  expect(rows.body.rows).toEqual([
    { rowIndex: 1, values: { name: 'Ada', age: 36, stage: 'lead', born: '1815-12-10T00:00:00.000Z', meta: { tags: ['math'] } } },
    { rowIndex: 2, values: { name: 'Alan', age: 41, stage: null, born: null, meta: [1, 2] } },
  ]);
  expect(rows.body.pagination).toEqual({ limit: 100, offset: 0, returned: 2, total: 2 });

  const list = await http<DatabaseList>(stack.app, 'GET', '/api/v1/databases', { token: stack.ws.token });
  expect(list.body.tables.map((t) => t.id)).toContain(body.table.id);
  expect(list.body.databases.find((d) => d.name === 'crm')).toMatchObject({ tableCount: expect.any(Number) });
});

test('rows: insert, partial update (absent and null cells untouched), delete, pagination', async () => {
  const { table } = await createTable('rows_crud');
  const base = `/api/v1/databases/${table.id}/rows`;
  for (let i = 1; i <= 5; i++) {
    const res = await http<RowResult>(stack.app, 'POST', base, {
      token: stack.ws.token,
      body: { values: { name: `n${i}`, age: i, meta: { i } } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      tableId: table.id,
      row: { rowIndex: i, values: { name: `n${i}`, age: i, stage: null, born: null, meta: { i } } },
    });
  }
  const patched = await http<RowResult>(stack.app, 'PATCH', base, {
    token: stack.ws.token,
    body: { rowIndex: 2, values: { age: 20, name: null, born: 0 } },
  });
  expect(patched.status).toBe(200);
  expect(patched.body.row).toEqual({
    rowIndex: 2,
    values: { name: 'n2', age: 20, stage: null, born: '1970-01-01T00:00:00.000Z', meta: { i: 2 } },
  });
  const deleted = await http(stack.app, 'DELETE', base, { token: stack.ws.token, body: { rowIndex: 3 } });
  expect(deleted.body).toEqual({ tableId: table.id, rowIndex: 3, deleted: true });
  expect((await http(stack.app, 'DELETE', base, { token: stack.ws.token, body: { rowIndex: 3 } })).status).toBe(404);
  expect((await http(stack.app, 'PATCH', base, { token: stack.ws.token, body: { rowIndex: 99, values: { age: 1 } } })).status).toBe(404);

  const page = await http<RowPage>(stack.app, 'GET', `${base}?limit=2&offset=1`, { token: stack.ws.token });
  expect(page.body.rows.map((r) => r.rowIndex)).toEqual([2, 4]);
  expect(page.body.pagination).toEqual({ limit: 2, offset: 1, returned: 2, total: 4 });
  const clamped = await http<RowPage>(stack.app, 'GET', `${base}?limit=5000`, { token: stack.ws.token });
  expect(clamped.body.pagination.limit).toBe(1000);
  expect((await http(stack.app, 'GET', `${base}?offset=-1`, { token: stack.ws.token })).status).toBe(400);
  // New rows keep counting: rowIndex is a stable identity, never reused.
  const next = await http<RowResult>(stack.app, 'POST', base, { token: stack.ws.token, body: { values: {} } });
  expect(next.body.row.rowIndex).toBe(6);
});

describe('every invalid create, insert or update is a 400 naming the column, and nothing is half-written', () => {
  const badValues: Array<[string, Record<string, unknown>, string]> = [
    ['unknown column', { nope: 1 }, 'nope'],
    ['text takes no boolean', { name: true }, 'name'],
    ['text takes no object', { name: { a: 1 } }, 'name'],
    ['text takes no null on insert', { name: null }, 'name'],
    ['number takes no word', { age: 'old' }, 'age'],
    ['number takes no array', { age: [1] }, 'age'],
    ['status takes no array', { stage: ['a'] }, 'stage'],
    ['date takes no word', { born: 'yesterday' }, 'born'],
    ['date takes no impossible date', { born: '2024-13-45' }, 'born'],
  ];
  test.each(badValues)('insert: %s', async (_label, values, column) => {
    const { table } = await createTable(`bad_${column}_${Math.random().toString(36).slice(2, 8)}`);
    const res = await http<ColumnError>(stack.app, 'POST', `/api/v1/databases/${table.id}/rows`, {
      token: stack.ws.token,
      body: { values: { name: 'ok', ...values } },
    });
    expect(res.status).toBe(400);
    expect(res.body.column).toBe(column);
    expect(res.body.error).toContain(`"${column}"`);
    expect(
      (await http<RowPage>(stack.app, 'GET', `/api/v1/databases/${table.id}/rows`, { token: stack.ws.token })).body.pagination.total,
    ).toBe(0);
  });

  test('update: a bad cell changes no cell of the row', async () => {
    const { table } = await createTable('bad_update', { rows: [{ name: 'keep', age: 1 }] });
    const res = await http<ColumnError>(stack.app, 'PATCH', `/api/v1/databases/${table.id}/rows`, {
      token: stack.ws.token,
      body: { rowIndex: 1, values: { name: 'changed', age: 'x' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.column).toBe('age');
    const rows = await http<RowPage>(stack.app, 'GET', `/api/v1/databases/${table.id}/rows`, { token: stack.ws.token });
    expect(rows.body.rows[0].values).toMatchObject({ name: 'keep', age: 1 });
  });

  test('create: a bad initial row creates neither the table nor the database', async () => {
    const res = await http<ColumnError>(stack.app, 'POST', '/api/v1/databases', {
      token: stack.ws.token,
      body: { databaseName: 'never_created', tableName: 't', columns: COLUMNS, rows: [{ name: 'fine' }, { age: 'NaN' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ column: 'age', error: expect.stringContaining('rows[1]') });
    const list = await http<DatabaseList>(stack.app, 'GET', '/api/v1/databases', { token: stack.ws.token });
    expect(list.body.databases.map((d) => d.name)).not.toContain('never_created');
  });

  test.each([
    ['bad column name', [{ name: 'Bad Name', type: 'text' }], 'Bad Name'],
    ['unknown type', [{ name: 'x', type: 'blob' }], 'x'],
    [
      'duplicate',
      [
        { name: 'x', type: 'text' },
        { name: 'x', type: 'number' },
      ],
      'x',
    ],
    ['not an object', ['x'], '#1'],
  ])('create: %s', async (_label, columns, column) => {
    const before = (await sql<{ n: number }>('select count(*)::int as n from user_tables'))[0].n;
    const res = await http<ColumnError>(stack.app, 'POST', '/api/v1/databases', {
      token: stack.ws.token,
      body: { databaseName: 'crm', tableName: 'cols_bad', columns },
    });
    expect(res.status).toBe(400);
    expect(res.body.column).toBe(column);
    expect((await sql<{ n: number }>('select count(*)::int as n from user_tables'))[0].n).toBe(before);
  });

  test('create: bad table names, missing databaseName, duplicate tables', async () => {
    for (const tableName of ['Upper', '1st', 'has space', 'x'.repeat(64), 'semi;colon']) {
      const res = await http(stack.app, 'POST', '/api/v1/databases', {
        token: stack.ws.token,
        body: { databaseName: 'crm', tableName, columns: [] },
      });
      expect(res.status).toBe(400);
    }
    expect((await http(stack.app, 'POST', '/api/v1/databases', { token: stack.ws.token, body: { tableName: 'x' } })).status).toBe(400);
    await createTable('dupe');
    const dupe = await http(stack.app, 'POST', '/api/v1/databases', {
      token: stack.ws.token,
      body: { databaseName: 'crm', tableName: 'dupe', columns: [] },
    });
    expect(dupe.status).toBe(409);
  });

  test('add column: bad definitions and bad defaults change nothing', async () => {
    const { table } = await createTable('add_bad', { rows: [{ name: 'a' }] });
    for (const body of [
      { column: { name: 'age', type: 'number' } },
      { column: { name: 'n2', type: 'number' }, defaultValue: 'abc' },
      { column: { name: 'X', type: 'text' } },
    ]) {
      const res = await http<ColumnError>(stack.app, 'PATCH', `/api/v1/databases/${table.id}`, { token: stack.ws.token, body });
      expect(res.status).toBe(400);
      expect(res.body.column).toBeDefined();
    }
    const rows = await http<RowPage>(stack.app, 'GET', `/api/v1/databases/${table.id}/rows`, { token: stack.ws.token });
    expect(rows.body.table.columns).toEqual(COLUMNS);
  });
});

test('PATCH table: add a column filling existing rows; trash and restore', async () => {
  const { table, database } = await createTable('patchy', { rows: [{ name: 'a' }, { name: 'b' }] });
  const added = await http<TableEnvelope>(stack.app, 'PATCH', `/api/v1/databases/${table.id}`, {
    token: stack.ws.token,
    body: { column: { name: 'score', type: 'number' }, defaultValue: '7' },
  });
  expect(added.status).toBe(200);
  expect(added.body.table.columns.at(-1)).toEqual({ name: 'score', type: 'number' });
  const rows = await http<RowPage>(stack.app, 'GET', `/api/v1/databases/${table.id}/rows`, { token: stack.ws.token });
  expect(rows.body.rows.map((r) => r.values.score)).toEqual([7, 7]);

  const trashed = await http<TableEnvelope>(stack.app, 'PATCH', `/api/v1/databases/${table.id}`, {
    token: stack.ws.token,
    body: { trashed: true },
  });
  expect(trashed.body.table.trashed).toBe(true);
  expect((await http(stack.app, 'GET', `/api/v1/databases/${table.id}/rows`, { token: stack.ws.token })).status).toBe(404);
  expect(
    (await http<DatabaseList>(stack.app, 'GET', '/api/v1/databases', { token: stack.ws.token })).body.tables.map((t) => t.id),
  ).not.toContain(table.id);
  const hex = database.id.slice(4);
  expect(
    await sql(`select 1 from information_schema.tables where table_schema = ? and table_name = 'patchy'`, [`udb_${hex}`]),
  ).toHaveLength(0);
  // The name is free while trashed; restoring then conflicts.
  const reuse = await createTable('patchy');
  expect(
    (await http(stack.app, 'PATCH', `/api/v1/databases/${table.id}`, { token: stack.ws.token, body: { trashed: false } })).status,
  ).toBe(409);
  await http(stack.app, 'PATCH', `/api/v1/databases/${reuse.table.id}`, { token: stack.ws.token, body: { trashed: true } });
  const restored = await http<TableEnvelope>(stack.app, 'PATCH', `/api/v1/databases/${table.id}`, {
    token: stack.ws.token,
    body: { trashed: false },
  });
  expect(restored.status).toBe(200);
  expect(restored.body.table).toMatchObject({ trashed: false, rowCount: 2 });
  const [grant] = await sql<{ sel: boolean }>(`select has_table_privilege(?, ?, 'SELECT') as sel`, [`udbr_${hex}`, `udb_${hex}.patchy`]);
  expect(grant.sel).toBe(true);
  expect(
    (
      await http(stack.app, 'PATCH', `/api/v1/databases/${table.id}`, {
        token: stack.ws.token,
        body: { trashed: true, column: { name: 'x', type: 'text' } },
      })
    ).status,
  ).toBe(400);
});

test("another workspace's key gets 404 on every table route, and nothing changes", async () => {
  const { table } = await createTable('private', { rows: [{ name: 'secret', age: 1 }] });
  const other = await stack.workspace('Other');
  const base = `/api/v1/databases/${table.id}`;
  const attempts: Array<[string, string, unknown?]> = [
    ['PATCH', base, { trashed: true }],
    ['PATCH', base, { column: { name: 'x', type: 'text' } }],
    ['GET', `${base}/rows`],
    ['POST', `${base}/rows`, { values: { name: 'intruder' } }],
    ['PATCH', `${base}/rows`, { rowIndex: 1, values: { name: 'intruder' } }],
    ['DELETE', `${base}/rows`, { rowIndex: 1 }],
  ];
  for (const [method, path, body] of attempts) {
    const res = await http(stack.app, method, path, { token: other.token, body });
    expect([method, path, res.status, res.body]).toEqual([method, path, 404, { error: expect.stringMatching(/not found/) }]);
  }
  expect((await http(stack.app, 'GET', '/api/v1/databases', { token: other.token })).body).toEqual({ databases: [], tables: [] });
  const rows = await http<RowPage>(stack.app, 'GET', `${base}/rows`, { token: stack.ws.token });
  expect(rows.body.table).toMatchObject({ trashed: false, columns: COLUMNS });
  expect(rows.body.rows).toEqual([{ rowIndex: 1, values: expect.objectContaining({ name: 'secret', age: 1 }) }]);
  // Same database name in another workspace is its own database.
  const theirs = await http(stack.app, 'POST', '/api/v1/databases', {
    token: other.token,
    body: { databaseName: 'crm', tableName: 'private', columns: [] },
  });
  expect(theirs.status).toBe(201);
});

test('viewers read but do not write; non-workspace keys are refused', async () => {
  const { table } = await createTable('viewer_t');
  const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
  expect((await http(stack.app, 'GET', `/api/v1/databases/${table.id}/rows`, { token: viewer.token })).status).toBe(200);
  expect((await http(stack.app, 'POST', `/api/v1/databases/${table.id}/rows`, { token: viewer.token, body: { values: {} } })).status).toBe(
    403,
  );
  const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
  expect((await http(stack.app, 'GET', '/api/v1/databases', { token: personal.token })).status).toBe(403);
  expect((await http(stack.app, 'GET', '/api/v1/databases')).status).toBe(401);
});
