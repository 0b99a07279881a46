/** CSV import (multipart, busboy limits, csv-parse, inference, delimiters, 413/415/422) and streamed export. */
// Routes only: CSV import and export run no workflow, so the stack has no worker.
import {
  createWorkspace,
  http,
  useTestStack,
  type ApiError,
  type CreatedTable,
  type DatabaseList,
  type ImportResult,
  type Refusable,
  type RowPage,
  type TableRow,
} from '../../kit';

const stack = useTestStack({ worker: false });

/** An import's answer, or its refusal (`{ error, code?, column?, line? }`). */
type UploadAnswer = Refusable<ImportResult> & { column?: string; line?: number };
const valuesOf = (page: RowPage) => page.rows.map((r: TableRow) => r.values);

async function upload(
  content: string | Buffer,
  fields: Record<string, string> = {},
  opts: { fileName?: string; type?: string; token?: string } = {},
) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([content], { type: opts.type ?? 'text/csv' }), opts.fileName ?? 'data.csv');
  const res = await fetch(`${stack.app.url}/api/v1/databases/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.token ?? stack.ws.token}` },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as UploadAnswer };
}
const rows = async (tableId: string, token = stack.ws.token) =>
  (await http<RowPage>(stack.app, 'GET', `/api/v1/databases/${tableId}/rows?limit=1000`, { token })).body;

test('a CSV with a header becomes a table with inferred types; the table is named after the cleaned file name', async () => {
  const csv = 'Name,Age,Joined On,Meta,Notes\nAda,36,2024-01-05,"{""a"":1}",first\nAlan,41.5,2024-02-06T10:00:00Z,[1],\n';
  const res = await upload(csv, { databaseName: 'imports' }, { fileName: 'My Customers (2024).csv' });
  expect(res.status).toBe(201);
  expect(res.body.table).toMatchObject({
    name: 'my_customers_2024',
    databaseName: 'imports',
    rowCount: 2,
    columns: [
      { name: 'name', type: 'text' },
      { name: 'age', type: 'number' },
      { name: 'joined_on', type: 'date' },
      { name: 'meta', type: 'json' },
      { name: 'notes', type: 'text' },
    ],
  });
  expect(res.body.stats).toEqual({
    rowsInserted: 2,
    columns: 5,
    bytes: Buffer.byteLength(csv),
    delimiter: ',',
    hasHeader: true,
    createdTable: true,
    createdDatabase: true,
    inferredTypes: { name: 'text', age: 'number', joined_on: 'date', meta: 'json', notes: 'text' },
  });
  expect(res.body.rowsUrl).toBe(`${stack.app.url}/api/v1/databases/${res.body.table.id}/rows`);
  const got = await rows(res.body.table.id);
  expect(valuesOf(got)).toEqual([
    { name: 'Ada', age: 36, joined_on: '2024-01-05T00:00:00.000Z', meta: { a: 1 }, notes: 'first' },
    { name: 'Alan', age: 41.5, joined_on: '2024-02-06T10:00:00.000Z', meta: [1], notes: null },
  ]);
});

test.each([
  ['semicolon', 'a;b;c\n1;"x;y";3\n4;5;6\n', ';'],
  ['tab', 'a\tb\tc\n1\t2\t3\n', '\t'],
  ['pipe', 'a|b|c\n1|2,5|3\n', '|'],
  ['comma beats a stray semicolon', 'a,b,c\n1,x;y,3\n', ','],
])('the delimiter is detected: %s', async (_label, csv, delimiter) => {
  const res = await upload(csv, { databaseName: 'imports', tableName: `delim_${Math.random().toString(36).slice(2, 8)}` });
  expect(res.status).toBe(201);
  expect(res.body.stats.delimiter).toBe(delimiter);
  expect(res.body.table.columns.map((c) => c.name)).toEqual(['a', 'b', 'c']);
});

test('hasHeader=no names columns column_N; an explicit delimiter and column type overrides win', async () => {
  const res = await upload('1;2\n3;4\n', {
    databaseName: 'imports',
    tableName: 'noheader',
    hasHeader: 'no',
    delimiter: ';',
    columns: JSON.stringify([{ name: 'column_2', type: 'text' }]),
  });
  expect(res.status).toBe(201);
  expect(res.body.table.columns).toEqual([
    { name: 'column_1', type: 'number' },
    { name: 'column_2', type: 'text' },
  ]);
  expect(valuesOf(await rows(res.body.table.id))).toEqual([
    { column_1: 1, column_2: '2' },
    { column_1: 3, column_2: '4' },
  ]);
});

test('importing into an existing table by name appends, checking cells against its columns', async () => {
  const first = await upload('id,label\n1,a\n', { databaseName: 'imports', tableName: 'appendable' });
  const dbId = first.body.table.databaseId;
  const second = await upload('id,label\n2,b\n3,c\n', { databaseId: dbId, tableName: 'appendable' });
  expect(second.status).toBe(201);
  expect(second.body.table.id).toBe(first.body.table.id);
  expect(second.body.stats).toMatchObject({ rowsInserted: 2, createdTable: false, createdDatabase: false });
  expect((await rows(first.body.table.id)).pagination.total).toBe(3);
  const bad = await upload('id,label\nnot-a-number,d\n', { databaseId: dbId, tableName: 'appendable' });
  expect(bad.status).toBe(400);
  expect(bad.body).toMatchObject({ column: 'id', error: expect.stringContaining('Line 2') });
  const unknown = await upload('id,colour\n4,red\n', { databaseId: dbId, tableName: 'appendable' });
  expect(unknown.status).toBe(400);
  expect(unknown.body.column).toBe('colour');
  expect((await rows(first.body.table.id)).pagination.total).toBe(3);
});

test('malformed CSV is a 422 naming the line, and nothing is created', async () => {
  const before = (await http<DatabaseList>(stack.app, 'GET', '/api/v1/databases', { token: stack.ws.token })).body.tables.length;
  const ragged = await upload('a,b\n1,2\n3\n', { databaseName: 'imports', tableName: 'ragged' });
  expect(ragged.status).toBe(422);
  expect(ragged.body).toMatchObject({ code: 'csv_malformed', line: 3, error: expect.stringMatching(/^Malformed CSV at line 3/) });
  const quote = await upload('a,b\n1,"open\n', { databaseName: 'imports', tableName: 'quote' });
  expect(quote.status).toBe(422);
  expect(quote.body.code).toBe('csv_malformed');
  expect((await http<DatabaseList>(stack.app, 'GET', '/api/v1/databases', { token: stack.ws.token })).body.tables.length).toBe(before);
});

test('non-CSV files and bodies are 415; a missing file, database or bad fields are 400', async () => {
  expect((await upload('%PDF-1.4', { databaseName: 'imports' }, { fileName: 'doc.pdf', type: 'application/pdf' })).status).toBe(415);
  // A CSV MIME type without a .csv name is accepted.
  expect((await upload('a\n1\n', { databaseName: 'imports', tableName: 'by_mime' }, { fileName: 'export', type: 'text/csv' })).status).toBe(
    201,
  );
  const json = await http<ApiError>(stack.app, 'POST', '/api/v1/databases/import', { token: stack.ws.token, body: { databaseName: 'x' } });
  expect(json.status).toBe(415);
  const form = new FormData();
  form.append('databaseName', 'imports');
  const noFile = await fetch(`${stack.app.url}/api/v1/databases/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.ws.token}` },
    body: form,
  });
  expect(noFile.status).toBe(400);
  expect((await upload('a\n1\n')).status).toBe(400);
  expect((await upload('a\n1\n', { databaseName: 'imports', hasHeader: 'maybe' })).status).toBe(400);
  expect((await upload('a\n1\n', { databaseName: 'imports', columns: '{not json' })).status).toBe(400);
  expect((await upload('a\n1\n', { databaseName: 'imports', surprise: '1' })).status).toBe(400);
});

test('over 5 MB is a 413: refused from Content-Length before reading, and by the parser limit while streaming', async () => {
  const big = Buffer.alloc(6 * 1024 * 1024, 'a,b\n');
  const declared = await upload(big, { databaseName: 'imports', tableName: 'too_big' });
  expect(declared.status).toBe(413);
  expect(declared.body.error).toMatch(/5 MB/);
  // Just over the file limit, but under the Content-Length allowance: busboy's fileSize limit answers.
  const edge = await upload(Buffer.alloc(5 * 1024 * 1024 + 10, 'a,b\n'), { databaseName: 'imports', tableName: 'edge' });
  expect(edge.status).toBe(413);
  const list = await http<DatabaseList>(stack.app, 'GET', '/api/v1/databases', { token: stack.ws.token });
  expect(list.body.tables.map((t) => t.name)).not.toContain('too_big');
  expect(list.body.tables.map((t) => t.name)).not.toContain('edge');
});

test('export streams JSON (structure kept) and CSV (json cells as compact JSON) as attachments', async () => {
  const created = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: {
      databaseName: 'exports',
      tableName: 'things',
      columns: [
        { name: 'label', type: 'text' },
        { name: 'n', type: 'number' },
        { name: 'meta', type: 'json' },
      ],
      rows: [{ label: 'a, "quoted"', n: 1, meta: { deep: [1, { x: 'y' }] } }, { label: 'b' }],
    },
  });
  const id = created.body.table.id;
  const json = await fetch(`${stack.app.url}/api/v1/databases/${id}/export`, { headers: { authorization: `Bearer ${stack.ws.token}` } });
  expect(json.status).toBe(200);
  expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(json.headers.get('content-disposition')).toBe('attachment; filename="things.json"');
  expect(JSON.parse(await json.text())).toEqual([
    { label: 'a, "quoted"', n: 1, meta: { deep: [1, { x: 'y' }] } },
    { label: 'b', n: null, meta: null },
  ]);
  const csv = await fetch(`${stack.app.url}/api/v1/databases/${id}/export?format=csv`, {
    headers: { authorization: `Bearer ${stack.ws.token}` },
  });
  expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
  expect(csv.headers.get('content-disposition')).toBe('attachment; filename="things.csv"');
  expect(await csv.text()).toBe('label,n,meta\r\n"a, ""quoted""",1,"{""deep"":[1,{""x"":""y""}]}"\r\nb,,\r\n');
  // A round trip: the CSV export imports back with the same types.
  const back = await upload(
    await (
      await fetch(`${stack.app.url}/api/v1/databases/${id}/export?format=csv`, { headers: { authorization: `Bearer ${stack.ws.token}` } })
    ).text(),
    { databaseName: 'exports', tableName: 'things_again' },
  );
  expect(back.body.table.columns).toEqual(created.body.table.columns);
  expect((await http(stack.app, 'GET', `/api/v1/databases/${id}/export?format=xml`, { token: stack.ws.token })).status).toBe(400);
  const empty = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: { databaseName: 'exports', tableName: 'empty', columns: [{ name: 'a', type: 'text' }] },
  });
  expect((await http(stack.app, 'GET', `/api/v1/databases/${empty.body.table.id}/export`, { token: stack.ws.token })).body).toEqual([]);
});

test('CSV export neutralizes formula cells in text columns (OWASP), keeps typed values, and imports back to the same values', async () => {
  const labels = [
    '=HYPERLINK("http://x","y")',
    '+1 555 0100',
    '-2+3',
    '@SUM(A1)',
    '\tcmd',
    '\rcmd',
    "'=already quoted",
    "'plain",
    'safe',
    '-5',
  ];
  const created = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: {
      databaseName: 'exports',
      tableName: 'formulas',
      columns: [
        { name: 'label', type: 'text' },
        { name: 'n', type: 'number' },
        { name: 'meta', type: 'json' },
      ],
      rows: labels.map((label, i) => ({ label, n: -i, meta: i === 0 ? { f: '=1+1' } : null })),
    },
  });
  expect(created.status).toBe(201);
  const id = created.body.table.id;
  const text = await (
    await fetch(`${stack.app.url}/api/v1/databases/${id}/export?format=csv`, { headers: { authorization: `Bearer ${stack.ws.token}` } })
  ).text();
  const lines = text.split('\r\n');
  expect(lines.slice(1, 5)).toEqual([
    '"\'=HYPERLINK(""http://x"",""y"")",0,"{""f"":""=1+1""}"',
    "'+1 555 0100,-1,",
    "'-2+3,-2,",
    "'@SUM(A1),-3,",
  ]);
  expect(text).toContain("'\tcmd,-4,");
  expect(text).toContain(`"'\rcmd",-5,`);
  expect(text).toContain("''=already quoted,-6,");
  expect(text).toContain("\r\n'plain,-7,\r\nsafe,-8,\r\n'-5,-9,\r\n");
  const back = await upload(text, { databaseName: 'exports', tableName: 'formulas_again' });
  expect(back.status).toBe(201);
  expect(back.body.table.columns).toEqual(created.body.table.columns);
  expect(valuesOf(await rows(back.body.table.id))).toEqual(valuesOf(await rows(id)));
});

test('export streams many rows in batches', async () => {
  const rowsIn = Array.from({ length: 2500 }, (_, i) => ({ n: i }));
  const created = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: { databaseName: 'exports', tableName: 'many', columns: [{ name: 'n', type: 'number' }], rows: rowsIn },
  });
  const res = await http(stack.app, 'GET', `/api/v1/databases/${created.body.table.id}/export`, { token: stack.ws.token });
  expect(res.body).toEqual(rowsIn);
});

test("another workspace cannot export, or import into, this workspace's tables", async () => {
  const mine = await upload('a\n1\n', { databaseName: 'imports', tableName: 'mine' });
  const other = await createWorkspace(stack.app, 'Other');
  expect((await http(stack.app, 'GET', `/api/v1/databases/${mine.body.table.id}/export`, { token: other.token })).status).toBe(404);
  const intrude = await upload('a\n2\n', { databaseId: mine.body.table.databaseId, tableName: 'mine' }, { token: other.token });
  expect(intrude.status).toBe(404);
  expect((await rows(mine.body.table.id)).pagination.total).toBe(1);
});

test('a UTF-8 file name is read as UTF-8: "résumé – 東京.csv" names the table resume', async () => {
  const res = await upload('a\n1\n', { databaseName: 'names' }, { fileName: 'résumé – 東京.csv' });
  expect(res.status).toBe(201);
  // Read as latin1 (busboy's default) the name was "rÃ©sumÃ© â\u0080\u0093 æ\u009d±äº¬", cleaned to "ra_suma_a_ao".
  expect(res.body.table.name).toBe('resume');
});
