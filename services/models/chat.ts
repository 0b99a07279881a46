/**
 * Chat completions over the OpenAI-compatible protocol (the `openai` npm client): the one
 * module every agent feature (research synthesis, command jobs) calls a language model through.
 *
 * - The endpoint is the deployment's (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL) unless the workspace
 *   names an `llm` credential, whose baseUrl, apiKey and model win (`resolveChatEndpoint`).
 * - Every request goes through the outbound guard (`guardedFetch`: SSRF checks, resolve-once,
 *   response cap). The client applies the timeout and retries 408, 409, 429 and 5xx answers and
 *   connection errors with exponential backoff, honouring Retry-After.
 * - Token usage is returned with its cost in credits from the configured price table.
 *
 * Caveat: call it from Temporal activities only, never from workflow code (it does I/O) and
 * not from request handlers (a model call can take a minute).
 */
import type { ChatCompletion, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { LlmConfig, PriceTable } from '../kernel/config';
import { unavailable, invalidInput } from '../kernel/errors';
import { guardedFetch, lazyOpenAiClient } from './embeddings';
import { CredentialSchema } from '../../db/entities';
import { loadCredential, openCredential } from '../credentials/crud';
import { requireKeyring, type CredentialKeySettings } from '../credentials/keys';

export type ChatMessage = ChatCompletionMessageParam;

/** A function the model may call: `parameters` is a JSON Schema object. */
export interface ChatToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ChatToolCall {
  id: string;
  name: string;
  /** The parsed arguments, or null when the model sent text that is not a JSON object. */
  arguments: Record<string, unknown> | null;
  /** The arguments exactly as the model sent them. */
  rawArguments: string;
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ChatToolDefinition[];
  /** `auto` (default when tools are given), `none`, `required`, or one tool's name. */
  toolChoice?: 'auto' | 'none' | 'required' | { name: string };
  temperature?: number;
  maxTokens?: number;
  /** Stream the answer; `onDelta` receives each piece of text as it arrives. */
  stream?: boolean;
  onDelta?: (text: string) => void;
  signal?: AbortSignal;
}

export interface ChatResult {
  content: string | null;
  toolCalls: ChatToolCall[];
  finishReason: string | null;
  model: string;
  usage: ChatUsage;
  /** Credits for this call from the price table (input and output tokens priced separately). */
  costCredits: number;
}

export interface ChatEndpoint {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  /** Where the endpoint came from, for error messages and status reports. */
  source: 'deployment' | 'credential';
}

export interface ChatClient {
  readonly endpoint: ChatEndpoint;
  chat(request: ChatRequest): Promise<ChatResult>;
}

export interface ChatClientOptions {
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  maxRetries: number;
  prices: PriceTable;
}

/** Largest model answer accepted (a streamed answer arrives whole through the guard). */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** Credits for `usage` under `prices` (per 1,000 tokens; the `*` entry prices unlisted models), rounded to 6 decimals. */
export function costCredits(prices: PriceTable, model: string, usage: ChatUsage): number {
  const price = prices[model] ?? prices['*'];
  if (!price) return 0;
  const credits = (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1000;
  return Math.round(credits * 1e6) / 1e6;
}

/** Adds usages together (a job that calls the model several times reports the sum). */
export function addUsage(a: ChatUsage, b: ChatUsage): ChatUsage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
}

export const NO_USAGE: ChatUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/**
 * The endpoint a workspace's model calls go to: the `llm` credential `credentialId` names (404
 * if it is not the workspace's, 400 if it is not an `llm` credential); without one, the
 * workspace's own `llm` credential (the most recently updated, when it has several); else the
 * deployment's. Throws `unavailable` when none is configured.
 */
export async function resolveChatEndpoint(
  em: EntityManager,
  deps: { llm: LlmConfig; keys: CredentialKeySettings },
  workspaceId: string,
  credentialId?: string | null,
): Promise<ChatEndpoint> {
  const row = credentialId
    ? await loadCredential(em, workspaceId, credentialId)
    : await em.findOne(CredentialSchema, { workspaceId, type: 'llm' }, { orderBy: { updatedAt: 'desc', id: 'desc' } });
  if (row) {
    if (row.type !== 'llm')
      throw invalidInput(`Credential ${credentialId} is of type "${row.type}"; a language model needs an "llm" credential.`);
    const value = openCredential(requireKeyring(deps.keys), row) as { baseUrl: string; apiKey?: string; model: string };
    return { baseUrl: value.baseUrl, apiKey: value.apiKey || undefined, model: value.model, source: 'credential' };
  }
  if (!deps.llm.baseUrl)
    throw unavailable('No language model is configured: set LLM_BASE_URL for the deployment or give the workspace an "llm" credential.');
  return { baseUrl: deps.llm.baseUrl, apiKey: deps.llm.apiKey, model: deps.llm.model, source: 'deployment' };
}

/**
 * The chat client of a workspace's model calls: its endpoint (resolveChatEndpoint), `model`
 * replacing the endpoint's model when given, the deployment's timeout, retries and prices.
 */
export async function workspaceChatClient(
  em: EntityManager,
  deps: { llm: LlmConfig; keys: CredentialKeySettings; allowPrivateNetworks: boolean },
  workspaceId: string,
  model?: string | null,
): Promise<ChatClient> {
  const endpoint = await resolveChatEndpoint(em, deps, workspaceId);
  return createChatClient(model ? { ...endpoint, model } : endpoint, {
    allowPrivateNetworks: deps.allowPrivateNetworks,
    timeoutMs: deps.llm.timeoutMs,
    maxRetries: deps.llm.maxRetries,
    prices: deps.llm.prices,
  });
}

/** A chat client bound to one endpoint. */
export function createChatClient(endpoint: ChatEndpoint, opts: ChatClientOptions): ChatClient {
  const client = lazyOpenAiClient({
    baseURL: endpoint.baseUrl,
    // Local OpenAI-compatible servers often need no key; the client insists on one.
    apiKey: endpoint.apiKey || 'unused',
    timeout: opts.timeoutMs,
    maxRetries: opts.maxRetries,
    fetch: guardedFetch({
      allowPrivateNetworks: opts.allowPrivateNetworks,
      timeoutMs: opts.timeoutMs,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    }),
  });
  return {
    endpoint,
    async chat(request) {
      const tools: ChatCompletionTool[] | undefined = request.tools?.length
        ? request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }))
        : undefined;
      const toolChoice =
        request.toolChoice === undefined || !tools
          ? undefined
          : typeof request.toolChoice === 'string'
            ? request.toolChoice
            : { type: 'function' as const, function: { name: request.toolChoice.name } };
      const params = {
        model: endpoint.model,
        messages: request.messages,
        ...(tools ? { tools } : {}),
        ...(toolChoice ? { tool_choice: toolChoice } : {}),
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.maxTokens !== undefined ? { max_completion_tokens: request.maxTokens } : {}),
      };
      let completion: ChatCompletion;
      if (request.stream) {
        const stream = (await client()).chat.completions.stream(
          { ...params, stream: true, stream_options: { include_usage: true } },
          { signal: request.signal },
        );
        if (request.onDelta) stream.on('content', (delta) => request.onDelta!(delta));
        completion = await stream.finalChatCompletion();
      } else {
        completion = await (await client()).chat.completions.create({ ...params, stream: false }, { signal: request.signal });
      }
      return resultOf(completion, endpoint.model, opts.prices);
    },
  };
}

function resultOf(completion: ChatCompletion, requestedModel: string, prices: PriceTable): ChatResult {
  const choice = completion.choices[0];
  if (!choice) throw new Error('The language model answered with no choices.');
  const toolCalls: ChatToolCall[] = [];
  for (const call of choice.message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    toolCalls.push({
      id: call.id,
      name: call.function.name,
      rawArguments: call.function.arguments,
      arguments: parseArguments(call.function.arguments),
    });
  }
  const usage: ChatUsage = {
    promptTokens: completion.usage?.prompt_tokens ?? 0,
    completionTokens: completion.usage?.completion_tokens ?? 0,
    totalTokens: completion.usage?.total_tokens ?? 0,
  };
  // Price by the model we asked for: providers answer with dated aliases ("gpt-4o-mini-2024-07-18").
  return {
    content: choice.message.content ?? null,
    toolCalls,
    finishReason: choice.finish_reason ?? null,
    model: completion.model || requestedModel,
    usage,
    costCredits: costCredits(prices, requestedModel, usage),
  };
}

function parseArguments(raw: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(raw || '{}') as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
