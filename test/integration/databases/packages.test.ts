/** Configuration packages: export (limits, reference conflicts), validate, preview, prepare, session confirm, apply (drift, convergence, idempotency). */
// A second stack.app with writes switched off starts beside the stack: the harness's startTestApp, as the stack's own.
import { startTestApp } from '../../support/harness';
import {
  http,
  signInCookie,
  useTestStack,
  type ConfigurationAnswer,
  type ConfigurationCatalog,
  type ConfigurationHistory,
  type ConfigurationOperations,
  type ConfigurationProposal,
  type CreatedTable,
  type ManagedRowAnswer,
  type WorkspaceFixture,
} from '../../kit';

let src: WorkspaceFixture;
let dst: WorkspaceFixture;
let dstCookie: string;

const COLUMNS = [
  { name: 'key', type: 'text' },
  { name: 'active', type: 'json' },
  { name: 'retired', type: 'json' },
  { name: 'limit_n', type: 'number' },
];

// Routes only: configuration packages run no workflow, so the stack has no worker.
const stack = useTestStack({ worker: false });
beforeAll(async () => {
  src = await stack.workspace('Source');
  dst = await stack.workspace('Destination');
  dstCookie = await signInCookie(stack.app, dst.ownerEmail, dst.ownerPassword, dst.workspaceId);
});

let n = 0;
/** A declared table; returns its id. */
async function declared(
  ws: WorkspaceFixture,
  name: string,
  rows: object[] = [],
  columns: object[] = COLUMNS,
  tableKey = name,
): Promise<string> {
  const created = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: ws.token,
    body: { databaseName: 'config', tableName: name, columns, rows },
  });
  expect(created.status).toBe(201);
  const res = await http(stack.app, 'POST', '/api/v1/configuration/declare', {
    token: ws.token,
    body: { tableId: created.body.table.id, tableKey },
  });
  expect(res.status).toBe(200);
  return created.body.table.id;
}
const op = <K extends keyof ConfigurationOperations>(ws: WorkspaceFixture, name: K, body: object) =>
  http<ConfigurationAnswer<K>>(stack.app, 'POST', `/api/v1/configuration/${name}`, { token: ws.token, body });
const confirm = (id: string, cookie = dstCookie) =>
  http<{ proposal: ConfigurationProposal }>(stack.app, 'POST', `/api/configuration/proposals/${id}/confirm`, {
    cookie,
    headers: { origin: stack.app.url },
  });
const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> =>
  stack.app.orm.em.fork().getConnection().execute(text, params);
const catalogOf = async (ws: WorkspaceFixture) =>
  (await http<ConfigurationCatalog>(stack.app, 'GET', '/api/v1/configuration/catalog', { token: ws.token })).body.tables;
/** The table id of a declared table, by its key; fails the test when there is none. */
const declaredId = async (ws: WorkspaceFixture, tableKey: string) => {
  const found = (await catalogOf(ws)).find((t) => t.tableKey === tableKey);
  if (!found) throw new Error(`no declared table ${tableKey}`);
  return found.tableId;
};

/** prepare → confirm → apply in the destination. */
async function deploy(pkg: object, requestId = `req-${++n}`) {
  const prepared = await op(dst, 'prepare', { package: pkg });
  expect(prepared.status).toBe(201);
  expect((await confirm(prepared.body.proposal.id)).status).toBe(200);
  return { prepared, applied: await op(dst, 'apply', { requestId, proposalId: prepared.body.proposal.id }), requestId };
}

test('export → validate → preview → prepare → confirm → apply, then convergence and an idempotent retry', async () => {
  await declared(src, 'plans', [
    { key: 'basic', active: { price: 10 }, retired: null, limit_n: 5 },
    { key: 'pro', active: { price: 50 }, limit_n: 50 },
  ]);
  await declared(dst, 'plans');
  const exported = await op(src, 'export', { packageKey: 'pricing' });
  expect(exported.status).toBe(200);
  const pkg = exported.body.package;
  expect(pkg).toMatchObject({
    schema: 'svc.configuration-artifact.v1',
    packageKey: 'pricing',
    tables: [{ tableKey: 'plans', rows: [{ key: 'basic' }, { key: 'pro' }] }],
  });
  expect(exported.body.stats).toMatchObject({ tables: 1, rows: 2 });

  expect((await op(dst, 'validate', { package: pkg })).body).toMatchObject({ valid: true, issues: [] });
  const preview = await op(dst, 'preview', { package: pkg });
  expect(preview.body).toMatchObject({ packageKey: 'pricing', applyable: true, blockers: [] });
  expect(preview.body.actions.map((a) => [a.rowKey, a.action])).toEqual([
    ['basic', 'create'],
    ['pro', 'create'],
  ]);

  const prepared = await op(dst, 'prepare', { package: pkg });
  expect(prepared.status).toBe(201);
  expect(prepared.body.reviewUrl).toBe(`${stack.app.url}/configuration/proposals/${prepared.body.proposal.id}`);
  // Not confirmed yet: no API confirm operation, and apply refuses.
  const early = await op(dst, 'apply', { requestId: 'r-1', proposalId: prepared.body.proposal.id });
  expect(early).toMatchObject({ status: 409, body: { code: 'proposal_not_confirmed' } });
  expect((await http(stack.app, 'POST', '/api/v1/configuration/confirm', { token: dst.token, body: {} })).status).toBe(404);
  // A bearer key is not a session; another origin is refused.
  expect(
    (await http(stack.app, 'POST', `/api/configuration/proposals/${prepared.body.proposal.id}/confirm`, { token: dst.token })).status,
  ).toBe(401);
  expect(
    (
      await http(stack.app, 'POST', `/api/configuration/proposals/${prepared.body.proposal.id}/confirm`, {
        cookie: dstCookie,
        headers: { origin: 'https://evil.example' },
      })
    ).status,
  ).toBe(403);
  const confirmed = await confirm(prepared.body.proposal.id);
  expect(confirmed.body.proposal).toMatchObject({ status: 'confirmed', confirmedBy: dst.ownerId });

  const applied = await op(dst, 'apply', { requestId: 'r-1', proposalId: prepared.body.proposal.id });
  expect(applied.status).toBe(200);
  expect(applied.body).toMatchObject({
    replayed: false,
    receipt: {
      requestId: 'r-1',
      actorId: dst.ownerId,
      packageKey: 'pricing',
      status: 'applied',
      actionIds: preview.body.actions.map((a) => a.id),
    },
  });
  const catalog = await http<ConfigurationCatalog>(stack.app, 'GET', '/api/v1/configuration/catalog', { token: dst.token });
  const table = catalog.body.tables.find((t) => t.tableKey === 'plans')!;
  expect(table).toMatchObject({ ownerPackageKey: 'pricing', rowCount: 2 });
  const row = await http<ManagedRowAnswer>(stack.app, 'GET', `/api/v1/databases/${table.tableId}/managed-rows?key=basic`, {
    token: dst.token,
  });
  expect(row.body.row).toEqual({ key: 'basic', revision: 1, values: { active: { price: 10 }, retired: null, limit_n: 5 } });

  // The same requestId and input: the same receipt, nothing written again.
  const again = await op(dst, 'apply', { requestId: 'r-1', proposalId: prepared.body.proposal.id });
  expect(again.body).toEqual({ ...applied.body, replayed: true });
  // The same requestId with other input: 409.
  const other = await op(dst, 'prepare', { package: pkg });
  expect((await op(dst, 'apply', { requestId: 'r-1', proposalId: other.body.proposal.id })).status).toBe(409);
  // Convergence: everything is unchanged now.
  const converged = await op(dst, 'preview', { package: pkg });
  expect(converged.body.actions.map((a) => a.action)).toEqual(['unchanged', 'unchanged']);
  // An update of the package after that applies as an update.
  pkg.tables[0].rows[0].values.limit_n = 6;
  const { applied: second } = await deploy(pkg);
  expect(second.status).toBe(200);
  expect(
    (await http<ManagedRowAnswer>(stack.app, 'GET', `/api/v1/databases/${table.tableId}/managed-rows?key=basic`, { token: dst.token })).body
      .row,
  ).toMatchObject({ revision: 2, values: { limit_n: 6 } });

  const history = await http<ConfigurationHistory>(stack.app, 'GET', '/api/v1/configuration/history', { token: dst.token });
  expect(history.body.receipts.map((r) => r.requestId)).toEqual([expect.stringMatching(/^req-/), 'r-1']);
  expect(JSON.stringify(history.body)).not.toContain('price');
  expect(history.body.receipts[0]).toEqual({
    id: expect.stringMatching(/^cfr_/),
    requestId: expect.any(String),
    actorId: dst.ownerId,
    packageKey: 'pricing',
    actionIds: expect.any(Array),
    status: 'applied',
    createdAt: expect.any(String),
  });
});

describe('drift blocks apply, and nothing is written', () => {
  test('a row changed at the destination since the last apply', async () => {
    await declared(src, 'flags', [{ key: 'beta', active: true }]);
    const dstId = await declared(dst, 'flags');
    const pkg = (
      await op(src, 'export', {
        packageKey: 'flags-pkg',
        tableIds: [await declaredId(src, 'flags')],
      })
    ).body.package;
    expect((await deploy(pkg)).applied.status).toBe(200);
    // Someone edits the row directly.
    expect(
      (
        await http(stack.app, 'PUT', `/api/v1/databases/${dstId}/managed-rows`, {
          token: dst.token,
          body: { key: 'beta', expectedRevision: 1, values: { active: false } },
        })
      ).status,
    ).toBe(200);
    pkg.tables[0].rows[0].values.retired = 'x';
    const preview = await op(dst, 'preview', { package: pkg });
    expect(preview.body).toMatchObject({ applyable: false, blockers: [{ tableKey: 'flags', rowKey: 'beta', kind: 'changed' }] });
    const { applied } = await deploy(pkg);
    expect(applied).toMatchObject({
      status: 409,
      body: { code: 'configuration_drift', blockers: [{ tableKey: 'flags', rowKey: 'beta', kind: 'changed', reason: expect.any(String) }] },
    });
    const row = await http<ManagedRowAnswer>(stack.app, 'GET', `/api/v1/databases/${dstId}/managed-rows?key=beta`, { token: dst.token });
    expect(row.body.row).toMatchObject({ revision: 2, values: { active: false, retired: null } });
  });

  test('schema, unexpected rows, classification, missing tables and ownership', async () => {
    await declared(src, 'quotas', [{ key: 'a', active: 1 }]);
    const quotas = await declaredId(src, 'quotas');
    const pkg = (await op(src, 'export', { packageKey: 'quota-pkg', tableIds: [quotas] })).body.package;

    // missing: the destination has no such declared table; classification: one of that name is not declared.
    expect((await op(dst, 'preview', { package: pkg })).body.blockers).toEqual([
      { tableKey: 'quotas', rowKey: null, kind: 'missing', reason: expect.any(String) },
    ]);
    const plain = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
      token: dst.token,
      body: { databaseName: 'config', tableName: 'quotas', columns: [...COLUMNS, { name: 'extra', type: 'text' }], rows: [{ key: 'z' }] },
    });
    expect((await op(dst, 'preview', { package: pkg })).body.blockers[0].kind).toBe('classification');
    // schema: declared, but with another column.
    await op(dst, 'declare', { tableId: plain.body.table.id });
    expect((await op(dst, 'preview', { package: pkg })).body.blockers[0].kind).toBe('schema');

    // unexpected: a destination row no apply wrote.
    const strayId = await declared(dst, 'strays', [{ key: 'local', active: 1 }], COLUMNS);
    await declared(src, 'strays', [{ key: 'a', active: 1 }]);
    const strays = await declaredId(src, 'strays');
    const strayPkg = (await op(src, 'export', { packageKey: 'stray-pkg', tableIds: [strays] })).body.package;
    expect((await op(dst, 'preview', { package: strayPkg })).body.blockers).toEqual([
      { tableKey: 'strays', rowKey: 'local', kind: 'unexpected', reason: expect.any(String) },
    ]);
    const { applied } = await deploy(strayPkg);
    expect(applied.status).toBe(409);
    expect((await http(stack.app, 'GET', `/api/v1/databases/${strayId}/managed-rows?key=a`, { token: dst.token })).status).toBe(404);

    // ownership: a table another package applied to.
    await declared(src, 'owned', [{ key: 'k', active: 1 }]);
    await declared(dst, 'owned');
    const owned = await declaredId(src, 'owned');
    const first = (await op(src, 'export', { packageKey: 'owner-a', tableIds: [owned] })).body.package;
    expect((await deploy(first)).applied.status).toBe(200);
    const second = { ...first, packageKey: 'owner-b' };
    expect((await op(dst, 'preview', { package: second })).body.blockers).toEqual([
      { tableKey: 'owned', rowKey: null, kind: 'ownership', reason: 'the table belongs to package "owner-a"' },
    ]);
  });
});

test('export: reference conflicts name tableKey, row key and reason; references inside the package become table keys', async () => {
  const REF_COLUMNS = [...COLUMNS.slice(0, 3), { name: 'parent', type: 'text', tableReference: true }];
  const targetId = await declared(src, 'regions', [{ key: 'eu', active: 1 }], COLUMNS.slice(0, 3));
  const refId = await declared(src, 'routes', [], REF_COLUMNS);
  const long = 'r'.repeat(300);
  expect(
    (
      await http(stack.app, 'PUT', `/api/v1/databases/${refId}/managed-rows`, {
        token: src.token,
        body: { key: 'short', expectedRevision: 0, values: { parent: targetId } },
      })
    ).status,
  ).toBe(200);
  expect(
    (
      await http(stack.app, 'PUT', `/api/v1/databases/${refId}/managed-rows`, {
        token: src.token,
        body: { key: long.slice(0, 256), expectedRevision: 0, values: { parent: targetId } },
      })
    ).status,
  ).toBe(200);
  expect(
    (
      await http<ManagedRowAnswer>(stack.app, 'PUT', `/api/v1/databases/${refId}/managed-rows`, {
        token: src.token,
        body: { key: 'bad', expectedRevision: 0, values: { parent: 'tbl_nope' } },
      })
    ).body.column,
  ).toBe('parent');
  const alone = await op(src, 'export', { packageKey: 'routes-only', tableIds: [refId] });
  expect(alone.status).toBe(409);
  expect(alone.body.code).toBe('export_reference_conflict');
  expect(alone.body.blockers).toEqual([
    {
      tableKey: 'routes',
      rowKey: long.slice(0, 256),
      kind: 'reference',
      reason: 'column "parent" references table "regions", which is not in the package',
    },
    {
      tableKey: 'routes',
      rowKey: 'short',
      kind: 'reference',
      reason: 'column "parent" references table "regions", which is not in the package',
    },
  ]);
  const both = await op(src, 'export', { packageKey: 'routes-and-regions', tableIds: [refId, targetId] });
  expect(both.status).toBe(200);
  expect(both.body.package.tables[0].rows.map((r) => r.values.parent)).toEqual(['regions', 'regions']);
  // validate catches a reference to a table that is not in the package.
  const broken = structuredClone(both.body.package);
  broken.tables = broken.tables.filter((t) => t.tableKey === 'routes');
  const report = await op(dst, 'validate', { package: broken });
  expect(report.body.valid).toBe(false);
  expect(report.body.issues.join(' ')).toMatch(/references "regions", which is not a table of the package/);
});

test('validate reads no destination rows and reports shape, limits, keys, cells and secrets', async () => {
  const base = {
    schema: 'svc.configuration-artifact.v1',
    packageKey: 'v',
    tables: [{ tableKey: 'nowhere', name: 'nowhere', columns: COLUMNS, rows: [{ key: 'a', values: { active: 1 } }] }],
  };
  expect((await op(dst, 'validate', { package: base })).body).toMatchObject({ valid: true });
  const cases: Array<[object, RegExp]> = [
    [{ ...base, schema: 'other.v1' }, /schema must be/],
    [
      {
        ...base,
        tables: [
          {
            ...base.tables[0],
            rows: [
              { key: 'a', values: {} },
              { key: 'a', values: {} },
            ],
          },
        ],
      },
      /appears twice/,
    ],
    [{ ...base, tables: [{ ...base.tables[0], rows: [{ key: 'x'.repeat(257), values: {} }] }] }, /1 to 256/],
    [{ ...base, tables: [{ ...base.tables[0], rows: [{ key: 'a', values: { limit_n: 'many' } }] }] }, /limit_n/],
    [
      { ...base, tables: [{ ...base.tables[0], rows: [{ key: 'a', values: { active: { k: 'AKIAIOSFODNN7EXAMPLE' } } }] }] },
      /AWS access key id/,
    ],
    [{ ...base, tables: Array.from({ length: 21 }, (_, i) => ({ ...base.tables[0], tableKey: `t${i}` })) }, /At most 20 tables/],
    [
      { ...base, tables: [{ ...base.tables[0], rows: Array.from({ length: 501 }, (_, i) => ({ key: `k${i}`, values: {} })) }] },
      /at most 500 rows per table/,
    ],
    [
      {
        ...base,
        tables: [0, 1, 2].map((t) => ({
          ...base.tables[0],
          tableKey: `t${t}`,
          rows: Array.from({ length: 400 }, (_, i) => ({ key: `k${i}`, values: {} })),
        })),
      },
      /At most 1000 rows in all/,
    ],
  ];
  for (const [pkg, message] of cases) {
    const res = await op(dst, 'validate', { package: pkg });
    expect([res.status, res.body.valid]).toEqual([200, false]);
    expect(res.body.issues.join(' ')).toMatch(message);
  }
  // Over 1 MiB the request body itself is over the body limit (BODY_LIMIT, 1 MiB by default): 413.
  const huge = await op(dst, 'validate', {
    package: { ...base, tables: [{ ...base.tables[0], rows: [{ key: 'a', values: { active: 'x'.repeat(1_100_000) } }] }] },
  });
  expect(huge.status).toBe(413);
  // preview and prepare refuse an invalid package with a 400 listing the issues.
  expect((await op(dst, 'preview', { package: cases[0][0] })).body.code).toBe('package_invalid');
});

test('export limits: more than 500 rows in a table, more than 20 tables', async () => {
  const big = await declared(
    src,
    'big',
    Array.from({ length: 501 }, (_, i) => ({ key: `k${i}` })),
  );
  const res = await op(src, 'export', { packageKey: 'big', tableIds: [big] });
  expect(res).toMatchObject({ status: 400, body: { code: 'package_too_large' } });
  const many = await stack.workspace('Many');
  const ids: string[] = [];
  for (let i = 0; i < 21; i++) ids.push(await declared(many, `t${i}`));
  expect((await op(many, 'export', { packageKey: 'all' })).body).toMatchObject({
    code: 'package_too_large',
    error: expect.stringMatching(/at most 20 tables/),
  });
  expect((await op(many, 'export', { packageKey: 'some', tableIds: ids.slice(0, 20) })).status).toBe(200);
});

test('an expired proposal is 412 at confirm and apply', async () => {
  await declared(dst, 'expiring');
  const pkg = {
    schema: 'svc.configuration-artifact.v1',
    packageKey: 'exp',
    tables: [{ tableKey: 'expiring', name: 'expiring', columns: COLUMNS, rows: [] }],
  };
  const a = await op(dst, 'prepare', { package: pkg });
  await sql(`update configuration_proposals set expires_at = now() - interval '1 second' where id = ?`, [a.body.proposal.id]);
  expect((await confirm(a.body.proposal.id)).status).toBe(412);
  const b = await op(dst, 'prepare', { package: pkg });
  expect((await confirm(b.body.proposal.id)).status).toBe(200);
  await sql(`update configuration_proposals set expires_at = now() - interval '1 second' where id = ?`, [b.body.proposal.id]);
  expect((await op(dst, 'apply', { requestId: 'late', proposalId: b.body.proposal.id })).status).toBe(412);
});

test('with writes switched off apply is 503, but a committed receipt is still returned', async () => {
  await declared(dst, 'switchy');
  const pkg = {
    schema: 'svc.configuration-artifact.v1',
    packageKey: 'switch',
    tables: [{ tableKey: 'switchy', name: 'switchy', columns: COLUMNS, rows: [{ key: 'a', values: { active: 1 } }] }],
  };
  const { applied, requestId } = await deploy(pkg);
  expect(applied.status).toBe(200);
  const off = await startTestApp({ configurationWritesEnabled: false });
  try {
    const replay = await http<ConfigurationAnswer<'apply'>>(off, 'POST', '/api/v1/configuration/apply', {
      token: dst.token,
      body: {
        requestId,
        proposalId: applied.body.receipt
          ? (
              await sql<{ id: string }>('select id from configuration_proposals where package_key = ? and status = ?', [
                'switch',
                'applied',
              ])
            )[0].id
          : '',
      },
    });
    expect(replay.status).toBe(200);
    expect(replay.body.receipt.id).toBe(applied.body.receipt.id);
    const fresh = await op(dst, 'prepare', { package: pkg });
    await confirm(fresh.body.proposal.id);
    const refused = await http(off, 'POST', '/api/v1/configuration/apply', {
      token: dst.token,
      body: { requestId: 'new-one', proposalId: fresh.body.proposal.id },
    });
    expect(refused).toMatchObject({ status: 503, body: { code: 'writes_disabled' } });
  } finally {
    await off.close();
  }
});

test("another workspace's proposals are 404 at confirm and apply", async () => {
  await declared(dst, 'mine');
  const prepared = await op(dst, 'prepare', {
    package: {
      schema: 'svc.configuration-artifact.v1',
      packageKey: 'mine',
      tables: [{ tableKey: 'mine', name: 'mine', columns: COLUMNS, rows: [] }],
    },
  });
  const srcCookie = await signInCookie(stack.app, src.ownerEmail, src.ownerPassword, src.workspaceId);
  expect((await confirm(prepared.body.proposal.id, srcCookie)).status).toBe(404);
  expect((await op(src, 'apply', { requestId: 'x', proposalId: prepared.body.proposal.id })).status).toBe(404);
  const [row] = await sql<{ status: string }>('select status from configuration_proposals where id = ?', [prepared.body.proposal.id]);
  expect(row.status).toBe('pending');
});

test('export stops at the 32 MiB read budget before reading rows', async () => {
  const heavy = await stack.workspace('Heavy');
  const id = await declared(heavy, 'blobs');
  const blob = 'x'.repeat(1_000_000);
  for (let i = 0; i < 34; i++) {
    const res = await http(stack.app, 'PUT', `/api/v1/databases/${id}/managed-rows`, {
      token: heavy.token,
      body: { key: `b${i}`, expectedRevision: 0, values: { active: blob } },
    });
    expect(res.status).toBe(200);
  }
  const res = await op(heavy, 'export', { packageKey: 'heavy' });
  expect(res).toMatchObject({ status: 400, body: { code: 'export_budget_exceeded', error: expect.stringMatching(/32 MiB/) } });
});

test('a table an applied package owns may reference only tables of that package', async () => {
  const REF = [...COLUMNS.slice(0, 3), { name: 'peer', type: 'text', tableReference: true }];
  const ws = await stack.workspace('Deployments');
  const a = await declared(ws, 'dep_a', [], REF);
  const b = await declared(ws, 'dep_b', [], COLUMNS.slice(0, 3));
  const outsider = await declared(ws, 'outsider', [], COLUMNS.slice(0, 3));
  const prepared = await op(ws, 'prepare', {
    package: {
      schema: 'svc.configuration-artifact.v1',
      packageKey: 'dep',
      tables: [
        { tableKey: 'dep_a', name: 'dep_a', columns: REF, rows: [{ key: 'x', values: { peer: 'dep_b' } }] },
        { tableKey: 'dep_b', name: 'dep_b', columns: COLUMNS.slice(0, 3), rows: [] },
      ],
    },
  });
  const cookie = await signInCookie(stack.app, ws.ownerEmail, ws.ownerPassword, ws.workspaceId);
  expect((await confirm(prepared.body.proposal.id, cookie)).status).toBe(200);
  expect((await op(ws, 'apply', { requestId: 'dep-1', proposalId: prepared.body.proposal.id })).status).toBe(200);
  const applied = await http<ManagedRowAnswer>(stack.app, 'GET', `/api/v1/databases/${a}/managed-rows?key=x`, { token: ws.token });
  expect(applied.body.row.values.peer).toBe(b);
  const inside = await http(stack.app, 'PUT', `/api/v1/databases/${a}/managed-rows`, {
    token: ws.token,
    body: { key: 'y', expectedRevision: 0, values: { peer: b } },
  });
  expect(inside.status).toBe(200);
  const outside = await http(stack.app, 'PUT', `/api/v1/databases/${a}/managed-rows`, {
    token: ws.token,
    body: { key: 'z', expectedRevision: 0, values: { peer: outsider } },
  });
  expect(outside).toMatchObject({ status: 400, body: { column: 'peer', error: expect.stringMatching(/package "dep"/) } });
});
