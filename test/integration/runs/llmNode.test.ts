/**
 * The `llm` node (docs/workflow-graph.md, "llm"): real runs on Temporal call the loopback model
 * server (test/fakes/llm.ts) through services/models/chat.ts, with expressions in the prompt,
 * structured output, HTTP tools the model calls, the conversation kept within the run, token
 * usage on the step and its credits on the run.
 */
import http from 'node:http';
import { listenOnLoopback } from '../../support/fakeServer';
import { lastMessage, startFakeLlm, toolResults, type FakeLlmServer } from '../../fakes/llm';
import { chain, executeAndWait, http as request, node, runWorkflow, useTestStack, type CredentialEnvelope } from '../../kit';

let llm: FakeLlmServer;
let weather: { url: string; close(): Promise<void> };
const weatherCalls: string[] = [];

const stack = useTestStack(async () => {
  llm = await startFakeLlm();
  return {
    config: {
      llm: {
        baseUrl: llm.url,
        apiKey: llm.apiKey,
        model: llm.model,
        timeoutMs: 10_000,
        maxRetries: 0,
        prices: { '*': { input: 1, output: 2 } },
      },
    },
  };
});
beforeAll(async () => {
  weather = await listenOnLoopback(
    http.createServer((req, res) => {
      weatherCalls.push(req.url ?? '');
      const city = new URL(req.url ?? '/', 'http://x').searchParams.get('city');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ city, tempC: city === 'Paris' ? 21 : 5 }));
    }),
  );
});
afterAll(async () => {
  await weather?.close();
  await llm?.close();
});

const outputOf = (run: { steps: Array<{ nodeId: string; output: unknown }> }, id: string) =>
  run.steps.find((s) => s.nodeId === id)?.output as Record<string, any>;

test('a prompt with expressions is answered by the deployment model; usage is on the step and credits on the run', async () => {
  llm.reply((req) => ({ content: `Hello ${lastMessage(req)}`, usage: { prompt_tokens: 1000, completion_tokens: 500 } }));
  const { run } = await runWorkflow(
    stack,
    chain(node.of('llm', 'ask', { system: 'Be brief.', prompt: '="to " & name', temperature: 0.2 })),
    { name: 'Ada' },
  );
  expect(run.status).toBe('succeeded');
  const seen = llm.chats.at(-1)!;
  expect(seen.messages).toEqual([
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'to Ada' },
  ]);
  expect(seen.body.temperature).toBe(0.2);
  expect(outputOf(run, 'ask')).toEqual({
    text: 'Hello to Ada',
    model: llm.model,
    usage: { promptTokens: 1000, completionTokens: 500, totalTokens: 1500 },
    calls: 1,
    toolCalls: [],
  });
  // One credit for the step, 1 + 1 for the tokens (1 per 1,000 input, 2 per 1,000 output).
  expect(run.costCredits).toBe(3);
});

test('outputSchema asks for JSON and parses the answer; a non-JSON answer fails the node', async () => {
  llm.reply((req) => {
    const system = lastMessage(req, 'system');
    return { content: system.includes('"sentiment"') ? '```json\n{"sentiment":"positive"}\n```' : 'no idea' };
  });
  const schema = { type: 'object', properties: { sentiment: { type: 'string', enum: ['positive', 'negative'] } } };
  const { run } = await runWorkflow(stack, chain(node.of('llm', 'classify', { prompt: '=text', outputSchema: schema })), { text: 'great' });
  expect(run.status).toBe('succeeded');
  expect(outputOf(run, 'classify').json).toEqual({ sentiment: 'positive' });

  llm.reply(() => ({ content: 'Sure! It is positive.' }));
  const failed = await runWorkflow(stack, chain(node.of('llm', 'classify', { prompt: 'x', outputSchema: schema })), {});
  expect(failed.run.status).toBe('failed');
  expect(failed.run.error).toMatch(/not the JSON its outputSchema asks for/);
});

test('the model calls an HTTP tool with its arguments, and answers from the result', async () => {
  llm.reply((req) => {
    const results = toolResults(req);
    if (results.length === 0) return { toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }] };
    return { content: `It is ${JSON.parse(results[0].content).tempC} degrees.` };
  });
  const tools = [
    {
      name: 'weather',
      description: 'Current weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      http: { method: 'GET', url: `${weather.url}/weather`, query: { units: 'metric' } },
    },
  ];
  const before = weatherCalls.length;
  const { run } = await runWorkflow(stack, chain(node.of('llm', 'agent', { prompt: 'Weather in Paris?', tools })));
  expect(run.status).toBe('succeeded');
  expect(weatherCalls.slice(before)).toEqual(['/weather?units=metric&city=Paris']);
  const out = outputOf(run, 'agent');
  expect(out.text).toBe('It is 21 degrees.');
  expect(out.calls).toBe(2);
  expect(out.toolCalls).toEqual([{ round: 1, name: 'weather', arguments: { city: 'Paris' }, ok: true, status: 200 }]);
  expect(llm.chats.at(-1)!.tools.map((t) => t.function.name)).toEqual(['weather']);
});

test('historyWindow keeps the conversation, which a later call of the run reads back', async () => {
  llm.reply((req) => ({ content: `turn ${req.messages.filter((m) => m.role === 'user').length}` }));
  const { run } = await runWorkflow(
    stack,
    chain(
      node.of('llm', 'first', { prompt: 'one', historyWindow: 10 }),
      node.of('llm', 'second', { prompt: 'two', history: '=$nodes.first.messages', historyWindow: 3 }),
    ),
  );
  expect([run.status, run.error ?? null]).toEqual(['succeeded', null]);
  expect(outputOf(run, 'second').text).toBe('turn 2');
  expect(outputOf(run, 'second').messages).toEqual([
    { role: 'assistant', content: 'turn 1' },
    { role: 'user', content: 'two' },
    { role: 'assistant', content: 'turn 2' },
  ]);
});

test('an invalid llm config is refused at deploy with the field named', async () => {
  const res = await request<{ error: { message: string } }>(stack.app, 'POST', '/api/v1/workflows', {
    token: stack.ws.token,
    body: { name: 'bad llm', ...chain(node.of('llm', 'ask', { prompt: '', maxToolRounds: 99 })) },
  });
  expect(res.status).toBe(201);
  const deployed = await request<{ error: { message: string } }>(
    stack.app,
    'POST',
    `/api/v1/workflows/${(res.body as any).workflow.id}/deploy`,
    {
      token: stack.ws.token,
    },
  );
  expect(deployed.status).toBe(400);
  expect(JSON.stringify(deployed.body)).toMatch(/config\.prompt: must not be empty/);
  expect(JSON.stringify(deployed.body)).toMatch(/config\.maxToolRounds/);
});

// Last: from here on the workspace has an llm credential, which its model calls use by default.
test("a workspace llm credential named by the node is used instead of the deployment's model", async () => {
  const other = await startFakeLlm({ apiKey: 'sk-other', model: 'other-model' });
  try {
    const created = await request<CredentialEnvelope>(stack.app, 'POST', '/api/v1/credentials', {
      token: stack.ws.token,
      body: { name: 'My OpenAI', type: 'llm', value: { baseUrl: other.url, apiKey: 'sk-other', model: 'other-model' } },
    });
    expect(created.status).toBe(201);
    const { run } = await runWorkflow(stack, chain(node.of('llm', 'ask', { credentialId: 'my openai', prompt: 'hi' })));
    expect(run.status).toBe('succeeded');
    expect(outputOf(run, 'ask')).toMatchObject({ text: 'echo: hi', model: 'other-model' });
    expect(other.chats).toHaveLength(1);
  } finally {
    await other.close();
  }
});

test('an imported AI Agent with its OpenAI chat model runs on the workspace credential of the same name', async () => {
  const created = await request<CredentialEnvelope>(stack.app, 'POST', '/api/v1/credentials', {
    token: stack.ws.token,
    body: { name: 'OpenAi account', type: 'llm', value: { baseUrl: llm.url, apiKey: llm.apiKey, model: llm.model } },
  });
  expect(created.status).toBe(201);
  llm.reply((req) => ({ content: `${lastMessage(req, 'system')} / ${lastMessage(req)}` }));
  const LC = '@n8n/n8n-nodes-langchain.';
  const exported = {
    id: 'imported-agent',
    name: 'Imported agent',
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
      {
        name: 'AI Agent',
        type: `${LC}agent`,
        typeVersion: 1.7,
        position: [200, 0],
        parameters: { promptType: 'define', text: '=Question: {{ $json.question }}', options: { systemMessage: 'Be kind.' } },
      },
      {
        name: 'OpenAI Chat Model',
        type: `${LC}lmChatOpenAi`,
        typeVersion: 1,
        position: [200, 200],
        parameters: { model: 'gpt-4o-mini', options: {} },
        credentials: { openAiApi: { id: '9', name: 'OpenAi account' } },
      },
    ],
    connections: {
      Start: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
      'OpenAI Chat Model': { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
    },
  };
  const imported = await request<any>(stack.app, 'POST', '/api/v1/workflows', {
    token: stack.ws.token,
    body: { importJson: JSON.stringify(exported) },
  });
  expect(imported.status).toBe(201);
  const workflowId = imported.body.workflow.id as string;
  const validated = await request<any>(stack.app, 'GET', `/api/v1/workflows/${workflowId}/validate`, { token: stack.ws.token });
  expect(validated.body.deploymentReadiness).toEqual({ ready: true, blockers: [] });
  expect((await request(stack.app, 'POST', `/api/v1/workflows/${workflowId}/deploy`, { token: stack.ws.token })).status).toBe(200);
  const run = await executeAndWait(stack, workflowId, { question: 'why?' });
  expect([run.status, run.error ?? null]).toEqual(['succeeded', null]);
  expect(run.output).toEqual({ output: 'Be kind. / Question: why?' });
  expect(llm.chats.at(-1)!.model).toBe('gpt-4o-mini');
});
