/**
 * The `llm` node of workflow graphs (docs/workflow-graph.md, "llm"): one model call through
 * the chat client (chat.ts), with the tool rounds the model asks for. Tools are HTTP calls
 * through the outbound guard (with a stored credential when the tool names one). Everything the
 * model sends is treated as untrusted: unknown tools and arguments that are not a JSON object are
 * answered with an error message for the model, tool results are cut to
 * LLM_TOOL_RESULT_LIMIT_CHARS, and a model that keeps calling tools fails the node after
 * `maxToolRounds` rounds.
 *
 * Caveat: call it from an activity (it does I/O, and a model call can take a minute).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { LlmConfig } from '../kernel/config';
import { invalidInput } from '../kernel/errors';
import { httpRequest, type HttpRequestInput, type HttpResponseOutput } from '../kernel/outbound';
import type { CredentialKeySettings } from '../credentials/keys';
import { resolveCredentialReference } from '../credentials/crud';
import { sendHttpWithStoredCredential } from '../credentials';
import { addUsage, createChatClient, NO_USAGE, resolveChatEndpoint, type ChatMessage, type ChatToolCall, type ChatUsage } from './chat';
import { LLM_TOOL_RESULT_LIMIT_CHARS, MAX_LLM_TOOL_CALLS_PER_ROUND, boundedMessage } from '../../engine/limits';

export interface LlmHttpTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  http: {
    method?: string;
    url: string;
    headers?: Record<string, string>;
    query?: Record<string, string>;
    body?: Record<string, unknown>;
    credentialId?: string;
    timeoutMs?: number;
  };
}

/** An `llm` node's config with its expressions resolved (engine/nodes.ts, llmConfig). */
export interface LlmNodeConfig {
  credentialId?: string;
  model?: string;
  system?: unknown;
  prompt: unknown;
  history?: unknown;
  historyWindow?: number;
  outputSchema?: Record<string, unknown>;
  tools?: LlmHttpTool[];
  maxToolRounds?: number;
  temperature?: number;
  maxTokens?: number;
}

export interface LlmNodeDeps {
  llm: LlmConfig;
  keys: CredentialKeySettings;
  allowPrivateNetworks: boolean;
  signal?: AbortSignal;
}

export interface LlmToolCallRecord {
  round: number;
  name: string;
  /** The parsed arguments, or null when the model's arguments were not a JSON object. */
  arguments: Record<string, unknown> | null;
  ok: boolean;
  /** The HTTP status of the tool's answer, or null when it was not called. */
  status: number | null;
}

export interface LlmNodeOutput {
  /** The model's final answer. */
  text: string;
  /** With `outputSchema`: the answer parsed as JSON. */
  json?: unknown;
  model: string;
  usage: ChatUsage;
  /** Model calls made (1 + tool rounds). */
  calls: number;
  toolCalls: LlmToolCallRecord[];
  /** With `historyWindow`: the conversation so far (user and assistant turns), the last `historyWindow` messages. */
  messages?: Array<{ role: 'user' | 'assistant'; content: string }>;
}

/** Thrown for a failure retrying cannot heal (a model that loops, an answer that is not the JSON asked for). */
export class LlmNodeError extends Error {
  constructor(
    message: string,
    readonly kind: 'tool_rounds' | 'not_json' | 'no_answer',
  ) {
    super(message);
    this.name = 'LlmNodeError';
  }
}

const asText = (value: unknown): string => (typeof value === 'string' ? value : value == null ? '' : JSON.stringify(value));

/** Earlier turns from `history`: entries that are not `{ role: user|assistant, content }` are left out. */
function historyMessages(history: unknown): Array<{ role: 'user' | 'assistant'; content: string }> {
  if (!Array.isArray(history)) return [];
  const out: Array<{ role: 'user' | 'assistant'; content: string }> = [];
  for (const m of history.slice(-400)) {
    if (!m || typeof m !== 'object') continue;
    const { role, content } = m as { role?: unknown; content?: unknown };
    if ((role === 'user' || role === 'assistant') && typeof content === 'string') out.push({ role, content });
  }
  return out;
}

/** The tool's request for the model's arguments: `{name}` in the URL, then the query (GET, DELETE) or the JSON body. */
export function toolRequest(tool: LlmHttpTool, args: Record<string, unknown>): HttpRequestInput {
  const method = (tool.http.method ?? 'GET').toUpperCase();
  const used = new Set<string>();
  const url = tool.http.url.replace(/\{([A-Za-z0-9_-]{1,64})\}/g, (whole, key: string) => {
    if (!(key in args)) return whole;
    used.add(key);
    return encodeURIComponent(asText(args[key]));
  });
  const rest = Object.fromEntries(Object.entries(args).filter(([k]) => !used.has(k)));
  const inQuery = method === 'GET' || method === 'DELETE';
  const query: Record<string, string> = { ...(tool.http.query ?? {}) };
  if (inQuery) for (const [k, v] of Object.entries(rest)) query[k] = asText(v);
  return {
    method,
    url,
    headers: tool.http.headers,
    query,
    ...(inQuery ? (tool.http.body ? { body: tool.http.body } : {}) : { body: { ...(tool.http.body ?? {}), ...rest } }),
    timeoutMs: tool.http.timeoutMs ?? 30_000,
  };
}

/** Runs an `llm` node in `workspaceId`. */
export async function runLlmNode(
  em: EntityManager,
  deps: LlmNodeDeps,
  workspaceId: string,
  config: LlmNodeConfig,
): Promise<{ output: LlmNodeOutput; costCredits: number }> {
  let credentialId: string | undefined;
  if (config.credentialId) {
    const row = await resolveCredentialReference(em, workspaceId, config.credentialId);
    if (!row) throw invalidInput(`Credential "${config.credentialId.slice(0, 200)}" does not exist in this workspace.`);
    credentialId = row.id;
  }
  const endpoint = await resolveChatEndpoint(em, deps, workspaceId, credentialId);
  const client = createChatClient(config.model ? { ...endpoint, model: config.model } : endpoint, {
    allowPrivateNetworks: deps.allowPrivateNetworks,
    timeoutMs: deps.llm.timeoutMs,
    maxRetries: deps.llm.maxRetries,
    prices: deps.llm.prices,
  });

  const system = asText(config.system);
  const schema = config.outputSchema;
  const systemText = schema
    ? `${system}${system ? '\n\n' : ''}Answer with one JSON value only (no prose, no code fences) that follows this JSON Schema:\n${JSON.stringify(schema)}`
    : system;
  const earlier = historyMessages(config.history);
  const prompt = asText(config.prompt);
  const messages: ChatMessage[] = [...(systemText ? [{ role: 'system' as const, content: systemText }] : []), ...earlier];
  messages.push({ role: 'user', content: prompt });

  const tools = config.tools ?? [];
  const byName = new Map(tools.map((t) => [t.name, t]));
  const definitions = tools.map((t) => ({
    name: t.name,
    description: t.description ?? '',
    parameters: t.parameters ?? { type: 'object', additionalProperties: true },
  }));
  const maxRounds = config.maxToolRounds ?? 5;
  const toolCalls: LlmToolCallRecord[] = [];
  let usage = NO_USAGE;
  let costCredits = 0;
  let calls = 0;
  let model = client.endpoint.model;
  for (let round = 0; ; round++) {
    const result = await client.chat({
      messages,
      ...(definitions.length ? { tools: definitions } : {}),
      ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
      ...(config.maxTokens !== undefined ? { maxTokens: config.maxTokens } : {}),
      signal: deps.signal,
    });
    calls++;
    usage = addUsage(usage, result.usage);
    costCredits += result.costCredits;
    model = result.model;
    if (result.toolCalls.length === 0) {
      const text = result.content ?? '';
      const output: LlmNodeOutput = { text, model, usage, calls, toolCalls };
      if (schema) output.json = parseJsonAnswer(text);
      if (config.historyWindow)
        output.messages = [...earlier, { role: 'user' as const, content: prompt }, { role: 'assistant' as const, content: text }].slice(
          -config.historyWindow,
        );
      return { output, costCredits };
    }
    if (round >= maxRounds)
      throw new LlmNodeError(
        `The model still called tools after ${maxRounds} tool round${maxRounds === 1 ? '' : 's'} (maxToolRounds); the node stopped.`,
        'tool_rounds',
      );
    messages.push({
      role: 'assistant',
      content: result.content,
      tool_calls: result.toolCalls.map((c) => ({
        id: c.id,
        type: 'function' as const,
        function: { name: c.name, arguments: c.rawArguments },
      })),
    });
    for (const [index, call] of result.toolCalls.entries()) {
      const answer =
        index < MAX_LLM_TOOL_CALLS_PER_ROUND
          ? await callTool(em, deps, workspaceId, byName, call)
          : {
              content: `error: at most ${MAX_LLM_TOOL_CALLS_PER_ROUND} tool calls are run per answer; this one was not.`,
              ok: false,
              status: null,
            };
      toolCalls.push({ round: round + 1, name: call.name.slice(0, 64), arguments: call.arguments, ok: answer.ok, status: answer.status });
      messages.push({ role: 'tool', tool_call_id: call.id, content: boundedMessage(answer.content, LLM_TOOL_RESULT_LIMIT_CHARS) });
    }
  }
}

/** The answer as JSON: the whole text, or the text inside one ```json fence. */
function parseJsonAnswer(text: string): unknown {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text);
  try {
    return JSON.parse(fenced?.[1] ?? text) as unknown;
  } catch {
    throw new LlmNodeError(`The model's answer is not the JSON its outputSchema asks for: ${boundedMessage(text, 200)}`, 'not_json');
  }
}

async function callTool(
  em: EntityManager,
  deps: LlmNodeDeps,
  workspaceId: string,
  byName: Map<string, LlmHttpTool>,
  call: ChatToolCall,
): Promise<{ content: string; ok: boolean; status: number | null }> {
  const tool = byName.get(call.name);
  if (!tool) return { content: `error: there is no tool named "${call.name.slice(0, 64)}".`, ok: false, status: null };
  if (!call.arguments) return { content: 'error: the arguments must be a JSON object.', ok: false, status: null };
  const request = toolRequest(tool, call.arguments);
  let response: HttpResponseOutput;
  try {
    response = tool.http.credentialId
      ? await sendHttpWithStoredCredential(
          em,
          { keys: deps.keys, allowPrivateNetworks: deps.allowPrivateNetworks },
          workspaceId,
          tool.http.credentialId,
          request,
          deps.signal,
        )
      : await httpRequest(request, { allowPrivateNetworks: deps.allowPrivateNetworks });
  } catch (err) {
    return { content: `error: ${boundedMessage((err as Error).message, 1000)}`, ok: false, status: null };
  }
  const body = asText(response.body);
  if (response.status >= 400) return { content: `error: HTTP ${response.status}: ${body}`, ok: false, status: response.status };
  return { content: body, ok: true, status: response.status };
}
