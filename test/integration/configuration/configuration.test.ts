/** Managed configuration tables: declare, managed-rows, refused writes elsewhere, catalog, history, operation routing. */
import { randomBytes } from 'node:crypto';
import { migrateUp, openOrm } from '../../../db/orm';
import { createDatabase, dropDatabase } from '../../../scripts/lib/postgres';
import { testEnv } from '../../support/env';
import type { z } from 'zod';
import type {
  catalogSchema,
  createdSchema,
  databaseListSchema,
  declaredTableSchema,
  historySchema,
  managedRowResultSchema,
} from '../../../api/schemas/databases';
import { startTestApp } from '../../support/harness';
import { addUserWithKey, createWorkspace, http, useTestStack, type ApiError, type TestApp } from '../../kit';

/** POST /api/v1/databases with a table. */
type CreatedTable = Extract<z.infer<typeof createdSchema>, { table: unknown }>;
/** POST /api/v1/configuration/declare; a refusal names the `column` or the `findings`. */
type Declared = { table: z.infer<typeof declaredTableSchema> } & Partial<ApiError>;
/** GET and PUT managed-rows; a refusal names the `column` or the `code`. */
type ManagedRow = z.infer<typeof managedRowResultSchema> & Partial<ApiError>;
type Catalog = z.infer<typeof catalogSchema>;
type History = z.infer<typeof historySchema>;

const stack = useTestStack({ worker: false });

const COLUMNS = [
  { name: 'key', type: 'text' },
  { name: 'active', type: 'json' },
  { name: 'retired', type: 'json' },
  { name: 'note', type: 'text' },
];
let counter = 0;
async function configTable(rows: unknown[] = [{ key: 'plan.basic', active: { price: 10 }, retired: null }], token = stack.ws.token) {
  const res = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token,
    body: { databaseName: 'settings', tableName: `cfg_${++counter}`, columns: COLUMNS, rows },
  });
  expect(res.status).toBe(201);
  return res.body.table.id;
}
const declare = (tableId: string, token = stack.ws.token, extra: object = {}) =>
  http<Declared>(stack.app, 'POST', '/api/v1/configuration/declare', { token, body: { tableId, ...extra } });
const put = (tableId: string, body: object, token = stack.ws.token) =>
  http<ManagedRow>(stack.app, 'PUT', `/api/v1/databases/${tableId}/managed-rows`, { token, body });
const get = (tableId: string, key: string, token = stack.ws.token) =>
  http<ManagedRow>(stack.app, 'GET', `/api/v1/databases/${tableId}/managed-rows?key=${encodeURIComponent(key)}`, { token });

test('an Admin or Owner declares a table; the declaration is permanent and shows in the catalog', async () => {
  const tableId = await configTable();
  const member = await addUserWithKey(stack.app, stack.ws, 'member');
  expect((await declare(tableId, member.token)).status).toBe(403);
  const res = await declare(tableId, stack.ws.token, { tableKey: 'pricing' });
  expect(res.status).toBe(200);
  expect(res.body.table).toMatchObject({
    tableId,
    tableKey: 'pricing',
    keyColumn: 'key',
    classification: 'non_sensitive',
    ownerPackageKey: null,
    rowCount: 1,
  });
  expect((await declare(tableId)).status).toBe(409);
  expect((await http(stack.app, 'PATCH', `/api/v1/databases/${tableId}`, { token: stack.ws.token, body: { trashed: true } })).status).toBe(
    409,
  );
  const catalog = await http<Catalog>(stack.app, 'GET', '/api/v1/configuration/catalog', { token: stack.ws.token });
  expect(catalog.status).toBe(200);
  expect(catalog.body).toMatchObject({ applyEnabled: true, applyDisabledReason: null });
  expect(catalog.body.tables.map((t) => t.tableKey)).toContain('pricing');
  expect(catalog.body.databases).toEqual([{ id: res.body.table.databaseId, name: 'settings' }]);
});

test('declaring needs key, active and retired columns, unique non-empty keys, and no secrets in existing rows', async () => {
  const noLifecycle = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: { databaseName: 'settings', tableName: 'plain', columns: [{ name: 'key', type: 'text' }] },
  });
  const missing = await declare(noLifecycle.body.table.id);
  expect(missing.status).toBe(400);
  expect(missing.body.column).toBe('active');
  const dupes = await declare(
    await configTable([
      { key: 'a', active: 1 },
      { key: 'a', active: 2 },
    ]),
  );
  expect(dupes.status).toBe(400);
  expect(dupes.body.error).toMatch(/"a" appears twice/);
  const secret = await declare(await configTable([{ key: 'svc', active: { token: 'ghp_0123456789abcdefghijABCDEFGHIJ012345' } }]));
  expect(secret.status).toBe(400);
  expect(secret.body).toMatchObject({ code: 'secret_detected', findings: [{ key: 'svc', path: 'active.token', kind: 'GitHub token' }] });
  expect(JSON.stringify(secret.body)).not.toContain('ghp_0123');
});

test('managed-rows: revision 0 creates, each write names the current revision, stale is 409, the key is immutable', async () => {
  const tableId = await configTable([]);
  expect((await declare(tableId)).status).toBe(200);
  const created = await put(tableId, { key: 'limits', expectedRevision: 0, values: { active: { rpm: 60 }, retired: null, note: 'first' } });
  expect(created.status).toBe(200);
  expect(created.body).toEqual({
    tableId,
    row: { key: 'limits', revision: 1, values: { active: { rpm: 60 }, retired: null, note: 'first' } },
  });
  const updated = await put(tableId, { key: 'limits', expectedRevision: 1, values: { active: { rpm: 120 }, retired: { rpm: 60 } } });
  expect(updated.body.row).toEqual({ key: 'limits', revision: 2, values: { active: { rpm: 120 }, retired: { rpm: 60 }, note: 'first' } });
  const stale = await put(tableId, { key: 'limits', expectedRevision: 1, values: { note: 'late' } });
  expect(stale.status).toBe(409);
  expect(stale.body).toMatchObject({ code: 'revision_conflict', currentRevision: 2 });
  expect((await put(tableId, { key: 'limits', expectedRevision: 0, values: {} })).status).toBe(409);
  const rekey = await put(tableId, { key: 'limits', expectedRevision: 2, values: { key: 'other' } });
  expect(rekey.status).toBe(400);
  expect(rekey.body.error).toMatch(/immutable/);
  expect((await put(tableId, { key: 'limits', expectedRevision: 2, values: { nope: 1 } })).body.column).toBe('nope');
  expect((await get(tableId, 'limits')).body.row).toEqual(updated.body.row);
  expect((await get(tableId, 'absent')).status).toBe(404);
});

test.each([
  ['a PEM private key', { active: '-----BEGIN RSA PRIVATE KEY-----\nMIIE...\n-----END RSA PRIVATE KEY-----' }, 'PEM private key'],
  ['an AWS key id in retired', { retired: { id: 'AKIAIOSFODNN7EXAMPLE' } }, 'AWS access key id'],
  ['a Stripe key', { active: { stripe: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc' } }, 'Stripe key'],
  ['credentials in a URL', { active: 'postgres://admin:hunter2@db.internal/prod' }, 'credentials in a URL'],
  ['a high-entropy token', { active: { signing: 'q8Zr3LmP0xV7bT2nK9wE4sY6uH1jC5gA8dF0' } }, 'high-entropy token'],
])('a recognized secret in a lifecycle value is refused: %s', async (_label, values, kind) => {
  const tableId = await configTable([]);
  await declare(tableId);
  const res = await put(tableId, { key: 'k', expectedRevision: 0, values });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'secret_detected', findings: [expect.objectContaining({ kind })] });
  expect((await get(tableId, 'k')).status).toBe(404);
});

test('ordinary configuration values pass the scanner', async () => {
  const tableId = await configTable([]);
  await declare(tableId);
  const values = {
    active: {
      url: 'https://api.example.com/v1',
      ids: ['wf_3f0c1a2b', 'team-alpha'],
      hex: 'deadbeef',
      sentence: 'Send the weekly digest on Mondays at 09:00',
    },
    retired: null,
  };
  expect((await put(tableId, { key: 'ok', expectedRevision: 0, values })).status).toBe(200);
});

test('declared tables refuse the rows API and CSV appends (workflow nodes: nodes.test.ts)', async () => {
  const tableId = await configTable();
  await declare(tableId);
  const rows = `/api/v1/databases/${tableId}/rows`;
  for (const [method, body] of [
    ['POST', { values: { key: 'x' } }],
    ['PATCH', { rowIndex: 1, values: { note: 'x' } }],
    ['DELETE', { rowIndex: 1 }],
  ] as const) {
    const res = await http<ApiError>(stack.app, method, rows, { token: stack.ws.token, body });
    expect([method, res.status, res.body.code]).toEqual([method, 409, 'managed_table']);
  }
  expect((await http(stack.app, 'GET', rows, { token: stack.ws.token })).status).toBe(200);
  const list = await http<z.infer<typeof databaseListSchema>>(stack.app, 'GET', '/api/v1/databases', { token: stack.ws.token });
  const table = list.body.tables.find((t) => t.id === tableId);
  if (!table) throw new Error(`table ${tableId} not listed: ${list.text}`);
  const form = new FormData();
  form.append('databaseId', table.databaseId);
  form.append('tableName', table.name);
  form.append('file', new Blob(['key,note\nnew,x\n'], { type: 'text/csv' }), 'x.csv');
  const csv = await fetch(`${stack.app.url}/api/v1/databases/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.ws.token}` },
    body: form,
  });
  expect(csv.status).toBe(409);
  expect(await csv.json()).toMatchObject({ code: 'managed_table' });
  expect((await get(tableId, 'plan.basic')).body.row.revision).toBe(1);
});

test('another workspace gets 404 on managed rows and declare, and nothing changes', async () => {
  const tableId = await configTable();
  await declare(tableId);
  const other = await createWorkspace(stack.app, 'Other');
  expect((await get(tableId, 'plan.basic', other.token)).status).toBe(404);
  expect((await put(tableId, { key: 'plan.basic', expectedRevision: 1, values: { note: 'theirs' } }, other.token)).status).toBe(404);
  const mine = await configTable();
  expect((await declare(mine, other.token)).status).toBe(404);
  expect((await get(tableId, 'plan.basic')).body.row).toMatchObject({ revision: 1, values: { note: null } });
  const notDeclared = await get(mine, 'plan.basic');
  expect(notDeclared).toMatchObject({ status: 404, body: { error: 'Managed table not found' } });
  expect((await http<Catalog>(stack.app, 'GET', '/api/v1/configuration/catalog', { token: other.token })).body.tables).toEqual([]);
});

test('operation routing: wrong method 405 with Allow, unknown names 404, history starts empty', async () => {
  const history = await http<History>(stack.app, 'GET', '/api/v1/configuration/history', { token: stack.ws.token });
  expect(history).toMatchObject({ status: 200, body: { receipts: [] } });
  const postCatalog = await http(stack.app, 'POST', '/api/v1/configuration/catalog', { token: stack.ws.token, body: {} });
  expect(postCatalog.status).toBe(405);
  expect(postCatalog.headers.get('allow')).toBe('GET');
  const getApply = await http(stack.app, 'GET', '/api/v1/configuration/apply', { token: stack.ws.token });
  expect(getApply.status).toBe(405);
  expect(getApply.headers.get('allow')).toBe('POST');
  for (const name of ['confirm', 'managed-rows', 'rows', 'nope']) {
    expect((await http(stack.app, 'POST', `/api/v1/configuration/${name}`, { token: stack.ws.token, body: {} })).status).toBe(404);
    expect((await http(stack.app, 'GET', `/api/v1/configuration/${name}`, { token: stack.ws.token })).status).toBe(404);
  }
  const put405 = await http(stack.app, 'PUT', '/api/v1/configuration/catalog', { token: stack.ws.token, body: {} });
  expect(put405.status).toBe(405);
});

test('with the writes switch off the catalog says applyEnabled false, writes_disabled', async () => {
  const off = await startTestApp({ configurationWritesEnabled: false });
  try {
    const res = await http<Catalog>(off, 'GET', '/api/v1/configuration/catalog', { token: stack.ws.token });
    expect(res.body).toMatchObject({ applyEnabled: false, applyDisabledReason: 'writes_disabled' });
  } finally {
    await off.close();
  }
});

test('without durable configuration storage the catalog is 503 storage_unavailable, with no metadata', async () => {
  const url = new URL(testEnv('databaseUrl'));
  url.pathname = `/svc_test_nocfg_${randomBytes(4).toString('hex')}`;
  await createDatabase(url.toString());
  let bare: TestApp | undefined;
  try {
    const orm = await openOrm(url.toString());
    await migrateUp(orm);
    // A deployment whose configuration storage is gone (or was never provisioned).
    await orm.em
      .fork()
      .getConnection()
      .execute('drop table configuration_proposals, configuration_baselines, configuration_receipts, managed_tables');
    await orm.close();
    bare = await startTestApp({ databaseUrl: url.toString() });
    const owner = await createWorkspace(bare);
    const res = await http<Catalog>(bare, 'GET', '/api/v1/configuration/catalog', { token: owner.token });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: 'Configuration storage is unavailable.',
      code: 'storage_unavailable',
      applyEnabled: false,
      applyDisabledReason: 'storage_unavailable',
    });
  } finally {
    await bare?.close();
    await dropDatabase(url.toString());
  }
});
