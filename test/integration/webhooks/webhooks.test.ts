/** Public webhooks: every row of the spec's response table, dedupe, the durable outbox, limits and load. */
import { RunSchema, WebhookOutboxSchema } from '../../../db/entities';
import { startFakeServer } from '../../support/fakeServer';
import { startTestApp } from '../../support/harness';
import {
  createWorkspace,
  deployWebhook,
  eventually,
  http,
  node,
  useTestStack,
  waitRun,
  webhookChain,
  type CreatedWorkflow,
} from '../../kit';

// The dispatcher's backpressure cap (OUTBOX_MAX_QUEUED_RUNS, 200 by default) is lowered so that
// the burst below crosses it; the other cases start a handful of runs at most.
const OUTBOX_MAX_QUEUED_RUNS = 40;
const stack = useTestStack({
  config: { webhookSyncBudgetMs: 5_000, bodyLimit: '64kb', outboxMaxQueuedRuns: OUTBOX_MAX_QUEUED_RUNS },
  temporal: { dispatcher: true },
});

const runsOf = (workflowId: string) => stack.app.orm.em.fork().find(RunSchema, { workflowId });

test('deploy provisions a webhook with an unguessable URL; the list and get routes show its invoke link', async () => {
  const { workflowId, webhookUrl, deploy: body } = await deployWebhook(stack, webhookChain(node.transform('echo', 'x')));
  expect(body.webhookUrl).toMatch(new RegExp(`^${stack.app.url}/api/webhooks/whk_[A-Za-z0-9_-]{32}$`));
  expect(body.links.invoke).toBe(body.webhookUrl);
  const list = await stack.api.webhooks.list(`?workflowId=${workflowId}`);
  expect(list.body.webhooks).toHaveLength(1);
  expect(list.body.links).toEqual([{ invoke: body.webhookUrl }]);
  const one = await stack.api.webhooks.get(list.body.webhooks[0].id);
  expect(one.body.webhook).toMatchObject({ workflowId, nodeId: 'hook', enabled: true, invokeUrl: body.webhookUrl });
  // Only a digest is stored.
  const rows: Array<Record<string, unknown>> = await stack.app.orm.em
    .fork()
    .getConnection()
    .execute('select * from webhooks where workflow_id = ?', [workflowId]);
  expect(JSON.stringify(rows)).not.toContain(new URL(webhookUrl).pathname.split('/').pop());
  // Redeploying keeps the URL.
  const again = await stack.api.workflows.deploy(workflowId);
  expect(again.body.webhookUrl).toBe(body.webhookUrl);
  // Other workspaces get 403.
  const other = await createWorkspace(stack.app, 'Other');
  const foreign = await http(stack.app, 'GET', `/api/v1/webhooks/${list.body.webhooks[0].id}`, { token: other.token });
  expect(foreign.status).toBe(403);
  expect(foreign.body).toEqual({ error: 'API key cannot access this webhook' });
  expect((await stack.as(other.token).webhooks.list()).body.webhooks).toEqual([]);
});

test('without a Response node: 202 accepted from the outbox, and the run starts with the payload and _webhook', async () => {
  const { workflowId, webhookPath: invoke } = await deployWebhook(stack, webhookChain(node.transform('echo', '$')));
  const res = await http(stack.app, 'POST', `${invoke}?source=test`, {
    body: { order: 7 },
    headers: { authorization: 'Bearer secret', cookie: 'a=b', 'x-custom': 'yes' },
  });
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ token: invoke.split('/').pop(), outboxId: expect.stringMatching(/^whe_/), status: 'accepted' });
  const runs = await eventually(
    () => runsOf(workflowId),
    (r) => r.length === 1,
  );
  const run = await waitRun(stack, runs[0].id);
  expect(run).toMatchObject({ status: 'succeeded', trigger: 'webhook' });
  expect(run.output).toMatchObject({ order: 7, _webhook: { method: 'POST', query: { source: 'test' }, headers: { 'x-custom': 'yes' } } });
  const { _webhook } = run.output as { _webhook: { headers: Record<string, string> } };
  expect(_webhook.headers.authorization).toBeUndefined();
  expect(_webhook.headers.cookie).toBeUndefined();
});

test('GET uses the query string as payload; form and text bodies are accepted too', async () => {
  const { workflowId, webhookPath: invoke } = await deployWebhook(stack, webhookChain(node.transform('echo', '$')));
  expect((await http(stack.app, 'GET', `${invoke}?a=1&b=two`)).status).toBe(202);
  const form = await fetch(`${stack.app.url}${invoke}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'x=1&y=2',
  });
  expect(form.status).toBe(202);
  const text = await fetch(`${stack.app.url}${invoke}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'hello' });
  expect(text.status).toBe(202);
  const runs = await eventually(
    () => runsOf(workflowId),
    (r) => r.length === 3 && r.every((x) => x.status === 'succeeded'),
  );
  const outputs = runs.map((r) => r.output as Record<string, unknown>);
  expect(outputs).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ a: '1', b: 'two' }),
      expect.objectContaining({ x: '1', y: '2' }),
      expect.objectContaining({ body: 'hello' }),
    ]),
  );
});

test('a repeated provider event is deduplicated and starts nothing new', async () => {
  const { workflowId, webhookPath: invoke } = await deployWebhook(stack, webhookChain(node.transform('echo', '1')));
  const first = await stack.api.webhooks.invoke(invoke, { a: 1 }, { headers: { 'x-github-delivery': 'd-1' } });
  const second = await stack.api.webhooks.invoke(invoke, { a: 1 }, { headers: { 'x-github-delivery': 'd-1' } });
  expect(first.body.status).toBe('accepted');
  expect(second.status).toBe(202);
  expect(second.body).toEqual({ ...first.body, status: 'deduplicated' });
  const stripe = await stack.api.webhooks.invoke(invoke, {}, { headers: { 'idempotency-key': 'evt_1' } });
  const stripeAgain = await stack.api.webhooks.invoke(invoke, {}, { headers: { 'idempotency-key': 'evt_1' } });
  expect([stripe.body.status, stripeAgain.body.status]).toEqual(['accepted', 'deduplicated']);
  await eventually(
    () => runsOf(workflowId),
    (r) => r.length === 2,
  );
  await new Promise((r) => setTimeout(r, 500));
  expect(await runsOf(workflowId)).toHaveLength(2);
});

test('a Response node replies with its status, headers and body while the run goes on', async () => {
  const { workflowId, webhookPath: invoke } = await deployWebhook(
    stack,
    webhookChain(
      node.of('response', 'reply', { status: 201, headers: { 'x-reply': 'yes' }, body: '={ "got": order }' }),
      node.wait('later', 1),
    ),
  );
  const res = await http(stack.app, 'POST', invoke, { body: { order: 9 } });
  expect(res.status).toBe(201);
  expect(res.headers.get('x-reply')).toBe('yes');
  expect(res.body).toEqual({ got: 9 });
  const [run] = await runsOf(workflowId);
  expect(['running', 'waiting']).toContain(run.status);
  expect((await waitRun(stack, run.id)).status).toBe('succeeded');
});

test('a run that parks on a durable wait before replying answers 202 { runId, status: waiting }', async () => {
  const { webhookPath: invoke } = await deployWebhook(stack, {
    nodes: [node.webhook(), node.of('approval', 'gate'), node.of('response', 'reply', { body: 'late' })],
    edges: [
      { id: 'e0', source: 'hook', target: 'gate' },
      { id: 'e1', source: 'gate', target: 'reply', sourceHandle: 'approved' },
    ],
  });
  const res = await stack.api.webhooks.invoke<{ runId: string; status: string }>(invoke, {});
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ runId: expect.stringMatching(/^run_/), status: 'waiting' });
  await http(stack.app, 'POST', `/api/v1/runs/${res.body.runId}/cancel`, { token: stack.ws.token });
});

test('over the synchronous budget the caller gets 202 { status: processing }, and the run still finishes', async () => {
  const slow = await startFakeServer(() => ({ delayMs: 1500, body: { slow: true } }));
  const fast = await startTestApp({ webhookSyncBudgetMs: 300 });
  try {
    const { workflowId, webhookPath: invoke } = await deployWebhook(
      stack,
      webhookChain(node.of('http', 'call', { method: 'GET', url: `${slow.url}/slow` }), node.of('response', 'reply', { body: 'done' })),
    );
    const res = await http(fast, 'POST', invoke, { body: {} });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ status: 'processing' });
    const [run] = await runsOf(workflowId);
    expect((await waitRun(stack, run.id)).status).toBe('succeeded');
  } finally {
    await fast.close();
    await slow.close();
  }
});

test('a run that ends without reaching its Response node answers 200 { token, run }', async () => {
  const { webhookPath: invoke } = await deployWebhook(stack, {
    nodes: [
      node.webhook(),
      node.of('condition', 'check', { expression: 'reply = true' }),
      node.of('response', 'reply', { body: 'replied' }),
      node.transform('quiet', '"no reply"'),
    ],
    edges: [
      { id: 'e0', source: 'hook', target: 'check' },
      { id: 'e1', source: 'check', target: 'reply', sourceHandle: 'true' },
      { id: 'e2', source: 'check', target: 'quiet', sourceHandle: 'false' },
    ],
  });
  const replied = await http(stack.app, 'POST', invoke, { body: { reply: true } });
  expect([replied.status, replied.body]).toEqual([200, 'replied']);
  const quiet = await http(stack.app, 'POST', invoke, { body: { reply: false } });
  expect(quiet.status).toBe(200);
  expect(quiet.body).toMatchObject({
    token: invoke.split('/').pop(),
    run: { status: 'succeeded', output: 'no reply', trigger: 'webhook' },
  });
});

test('without SECRET_KEY a deploy with a webhook trigger is 503 and pins nothing; one without webhooks deploys', async () => {
  const keyless = await startTestApp({ secretKey: undefined });
  try {
    const hooked = await http<CreatedWorkflow>(keyless, 'POST', '/api/v1/workflows', {
      token: stack.ws.token,
      body: { nodes: [{ id: 'hook', type: 'webhook', config: {} }], edges: [] },
    });
    const refused = await http(keyless, 'POST', `/api/v1/workflows/${hooked.body.workflow.id}/deploy`, { token: stack.ws.token });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ error: 'Webhooks are unavailable: SECRET_KEY is not configured.' });
    expect(
      (
        await http<{ versions: unknown[] }>(keyless, 'GET', `/api/v1/workflows/${hooked.body.workflow.id}/versions`, {
          token: stack.ws.token,
        })
      ).body.versions,
    ).toEqual([]);
    const plain = await http<CreatedWorkflow>(keyless, 'POST', '/api/v1/workflows', { token: stack.ws.token, body: {} });
    const deployed = await http(keyless, 'POST', `/api/v1/workflows/${plain.body.workflow.id}/deploy`, { token: stack.ws.token });
    expect(deployed.status).toBe(200);
    expect(deployed.body).toMatchObject({ webhookUrl: null, webhooks: [], links: { webhook: null, invoke: null } });
  } finally {
    await keyless.close();
  }
});

test('unknown tokens, disabled and trashed workflows are 404 and start nothing', async () => {
  expect((await http(stack.app, 'POST', '/api/webhooks/whk_doesnotexist0000000000000000000', { body: {} })).status).toBe(404);
  const { workflowId, webhookPath: invoke } = await deployWebhook(stack, webhookChain());
  await http(stack.app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: stack.ws.token, body: { status: 'disabled' } });
  expect((await http(stack.app, 'POST', invoke, { body: {} })).status).toBe(404);
  await http(stack.app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: stack.ws.token, body: { status: 'deployed' } });
  expect((await http(stack.app, 'POST', invoke, { body: {} })).status).toBe(202);
  await http(stack.app, 'PATCH', `/api/v1/workflows/${workflowId}`, { token: stack.ws.token, body: { trashed: true } });
  expect((await http(stack.app, 'POST', invoke, { body: {} })).status).toBe(404);
  expect(await stack.app.orm.em.fork().count(WebhookOutboxSchema, { workflowId })).toBe(1);
});

test('oversized bodies are 413 and malformed JSON is 400', async () => {
  const { webhookPath: invoke } = await deployWebhook(stack, webhookChain());
  expect((await http(stack.app, 'POST', invoke, { body: { pad: 'x'.repeat(100 * 1024) } })).status).toBe(413);
  const bad = await http(stack.app, 'POST', invoke, { rawBody: '{"a":' });
  expect(bad.status).toBe(400);
  expect(bad.body).toEqual({ error: 'Request body is not valid JSON.' });
});

test('accepted requests survive an API restart before dispatch: nothing is lost', async () => {
  const { workflowId, webhookPath: invoke } = await deployWebhook(stack, webhookChain(node.transform('echo', 'n')));
  // An API instance without a dispatcher accepts, then goes away before handing anything over.
  const acceptOnly = await startTestApp();
  for (let n = 0; n < 5; n++) expect((await http(acceptOnly, 'POST', invoke, { body: { n } })).status).toBe(202);
  await acceptOnly.close();
  // All five are durably stored (the surviving instance's dispatcher may already be handing some over)…
  expect(await stack.app.orm.em.fork().count(WebhookOutboxSchema, { workflowId })).toBe(5);
  // …and it picks every one of them up.
  const runs = await eventually(
    () => runsOf(workflowId),
    (r) => r.length === 5 && r.every((x) => x.status === 'succeeded'),
  );
  expect(runs.map((r) => r.output).sort()).toEqual([0, 1, 2, 3, 4]);
  expect(await stack.app.orm.em.fork().count(WebhookOutboxSchema, { workflowId, status: 'dispatched' })).toBe(5);
});

/**
 * 150 (the benchmark measures throughput at 1,000 and more): still far over the database pool
 * (10 connections); over one dispatch pass (at most 100 entries, 32 starts in flight), so the
 * dispatcher's "a full batch: look again at once" path runs; gathered by the outbox writer
 * into several group commits (two batches on the wire at once); and far over the backpressure
 * cap set above, so whenever the worker falls behind the dispatcher stops handing over, then
 * resumes.
 * A lost, doubled or stuck entry in any of these steps fails the counts below. (It was 600 with
 * the default cap of 200: the same steps, four times the runs, about a minute of the suite.)
 */
const BURST = 150;

test(`${BURST} concurrent webhook requests are all answered and start exactly one run each`, async () => {
  const { workflowId, webhookPath: invoke } = await deployWebhook(stack, webhookChain(node.transform('echo', 'i')));
  const results = await Promise.all(Array.from({ length: BURST }, (_, i) => http(stack.app, 'POST', invoke, { body: { i } })));
  expect(results.filter((r) => r.status === 202)).toHaveLength(BURST);
  // A completeness check, not a speed one: the bound only means "stuck" (two test lanes on 2
  // cores finished 1,000 runs in 90–200 s).
  const runs = await eventually(
    () => runsOf(workflowId),
    (r) => r.length === BURST && r.every((x) => x.status === 'succeeded'),
    360_000,
  );
  expect(runs).toHaveLength(BURST);
  expect(new Set(runs.map((r) => r.output)).size).toBe(BURST);
}, 420_000);
