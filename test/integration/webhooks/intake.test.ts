/**
 * The invoke route's hot path (services/webhooks/intake.ts): group-committed outbox writes and
 * the token cache with its invalidation. The cache TTL is a minute here, so every change below
 * is seen through explicit invalidation, not expiry.
 */
import { RunSchema } from '../../../db/entities';
import { eventually, http, startTestApp, startTestStack, type TestApp, type TestStack, type WorkspaceFixture } from '../../support/harness';

let stack: TestStack;
let app: TestApp;
let ws: WorkspaceFixture;

beforeAll(async () => {
  stack = await startTestStack({ config: { webhookSyncBudgetMs: 10_000, webhookTokenCacheMs: 60_000 }, temporal: { dispatcher: true } });
  ({ app, ws } = stack);
});
afterAll(() => stack?.close());

async function createWorkflow(nodes: object[], edges: object[]): Promise<string> {
  const created = await http(app, 'POST', '/api/v1/workflows', {
    token: ws.token,
    body: { nodes: [{ id: 'hook', type: 'webhook', config: {} }, ...nodes], edges },
  });
  expect(created.status).toBe(201);
  return created.body.workflow.id;
}

async function deploy(workflowId: string): Promise<string> {
  const deployed = await http(app, 'POST', `/api/v1/workflows/${workflowId}/deploy`, { token: ws.token });
  expect(deployed.status).toBe(200);
  return new URL(deployed.body.webhookUrl).pathname;
}

async function deployEcho(): Promise<{ workflowId: string; invoke: string }> {
  const workflowId = await createWorkflow(
    [{ id: 'echo', type: 'transform', config: { expression: 'n' } }],
    [{ source: 'hook', target: 'echo' }],
  );
  return { workflowId, invoke: await deploy(workflowId) };
}

const outboxOf = (workflowId: string): Promise<Array<{ id: string; dedupe_key: string | null; created_at: string }>> =>
  app.orm.em.fork().execute('select id, dedupe_key, created_at from webhook_outbox where workflow_id = ?', [workflowId]);
const succeededOutputs = async (workflowId: string) =>
  (await app.orm.em.fork().find(RunSchema, { workflowId, status: 'succeeded' })).map((r) => r.output as number);

test('concurrent requests are written in batches: each gets a 202, one outbox row and one succeeded run; repeats are deduplicated within and across batches', async () => {
  const { workflowId, invoke } = await deployEcho();
  const unique = Array.from({ length: 60 }, (_, n) => http(app, 'POST', invoke, { body: { n } }));
  // Five delivery ids, each sent four times at once.
  const repeated = Array.from({ length: 20 }, (_, i) =>
    http(app, 'POST', invoke, { body: { n: 1000 + (i % 5) }, headers: { 'x-delivery-id': `d-${i % 5}` } }),
  );
  const [first, dup] = await Promise.all([Promise.all(unique), Promise.all(repeated)]);

  for (const res of [...first, ...dup]) expect(res.status).toBe(202);
  expect(first.every((r) => r.body.status === 'accepted')).toBe(true);
  expect(new Set(first.map((r) => r.body.outboxId)).size).toBe(60);
  for (let d = 0; d < 5; d++) {
    const group = dup.filter((_, i) => i % 5 === d);
    expect(new Set(group.map((r) => r.body.outboxId)).size).toBe(1);
    expect(group.filter((r) => r.body.status === 'accepted')).toHaveLength(1);
  }
  // Across batches: a later repeat names the same entry.
  const later = await http(app, 'POST', invoke, { body: { n: 1000 }, headers: { 'x-delivery-id': 'd-0' } });
  expect(later.body).toMatchObject({ status: 'deduplicated', outboxId: dup[0].body.outboxId });

  const rows = await outboxOf(workflowId);
  expect(rows).toHaveLength(65);
  expect(new Set(rows.map((r) => r.id))).toEqual(new Set([...first, ...dup].map((r) => r.body.outboxId)));
  // Rows of one INSERT share its transaction's timestamp: fewer timestamps than rows means batches.
  expect(new Set(rows.map((r) => String(r.created_at))).size).toBeLessThan(65);

  const outputs = await eventually(
    () => succeededOutputs(workflowId),
    (o) => o.length >= 65,
    60_000,
  );
  expect(outputs.sort((a, b) => a - b)).toEqual([...Array.from({ length: 60 }, (_, n) => n), 1000, 1001, 1002, 1003, 1004]);
  expect(await app.orm.em.fork().count(RunSchema, { workflowId })).toBe(65);
}, 120_000);

test('a row the database refuses fails only its own request; the requests batched with it are accepted and run', async () => {
  const { workflowId, invoke } = await deployEcho();
  const db = app.orm.em.fork();
  // A real PostgreSQL error for one row: a trigger refuses payloads marked `refuse`.
  await db.execute(`create or replace function test_refuse_marked() returns trigger language plpgsql as $$
    begin if new.payload->>'refuse' = 'yes' then raise exception 'refused by the test trigger'; end if; return new; end $$`);
  await db.execute('create trigger test_refuse_marked before insert on webhook_outbox for each row execute function test_refuse_marked()');
  try {
    const bad = http(app, 'POST', invoke, { body: { n: -1, refuse: 'yes' } });
    const good = Array.from({ length: 20 }, (_, n) => http(app, 'POST', invoke, { body: { n } }));
    const [badRes, ...goodRes] = await Promise.all([bad, ...good]);

    expect(badRes.status).toBe(500);
    for (const res of goodRes) expect(res.status).toBe(202);
    // Every acknowledged request has its row; the refused one has none.
    const rows = await outboxOf(workflowId);
    expect(rows.map((r) => r.id).sort()).toEqual(goodRes.map((r) => r.body.outboxId).sort());
  } finally {
    await db.execute('drop trigger test_refuse_marked on webhook_outbox');
  }
  const outputs = await eventually(
    () => succeededOutputs(workflowId),
    (o) => o.length >= 20,
    60_000,
  );
  expect(outputs.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n));
}, 120_000);

test('a redeploy takes effect on the next call (the Response node of the new version replies)', async () => {
  const reply = (v: number) => [{ id: 'reply', type: 'response', config: { body: `={ "v": ${v} }` } }];
  const workflowId = await createWorkflow(reply(1), [{ source: 'hook', target: 'reply' }]);
  const invoke = await deploy(workflowId);
  expect((await http(app, 'POST', invoke, { body: {} })).body).toEqual({ v: 1 });
  const patched = await http(app, 'PATCH', `/api/v1/workflows/${workflowId}`, {
    token: ws.token,
    body: { nodes: [{ id: 'hook', type: 'webhook', config: {} }, ...reply(2)], edges: [{ source: 'hook', target: 'reply' }] },
  });
  expect(patched.status).toBe(200);
  // Saving the draft changes nothing live.
  expect((await http(app, 'POST', invoke, { body: {} })).body).toEqual({ v: 1 });
  expect(await deploy(workflowId)).toBe(invoke);
  expect((await http(app, 'POST', invoke, { body: {} })).body).toEqual({ v: 2 });
}, 60_000);

test('disabling, trashing or deleting the workflow, or removing its webhook node, answers 404 on the next call', async () => {
  const { workflowId, invoke } = await deployEcho();
  const call = async () => (await http(app, 'POST', invoke, { body: { n: 1 } })).status;
  expect(await call()).toBe(202);
  await http(app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: ws.token, body: { status: 'disabled' } });
  expect(await call()).toBe(404);
  await http(app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: ws.token, body: { status: 'deployed' } });
  expect(await call()).toBe(202);
  await http(app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: ws.token, body: { trashed: true } });
  expect(await call()).toBe(404);
  await http(app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: ws.token, body: { trashed: false } });
  await http(app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: ws.token, body: { status: 'deployed' } });
  expect(await call()).toBe(202);

  // The webhook node is removed and the workflow redeployed: its webhook is disabled.
  await http(app, 'PATCH', `/api/v1/workflows/${workflowId}`, {
    token: ws.token,
    body: { nodes: [{ id: 'start', type: 'start', config: {} }], edges: [] },
  });
  await http(app, 'POST', `/api/v1/workflows/${workflowId}/deploy`, { token: ws.token });
  expect(await call()).toBe(404);

  const other = await deployEcho();
  expect((await http(app, 'POST', other.invoke, { body: { n: 1 } })).status).toBe(202);
  expect((await http(app, 'DELETE', `/api/v1/workflows/${other.workflowId}`, { token: ws.token })).status).toBe(200);
  expect((await http(app, 'POST', other.invoke, { body: { n: 1 } })).status).toBe(404);
}, 60_000);

test('a change this process did not make (another API instance) is seen once the cache entry expires', async () => {
  const { workflowId, invoke } = await deployEcho();
  const short = await startTestApp({ webhookTokenCacheMs: 300 });
  try {
    expect((await http(short, 'POST', invoke, { body: { n: 1 } })).status).toBe(202);
    // Written past this instance's ORM, as another instance's change would be.
    await app.orm.em.fork().execute('update webhooks set enabled = false where workflow_id = ?', [workflowId]);
    const status = await eventually(
      async () => (await http(short, 'POST', invoke, { body: { n: 1 } })).status,
      (s) => s === 404,
      20_000,
    );
    expect(status).toBe(404);
  } finally {
    await short.close();
  }
}, 60_000);
