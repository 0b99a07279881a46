/**
 * The `llm` node against a hostile model (issue 29, AI nodes): a 3 MB answer, tool-call
 * arguments that are not JSON, a model that calls tools for ever, one answer with 40 tool calls,
 * and a prompt over the config limit. Each ends cleanly at the node (or at deploy), within its
 * bounds, while workspace B's probe keeps succeeding.
 */
import http from 'node:http';
import { listenOnLoopback } from '../support/fakeServer';
import { lastMessage, startFakeLlm, toolResults, type FakeLlmServer } from '../fakes/llm';
import { abuseStackPerFile, expectFailedNode, type GraphNode } from './kit';

const kit = abuseStackPerFile({ allowPrivateNetworks: true });

let llm: FakeLlmServer;
let tool: { url: string; close(): Promise<void> };
let toolHits = 0;
beforeAll(async () => {
  llm = await startFakeLlm();
  tool = await listenOnLoopback(
    http.createServer((_req, res) => {
      toolHits += 1;
      res.end('{"ok":true}');
    }),
  );
  llm.reply((req) => {
    const prompt = lastMessage(req);
    if (prompt === 'HUGE') return { content: 'x'.repeat(3 * 1024 * 1024) };
    if (prompt === 'MALFORMED')
      return toolResults(req).length ? { content: 'recovered' } : { toolCalls: [{ name: 'lookup', arguments: '{"q": not json' }] };
    if (prompt === 'LOOP') return { toolCalls: [{ name: 'nope', arguments: {} }] };
    if (prompt === 'MANY')
      return toolResults(req).length
        ? { content: 'done' }
        : { toolCalls: Array.from({ length: 40 }, (_, i) => ({ name: 'lookup', arguments: { q: i } })) };
    return { content: 'fine' };
  });
});
afterAll(async () => {
  await tool?.close();
  await llm?.close();
});

const llmNode = (prompt: string, extra: Record<string, unknown> = {}): GraphNode => ({
  id: 'ask',
  type: 'llm',
  config: { prompt, tools: [{ name: 'lookup', description: 'Look up', http: { method: 'GET', url: `${tool.url}/q` } }], ...extra },
});

test('huge answers, malformed and endless tool calls end within their bounds; B keeps running', async () => {
  const created = await kit.request(kit.a, 'POST', '/api/v1/credentials', {
    name: 'model',
    type: 'llm',
    value: { baseUrl: llm.url, apiKey: llm.apiKey, model: llm.model },
  });
  expect(created.status).toBe(201);

  await kit.survives(async () => {
    // A 3 MB answer: the node fails naming the output limit, the run ends.
    expectFailedNode(await kit.runLive(kit.a, [llmNode('HUGE')]), /over the 1\.5 MB limit/, 'ask');

    // Arguments that are not JSON: the model is told so, no request is sent, and it recovers.
    const before = toolHits;
    const malformed = await kit.runLive(kit.a, [llmNode('MALFORMED')]);
    expect(malformed.status).toBe('succeeded');
    const out = malformed.steps.find((s: { nodeId: string }) => s.nodeId === 'ask').output;
    expect(out.text).toBe('recovered');
    expect(out.toolCalls).toEqual([{ round: 1, name: 'lookup', arguments: null, ok: false, status: null }]);
    expect(toolHits).toBe(before);
    const told = toolResults(llm.chats.at(-1)!);
    expect(told).toEqual([{ toolCallId: expect.any(String), content: 'error: the arguments must be a JSON object.' }]);

    // A model that never stops calling tools: 1 + maxToolRounds calls, then the node fails.
    const calls = llm.chats.length;
    expectFailedNode(await kit.runLive(kit.a, [llmNode('LOOP', { maxToolRounds: 3 })]), /still called tools after 3 tool rounds/, 'ask');
    expect(llm.chats.length - calls).toBe(4);

    // 40 tool calls in one answer: 16 are run, the rest answered with an error.
    const hits = toolHits;
    const many = await kit.runLive(kit.a, [llmNode('MANY')]);
    expect(many.status).toBe('succeeded');
    expect(toolHits - hits).toBe(16);
    expect(many.steps.find((s: { nodeId: string }) => s.nodeId === 'ask').output.toolCalls).toHaveLength(40);

    // A prompt over the config limit never runs: deploy refuses it.
    const tooLong = await kit.tryRunLive(kit.a, [llmNode('p'.repeat(100_001))]);
    expect('refused' in tooLong && tooLong.refused.status).toBe(400);
  });
});
