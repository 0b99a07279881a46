/**
 * The invoke endpoint's edges: a webhook trigger's declared method is enforced (405 with `Allow`,
 * nothing accepted, no run), and a body without fields of its own (a JSON array) reaches the run
 * as the body itself, in our input (`body`) and in the external tool's item (`$json.body`).
 */
import { RunSchema, WebhookOutboxSchema } from '../../../db/entities';
import { deployWebhook, eventually, expectStatus, http, node, useTestStack, waitRun, webhookChain } from '../../kit';

const stack = useTestStack({ temporal: { dispatcher: true } });

const runsOf = (workflowId: string) => stack.app.orm.em.fork().find(RunSchema, { workflowId });
const outboxOf = (workflowId: string) => stack.app.orm.em.fork().count(WebhookOutboxSchema, { workflowId });

/** The one run a webhook call started, once it ended. */
async function onlyRun(workflowId: string) {
  const runs = await eventually(
    () => runsOf(workflowId),
    (r) => r.length === 1,
  );
  return waitRun(stack, runs[0]!.id);
}

test('a webhook declared GET refuses POST with 405 and Allow, and the reverse; nothing is accepted, no run starts', async () => {
  const graphGet = {
    nodes: [node.webhook('hook', { method: 'GET' }), node.transform('echo', '$')],
    edges: [{ id: 'e', source: 'hook', target: 'echo' }],
  };
  const onlyGet = await deployWebhook(stack, graphGet, { name: 'Only GET' });
  const refused = await http(stack.app, 'POST', onlyGet.webhookPath, { body: { a: 1 } });
  expect(refused.status).toBe(405);
  expect(refused.headers.get('allow')).toBe('GET, HEAD');
  expect(refused.body).toEqual({ error: 'This webhook accepts GET, HEAD only.' });
  expect((await http(stack.app, 'DELETE', onlyGet.webhookPath)).status).toBe(405);
  expect(await outboxOf(onlyGet.workflowId)).toBe(0);
  expect((await http(stack.app, 'GET', `${onlyGet.webhookPath}?a=1`)).status).toBe(202);
  expect(await onlyRun(onlyGet.workflowId)).toMatchObject({ status: 'succeeded', output: { a: '1' } });

  const graphPost = {
    nodes: [node.webhook('hook', { method: 'POST' }), node.transform('echo', '$')],
    edges: [{ id: 'e', source: 'hook', target: 'echo' }],
  };
  const onlyPost = await deployWebhook(stack, graphPost, { name: 'Only POST' });
  const getRefused = await http(stack.app, 'GET', `${onlyPost.webhookPath}?a=1`);
  expect([getRefused.status, getRefused.headers.get('allow')]).toEqual([405, 'POST']);
  expect(await outboxOf(onlyPost.workflowId)).toBe(0);
  expect((await http(stack.app, 'POST', onlyPost.webhookPath, { body: { b: 2 } })).status).toBe(202);
  expect(await onlyRun(onlyPost.workflowId)).toMatchObject({ status: 'succeeded', output: { b: 2 } });
  expect(await runsOf(onlyGet.workflowId)).toHaveLength(1);

  // Undeclared (ANY, the default): every method is taken, as before.
  const anyMethod = await deployWebhook(stack, webhookChain(node.transform('echo', '$')), { name: 'Any method' });
  expect((await http(stack.app, 'PATCH', anyMethod.webhookPath, { body: { c: 3 } })).status).toBe(202);
});

test('a JSON array body is the run input body itself, not wrapped twice', async () => {
  const { workflowId, webhookPath } = await deployWebhook(stack, webhookChain(node.transform('echo', '$')));
  const items = [
    { sku: 'a-1', qty: 2 },
    { sku: 'b-2', qty: 1 },
  ];
  expect((await http(stack.app, 'POST', webhookPath, { body: items })).status).toBe(202);
  const run = await onlyRun(workflowId);
  expect(run.status).toBe('succeeded');
  expect(run.output).toMatchObject({ body: items, _webhook: { method: 'POST', bodyWrapped: true } });
});

test("an imported external-tool webhook sees a JSON array as $json.body, and an object's fields as before", async () => {
  const external = {
    name: 'Orders hook',
    nodes: [
      {
        parameters: { httpMethod: 'POST', path: 'orders', responseMode: 'onReceived', options: {} },
        id: '8c4f3b1e-0000-4000-8000-000000000001',
        name: 'Webhook',
        type: 'n8n-nodes-base.webhook',
        typeVersion: 2,
        position: [0, 0],
      },
    ],
    connections: {},
  };
  const created = expectStatus(await stack.api.workflows.create({ importJson: JSON.stringify(external) }), 201, 'import');
  const workflowId = created.body.workflow.id;
  const deployed = expectStatus(await stack.api.workflows.deploy(workflowId), 200, 'deploy');
  const path = new URL(deployed.body.webhookUrl!).pathname;
  const items = [{ sku: 'a-1' }, { sku: 'b-2' }];
  expect((await http(stack.app, 'POST', path, { body: items })).status).toBe(202);
  const arrayRun = await onlyRun(workflowId);
  expect(arrayRun.status).toBe('succeeded');
  expect((arrayRun.output as { body: unknown }).body).toEqual(items);

  expect((await http(stack.app, 'POST', path, { body: { order: 7 } })).status).toBe(202);
  const runs = await eventually(
    () => runsOf(workflowId),
    (r) => r.length === 2 && r.every((x) => x.status === 'succeeded'),
  );
  const objectRun = runs.find((r) => r.id !== arrayRun.id)!;
  expect((objectRun.output as { body: unknown }).body).toEqual({ order: 7 });
  // The imported trigger declares POST: a GET is refused.
  expect((await http(stack.app, 'GET', path)).status).toBe(405);
});
