/**
 * A Webhook's "respond when last node finishes" (issue 29): where one node ends the workflow, the
 * caller gets that node's first item, with the webhook's response code, as the external tool
 * answers; imported over HTTP, deployed, and called through its invoke URL (real Temporal).
 */
import { deployWebhook, http, useTestStack } from '../../kit';

const stack = useTestStack();

/** A Set v3.4 node with `[name, value, type]` assignments. */
const setNode = (name: string, fields: Array<[string, string, string]>) => ({
  name,
  type: 'n8n-nodes-base.set',
  typeVersion: 3.4,
  parameters: {
    assignments: { assignments: fields.map(([field, value, type], i) => ({ id: String(i), name: field, value, type })) },
    options: {},
  },
});

/** Webhook (POST, last node) → Set `greeting` → (Split Out of `names` when `split`), as the tool exports it. */
function exportOf(id: string, opts: { split?: boolean; responseData?: string } = {}) {
  const nodes = [
    {
      name: 'Hook',
      type: 'n8n-nodes-base.webhook',
      typeVersion: 2,
      parameters: {
        httpMethod: 'POST',
        path: 'greet',
        responseMode: 'lastNode',
        options: { responseCode: 201, ...(opts.responseData ? { responseData: opts.responseData } : {}) },
      },
    },
    setNode('Greet', [
      ['greeting', '={{ "hi " + $json.body.name }}', 'string'],
      ['names', '={{ $json.body.names }}', 'array'],
    ]),
    ...(opts.split ? [{ name: 'Each', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters: { fieldToSplitOut: 'names' } }] : []),
  ];
  const connections: Record<string, unknown> = { Hook: { main: [[{ node: 'Greet', type: 'main', index: 0 }]] } };
  if (opts.split) connections.Greet = { main: [[{ node: 'Each', type: 'main', index: 0 }]] };
  return JSON.stringify({ id, name: id, nodes: nodes.map((n, i) => ({ ...n, position: [i * 200, 0] })), connections });
}

async function deployed(importJson: string) {
  const created = await stack.api.workflows.create({ importJson });
  expect(created.status).toBe(201);
  expect(created.body.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
  return created.body;
}

test("the caller gets the last node's first item with the webhook's response code", async () => {
  const created = await deployed(exportOf('reply-last-node'));
  expect(created.importReadiness?.conversion?.warnings).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ node: 'Hook', message: expect.stringContaining('"Hook (reply)" added after "Greet"') }),
    ]),
  );
  const { webhookPath } = await deployWebhook(stack, { importJson: exportOf('reply-last-node-2') } as never);
  const res = await http(stack.app, 'POST', webhookPath, { body: { name: 'ada', names: ['x'] } });
  expect({ status: res.status, body: res.body }).toEqual({ status: 201, body: { greeting: 'hi ada', names: ['x'] } });
});

test('a last node passing several items answers with the first of them', async () => {
  const { webhookPath } = await deployWebhook(stack, { importJson: exportOf('reply-first-of-several', { split: true }) } as never);
  const res = await http(stack.app, 'POST', webhookPath, { body: { name: 'bob', names: ['p', 'q'] } });
  // Split Out keeps only the split field by default, as in the tool.
  expect({ status: res.status, body: res.body }).toEqual({ status: 201, body: { names: 'p' } });
});

test('"all entries" is not carried over: named, and the caller gets 202 with the run', async () => {
  const created = await stack.api.workflows.create({ importJson: exportOf('reply-all', { responseData: 'allEntries' }) });
  expect(created.status).toBe(201);
  expect(created.body.importReadiness?.conversion?.readinessIssues).toEqual(
    expect.arrayContaining([expect.objectContaining({ node: 'Hook', kind: 'unsupportedOption' })]),
  );
});

test("a Chat Trigger takes { sessionId, chatInput } posted to its invoke URL and answers with the last node's item", async () => {
  const importJson = JSON.stringify({
    id: 'chat-echo',
    name: 'Chat echo',
    nodes: [
      {
        name: 'When chat message received',
        type: '@n8n/n8n-nodes-langchain.chatTrigger',
        typeVersion: 1.1,
        position: [0, 0],
        parameters: { public: true, options: {} },
      },
      {
        ...setNode('Answer', [
          ['output', '={{ "you said " + $json.chatInput }}', 'string'],
          ['session', '={{ $json.sessionId }}', 'string'],
        ]),
        position: [200, 0],
      },
    ],
    connections: { 'When chat message received': { main: [[{ node: 'Answer', type: 'main', index: 0 }]] } },
  });
  const created = await stack.api.workflows.create({ importJson });
  expect(created.status).toBe(201);
  expect(created.body.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
  const { webhookPath } = await deployWebhook(stack, { importJson: importJson.replace('"chat-echo"', '"chat-echo-2"') } as never);
  const res = await http(stack.app, 'POST', webhookPath, { body: { sessionId: 's1', action: 'sendMessage', chatInput: 'hello' } });
  expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { output: 'you said hello', session: 's1' } });
});
