/**
 * A loopback OpenAI-compatible model server for tests: `POST /v1/chat/completions` (plain JSON
 * or `stream: true` server-sent chunks ending in `data: [DONE]`, tool calls, usage),
 * `POST /v1/embeddings` (the deterministic vectors of ./embeddings) and `GET /v1/models`.
 * `Authorization: Bearer` is checked; errors use the provider's `{ error: { message, type, code } }`.
 *
 * Answers are scripted: `reply(fn)` decides each chat answer from the request (the last user
 * message, the tools offered, the tool results so far), so a test can play a whole agent
 * conversation. Tests can fail the next requests (429 with Retry-After: 0, 500) or hold them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeEmbedding } from './embeddings';
import { requestGate } from './providerServer';

export interface ChatRequestSeen {
  model: string;
  messages: Array<{
    role: string;
    content?: unknown;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>;
  tools: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream: boolean;
  body: Record<string, unknown>;
}

export interface FakeChatAnswer {
  content?: string | null;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> | string; id?: string }>;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Answer with this HTTP status and error instead. */
  status?: number;
}

export type ChatScript = (request: ChatRequestSeen, index: number) => FakeChatAnswer | Promise<FakeChatAnswer>;

export interface FakeLlmServer {
  /** Base URL to configure as LLM_BASE_URL (ends in /v1). */
  url: string;
  apiKey: string;
  model: string;
  /** Every chat request, in order. */
  chats: ChatRequestSeen[];
  /** Sets how chat requests are answered (default: echo the last user message). */
  reply(script: ChatScript): void;
  /** Answers the next `n` chat requests with this status (429 carries Retry-After: 0). */
  failNext(n: number, status: number): void;
  /** Holds every request until `release()`; resolves `held` when one arrives. */
  hold(): { held: Promise<void>; release(): void };
  close(): Promise<void>;
}

/** The text of the last message with `role` (string content or text parts joined). */
export function lastMessage(request: ChatRequestSeen, role = 'user'): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i];
    if (m.role !== role) continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) return m.content.map((p: { text?: string }) => p.text ?? '').join('');
    return '';
  }
  return '';
}

/** Tool results the conversation carries so far, by tool call id. */
export function toolResults(request: ChatRequestSeen): Array<{ toolCallId: string; content: string }> {
  return request.messages
    .filter((m) => m.role === 'tool')
    .map((m) => ({ toolCallId: m.tool_call_id ?? '', content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content) }));
}

const countTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function startFakeLlm(opts: { apiKey?: string; model?: string } = {}): Promise<FakeLlmServer> {
  const apiKey = opts.apiKey ?? 'sk-fake-llm';
  const model = opts.model ?? 'fake-model-1';
  const chats: ChatRequestSeen[] = [];
  let script: ChatScript = (req) => ({ content: `echo: ${lastMessage(req)}` });
  let failures = { left: 0, status: 500 };
  const gate = requestGate();
  let callSeq = 0;

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', async () => {
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
      };
      const error = (
        status: number,
        message: string,
        type = 'invalid_request_error',
        code: string | null = null,
        headers: Record<string, string> = {},
      ) => send(status, { error: { message, type, code } }, headers);
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return error(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
      if (req.method === 'GET' && req.url === '/v1/models')
        return send(200, { object: 'list', data: [{ id: model, object: 'model', created: 1_700_000_000, owned_by: 'fake' }] });
      let body: Record<string, unknown>;
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        return error(400, 'We could not parse the JSON body of your request.');
      }
      if (req.method === 'POST' && req.url === '/v1/embeddings') {
        const inputs = typeof body.input === 'string' ? [body.input] : (body.input as string[]);
        return send(200, {
          object: 'list',
          data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(t) })),
          model: body.model,
          usage: { prompt_tokens: 1, total_tokens: 1 },
        });
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return error(404, `Unknown route ${req.method} ${req.url}`);
      await gate.pass();
      if (failures.left > 0) {
        failures.left--;
        return failures.status === 429
          ? error(429, 'Rate limit reached', 'requests', null, { 'retry-after': '0' })
          : error(failures.status, 'The server had an error', 'server_error');
      }
      if (typeof body.model !== 'string' || !Array.isArray(body.messages)) return error(400, "'model' and 'messages' are required");
      const seen: ChatRequestSeen = {
        model: body.model,
        messages: body.messages as ChatRequestSeen['messages'],
        tools: (body.tools as ChatRequestSeen['tools']) ?? [],
        stream: body.stream === true,
        body,
      };
      chats.push(seen);
      let answer: FakeChatAnswer;
      try {
        answer = await script(seen, chats.length - 1);
      } catch (err) {
        return error(500, `fake script failed: ${(err as Error).message}`, 'server_error');
      }
      if (answer.status)
        return error(answer.status, `scripted ${answer.status}`, answer.status >= 500 ? 'server_error' : 'invalid_request_error');
      const toolCalls = (answer.toolCalls ?? []).map((c) => ({
        id: c.id ?? `call_${++callSeq}`,
        type: 'function' as const,
        function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
      }));
      const content = answer.content ?? (toolCalls.length ? null : '');
      const usage = answer.usage ?? {
        prompt_tokens: countTokens(JSON.stringify(seen.messages)),
        completion_tokens: countTokens(content ?? JSON.stringify(toolCalls)),
      };
      const fullUsage = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
      const id = `chatcmpl-${chats.length}`;
      const created = Math.floor(Date.now() / 1000);
      const finish = toolCalls.length ? 'tool_calls' : 'stop';
      if (!seen.stream) {
        return send(200, {
          id,
          object: 'chat.completion',
          created,
          model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content, tool_calls: toolCalls.length ? toolCalls : undefined, refusal: null },
              finish_reason: finish,
              logprobs: null,
            },
          ],
          usage: fullUsage,
        });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (delta: Record<string, unknown>, finishReason: string | null, extra: Record<string, unknown> = {}) =>
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }], ...extra })}\n\n`,
        );
      chunk({ role: 'assistant', content: '' }, null);
      for (const piece of (content ?? '').match(/.{1,8}/gs) ?? []) chunk({ content: piece }, null);
      toolCalls.forEach((c, index) =>
        chunk(
          { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }] },
          null,
        ),
      );
      chunk({}, finish);
      const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
      if (includeUsage)
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: fullUsage })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey,
    model,
    chats,
    reply: (next) => (script = next),
    failNext: (n, status) => (failures = { left: n, status }),
    hold: () => gate.hold(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
