/**
 * The invoke route's hot path (services/webhooks/intake.ts): group-committed outbox writes and
 * the token cache with its invalidation. The cache TTL is a minute here, so every change below
 * is seen through explicit invalidation, not expiry.
 */
import { RunSchema } from '../../../db/entities';
import { startTestApp } from '../../support/harness';
import { deployWorkflow, eventually, expectStatus, http, node, useTestStack, webhookChain } from '../../kit';

const stack = useTestStack({ config: { webhookSyncBudgetMs: 10_000, webhookTokenCacheMs: 60_000 }, temporal: { dispatcher: true } });

/** Deploys a webhook → echo workflow; `invoke` is its webhook's path. */
async function deployEcho(): Promise<{ workflowId: string; invoke: string }> {
  const { workflowId, webhookPath } = await deployWorkflow(stack, webhookChain(node.transform('echo', 'n')));
  return { workflowId, invoke: String(webhookPath) };
}

/** Deploys the workflow's draft again (200); returns its webhook's path. */
async function redeploy(workflowId: string): Promise<string> {
  const deployed = expectStatus(await stack.api.workflows.deploy(workflowId), 200, 'deploy');
  return new URL(String(deployed.body.webhookUrl)).pathname;
}

const outboxOf = (workflowId: string): Promise<Array<{ id: string; dedupe_key: string | null; created_at: string }>> =>
  stack.app.orm.em.fork().execute('select id, dedupe_key, created_at from webhook_outbox where workflow_id = ?', [workflowId]);
const succeededOutputs = async (workflowId: string) =>
  (await stack.app.orm.em.fork().find(RunSchema, { workflowId, status: 'succeeded' })).map((r) => r.output as number);

test('concurrent requests are written in batches: each gets a 202, one outbox row and one succeeded run; repeats are deduplicated within and across batches', async () => {
  const { workflowId, invoke } = await deployEcho();
  const unique = Array.from({ length: 60 }, (_, n) => stack.api.webhooks.invoke(invoke, { n }));
  // Five delivery ids, each sent four times at once.
  const repeated = Array.from({ length: 20 }, (_, i) =>
    stack.api.webhooks.invoke(invoke, { n: 1000 + (i % 5) }, { headers: { 'x-delivery-id': `d-${i % 5}` } }),
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
  const later = await stack.api.webhooks.invoke(invoke, { n: 1000 }, { headers: { 'x-delivery-id': 'd-0' } });
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
  expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId })).toBe(65);
}, 120_000);

test('a row the database refuses fails only its own request; the requests batched with it are accepted and run', async () => {
  const { workflowId, invoke } = await deployEcho();
  const db = stack.app.orm.em.fork();
  // A real PostgreSQL error for one row: a trigger refuses payloads marked `refuse`.
  await db.execute(`create or replace function test_refuse_marked() returns trigger language plpgsql as $$
    begin if new.payload->>'refuse' = 'yes' then raise exception 'refused by the test trigger'; end if; return new; end $$`);
  await db.execute('create trigger test_refuse_marked before insert on webhook_outbox for each row execute function test_refuse_marked()');
  try {
    const bad = stack.api.webhooks.invoke(invoke, { n: -1, refuse: 'yes' });
    const good = Array.from({ length: 20 }, (_, n) => stack.api.webhooks.invoke(invoke, { n }));
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
  const reply = (v: number) => node.of('response', 'reply', { body: `={ "v": ${v} }` });
  const { workflowId, webhookPath } = await deployWorkflow(stack, webhookChain(reply(1)));
  const invoke = String(webhookPath);
  expect((await stack.api.webhooks.invoke(invoke, {})).body).toEqual({ v: 1 });
  const patched = await stack.api.workflows.update(workflowId, webhookChain(reply(2)));
  expect(patched.status).toBe(200);
  // Saving the draft changes nothing live.
  expect((await stack.api.webhooks.invoke(invoke, {})).body).toEqual({ v: 1 });
  expect(await redeploy(workflowId)).toBe(invoke);
  expect((await stack.api.webhooks.invoke(invoke, {})).body).toEqual({ v: 2 });
}, 60_000);

test('disabling, trashing or deleting the workflow, or removing its webhook node, answers 404 on the next call', async () => {
  const { workflowId, invoke } = await deployEcho();
  const call = async () => (await stack.api.webhooks.invoke(invoke, { n: 1 })).status;
  expect(await call()).toBe(202);
  await http(stack.app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: stack.ws.token, body: { status: 'disabled' } });
  expect(await call()).toBe(404);
  await http(stack.app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: stack.ws.token, body: { status: 'deployed' } });
  expect(await call()).toBe(202);
  await http(stack.app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: stack.ws.token, body: { trashed: true } });
  expect(await call()).toBe(404);
  await http(stack.app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: stack.ws.token, body: { trashed: false } });
  await http(stack.app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: stack.ws.token, body: { status: 'deployed' } });
  expect(await call()).toBe(202);

  // The webhook node is removed and the workflow redeployed: its webhook is disabled.
  await http(stack.app, 'PATCH', `/api/v1/workflows/${workflowId}`, {
    token: stack.ws.token,
    body: { nodes: [{ id: 'start', type: 'start', config: {} }], edges: [] },
  });
  await http(stack.app, 'POST', `/api/v1/workflows/${workflowId}/deploy`, { token: stack.ws.token });
  expect(await call()).toBe(404);

  const other = await deployEcho();
  expect((await stack.api.webhooks.invoke(other.invoke, { n: 1 })).status).toBe(202);
  expect((await http(stack.app, 'DELETE', `/api/v1/workflows/${other.workflowId}`, { token: stack.ws.token })).status).toBe(200);
  expect((await stack.api.webhooks.invoke(other.invoke, { n: 1 })).status).toBe(404);
}, 60_000);

test('a change this process did not make (another API instance) is seen once the cache entry expires', async () => {
  const { workflowId, invoke } = await deployEcho();
  const short = await startTestApp({ webhookTokenCacheMs: 300 });
  try {
    expect((await http(short, 'POST', invoke, { body: { n: 1 } })).status).toBe(202);
    // Written past this instance's ORM, as another instance's change would be.
    await stack.app.orm.em.fork().execute('update webhooks set enabled = false where workflow_id = ?', [workflowId]);
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
