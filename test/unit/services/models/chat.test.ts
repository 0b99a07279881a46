import { costCredits, createChatClient, type ChatClient } from '../../../../services/models/chat';
import { startFakeLlm, lastMessage, type FakeLlmServer } from '../../../fakes/llm';

let llm: FakeLlmServer;
let client: ChatClient;
const prices = { 'fake-model-1': { input: 2, output: 10 }, '*': { input: 1, output: 1 } };

beforeAll(async () => {
  llm = await startFakeLlm();
  client = createChatClient(
    { baseUrl: llm.url, apiKey: llm.apiKey, model: llm.model, source: 'deployment' },
    { allowPrivateNetworks: true, timeoutMs: 5_000, maxRetries: 2, prices },
  );
});
afterAll(() => llm.close());

test('a plain answer carries its content, usage and cost from the price table', async () => {
  llm.reply((req) => ({ content: `hello ${lastMessage(req)}`, usage: { prompt_tokens: 1000, completion_tokens: 500 } }));
  const result = await client.chat({ messages: [{ role: 'user', content: 'world' }] });
  expect(result.content).toBe('hello world');
  expect(result.toolCalls).toEqual([]);
  expect(result.finishReason).toBe('stop');
  expect(result.usage).toEqual({ promptTokens: 1000, completionTokens: 500, totalTokens: 1500 });
  expect(result.costCredits).toBe(7); // 1000 * 2/1k + 500 * 10/1k
});

test('tool definitions reach the model and its tool calls come back parsed; unparsable arguments stay raw', async () => {
  llm.reply(() => ({
    toolCalls: [
      { name: 'search', arguments: { query: 'invoices' } },
      { name: 'broken', arguments: '{not json' },
    ],
  }));
  const result = await client.chat({
    messages: [{ role: 'user', content: 'find invoices' }],
    tools: [
      {
        name: 'search',
        description: 'Search the knowledge base',
        parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
    ],
    toolChoice: 'auto',
  });
  const seen = llm.chats[llm.chats.length - 1];
  expect(seen.tools.map((t) => t.function.name)).toEqual(['search']);
  expect(seen.body.tool_choice).toBe('auto');
  expect(result.finishReason).toBe('tool_calls');
  expect(result.toolCalls.map((c) => [c.name, c.arguments])).toEqual([
    ['search', { query: 'invoices' }],
    ['broken', null],
  ]);
  expect(result.toolCalls[1].rawArguments).toBe('{not json');
});

test('a streamed answer arrives in pieces through onDelta and whole in the result, with usage', async () => {
  llm.reply(() => ({ content: 'a fairly long streamed answer', usage: { prompt_tokens: 10, completion_tokens: 6 } }));
  const pieces: string[] = [];
  const result = await client.chat({
    messages: [{ role: 'user', content: 'stream please' }],
    stream: true,
    onDelta: (t) => pieces.push(t),
  });
  expect(llm.chats[llm.chats.length - 1].stream).toBe(true);
  expect(pieces.length).toBeGreaterThan(1);
  expect(pieces.join('')).toBe('a fairly long streamed answer');
  expect(result.content).toBe('a fairly long streamed answer');
  expect(result.usage.totalTokens).toBe(16);
});

test('429 and 5xx answers are retried; past the retry budget the call fails', async () => {
  llm.reply(() => ({ content: 'after retries' }));
  const before = llm.chats.length;
  llm.failNext(2, 429);
  expect((await client.chat({ messages: [{ role: 'user', content: 'x' }] })).content).toBe('after retries');
  llm.failNext(3, 500);
  await expect(client.chat({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 500 });
  expect(llm.chats.length).toBe(before + 1);
});

test('a wrong key is refused by the provider and not retried', async () => {
  const wrong = createChatClient(
    { baseUrl: llm.url, apiKey: 'sk-wrong', model: llm.model, source: 'deployment' },
    { allowPrivateNetworks: true, timeoutMs: 5_000, maxRetries: 2, prices },
  );
  await expect(wrong.chat({ messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 401 });
});

test('the outbound guard refuses a model endpoint on a private address unless private networks are allowed', async () => {
  const guarded = createChatClient(
    { baseUrl: llm.url, apiKey: llm.apiKey, model: llm.model, source: 'deployment' },
    { allowPrivateNetworks: false, timeoutMs: 5_000, maxRetries: 0, prices },
  );
  const before = llm.chats.length;
  await expect(guarded.chat({ messages: [{ role: 'user', content: 'x' }] })).rejects.toThrow();
  expect(llm.chats.length).toBe(before);
});

test('prices: listed models by name, others by *, none when the table has neither', () => {
  const usage = { promptTokens: 2000, completionTokens: 1000, totalTokens: 3000 };
  expect(costCredits(prices, 'fake-model-1', usage)).toBe(14);
  expect(costCredits(prices, 'other', usage)).toBe(3);
  expect(costCredits({}, 'other', usage)).toBe(0);
});
