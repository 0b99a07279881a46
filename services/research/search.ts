/**
 * Web search for research runs created without `sourceUrls`: the run's query goes to the
 * configured provider (RESEARCH_SEARCH_PROVIDER, services/kernel/config/research.ts) and the
 * result URLs become the run's sources, read afterwards exactly as given URLs are (fetching.ts:
 * the outbound guard, robots.txt, the limits, snapshots).
 *
 * - SearxNG JSON API: `GET <base>/search?q=<query>&format=json` → `{ results: [{ url, title, content }] }`
 *   (https://docs.searxng.org/dev/search_api.html; the instance must enable the `json` format).
 * - Brave Search API: `GET <base>/res/v1/web/search?q=<query>&count=<n>` with
 *   `X-Subscription-Token` → `{ web: { results: [{ url, title, description }] } }`
 *   (https://api-dashboard.search.brave.com/app/documentation/web-search/get-started).
 *
 * The provider's address is the operator's setting, so it is reached even on a private network
 * (a SearxNG beside the service) without OUTBOUND_ALLOW_PRIVATE_NETWORKS, which would open
 * private networks to every tenant's URLs; the URLs it answers are tenant-grade input and go
 * through the guard when they are fetched.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ResearchRunSchema } from '../../db/entities';
import type { WebSearchConfig, WebSearchProviderName } from '../kernel/config';
import { httpRequest, OutboundError, type HttpRequestInput } from '../kernel/outbound';
import { RESEARCH_USER_AGENT, hostnameOf, normalizeResearchUrl } from './fetching';
import type { ResearchRunRef } from './runs';

/** The largest provider answer read (a SearxNG page with infoboxes is far below it). */
export const SEARCH_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
/** Entries of the answer's result list looked at, however long it is. */
const MAX_ENTRIES_READ = 1000;
/** Brave refuses longer queries (400 characters, 50 words). */
const BRAVE_MAX_QUERY_CHARS = 400;
const BRAVE_MAX_WORDS = 50;
const MAX_TITLE_CHARS = 300;

/** The settings variable a deployment sets to get web search; named in refusals. */
export const WEB_SEARCH_SETTING = 'RESEARCH_SEARCH_PROVIDER';

export interface WebSearchResult {
  /** Normalized as given URLs are (http(s), no credentials, no fragment). */
  url: string;
  host: string;
  title: string | null;
}

export interface WebSearchOutcome {
  provider: WebSearchProviderName;
  results: WebSearchResult[];
}

/**
 * A search that failed. `retryable`: the provider may answer another time (timeouts, network
 * errors, 408, 429, 5xx); otherwise another attempt would get the same answer.
 */
export class WebSearchError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'WebSearchError';
  }
}

export interface WebSearchDeps {
  search: WebSearchConfig | null;
  signal?: AbortSignal;
}

/**
 * Searches the web for the run's query and returns at most `count` distinct result URLs, in the
 * provider's order. Throws `WebSearchError` (no provider, a provider error, an answer that is not
 * the documented JSON, no usable result); an abort of `signal` is rethrown as it is.
 */
export async function searchForResearchRun(
  em: EntityManager,
  deps: WebSearchDeps,
  input: ResearchRunRef & { count: number; timeoutMs: number },
): Promise<WebSearchOutcome> {
  if (!deps.search)
    throw new WebSearchError(`This worker has no web search provider configured (${WEB_SEARCH_SETTING} is not set).`, false);
  const run = await em.findOneOrFail(ResearchRunSchema, { id: input.runId, workspaceId: input.workspaceId });
  const results = await webSearch(deps.search, run.query, input.count, input.timeoutMs, deps.signal);
  if (results.length === 0) throw new WebSearchError(`The web search (${deps.search.provider}) found no result for this query.`, false);
  return { provider: deps.search.provider, results };
}

/** One provider request, its answer read into at most `count` results. */
export async function webSearch(
  config: WebSearchConfig,
  query: string,
  count: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<WebSearchResult[]> {
  const request = providerRequest(config, query, count, timeoutMs);
  const label = `The web search (${config.provider})`;
  let status: number;
  let body: unknown;
  try {
    const res = await httpRequest(request, {
      allowPrivateNetworks: true,
      maxResponseBytes: SEARCH_MAX_RESPONSE_BYTES,
      signal,
      sensitiveHeaders: ['x-subscription-token'],
    });
    status = res.status;
    body = res.body;
  } catch (err) {
    if (signal?.aborted) throw err;
    if (!(err instanceof OutboundError)) throw err;
    if (err.code === 'too_large')
      throw new WebSearchError(`${label} answered more than ${SEARCH_MAX_RESPONSE_BYTES} bytes, so its answer was not read.`, false);
    const retryable = err.code === 'timeout' || err.code === 'network';
    throw new WebSearchError(`${label} failed: ${err.message}`, retryable);
  }
  if (status < 200 || status > 299) {
    const retryable = status === 408 || status === 429 || status >= 500;
    const hint =
      config.provider === 'searxng' && status === 403 ? ' (is the json format enabled in its settings.yml, search.formats?)' : '';
    throw new WebSearchError(`${label} answered HTTP ${status}${hint}.`, retryable);
  }
  const entries = resultEntries(config.provider, typeof body === 'string' ? parseJson(body) : body);
  if (!entries)
    throw new WebSearchError(
      `${label} answered something other than the JSON its API documents (${config.provider === 'brave' ? 'web.results[]' : 'results[]'} with url).`,
      false,
    );
  return readResults(entries, count);
}

function providerRequest(config: WebSearchConfig, query: string, count: number, timeoutMs: number): HttpRequestInput {
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': RESEARCH_USER_AGENT };
  if (config.provider === 'brave') {
    if (config.apiKey) headers['x-subscription-token'] = config.apiKey;
    return {
      method: 'GET',
      url: `${config.baseUrl}/res/v1/web/search`,
      query: { q: braveQuery(query), count: Math.min(count, 20) },
      headers,
      timeoutMs,
    };
  }
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
  return { method: 'GET', url: `${config.baseUrl}/search`, query: { q: query, format: 'json' }, headers, timeoutMs };
}

/** The query within Brave's bounds: at most 50 words and 400 characters, cut at a word. */
function braveQuery(query: string): string {
  const words = query.split(/\s+/).filter(Boolean).slice(0, BRAVE_MAX_WORDS);
  let out = '';
  for (const word of words) {
    const next = out ? `${out} ${word}` : word;
    if (next.length > BRAVE_MAX_QUERY_CHARS) break;
    out = next;
  }
  return out || query.slice(0, BRAVE_MAX_QUERY_CHARS);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The documented list of results of the provider's answer; null when the answer has none. */
function resultEntries(provider: WebSearchProviderName, body: unknown): unknown[] | null {
  if (!isObject(body)) return null;
  if (provider === 'brave') {
    // Brave leaves `web` out when it found no web page.
    if (body.web === undefined) return [];
    if (!isObject(body.web)) return null;
    return Array.isArray(body.web.results) ? body.web.results : null;
  }
  return Array.isArray(body.results) ? body.results : null;
}

/** The first `count` distinct http(s) URLs of the entries; entries without one are passed over. */
function readResults(entries: unknown[], count: number): WebSearchResult[] {
  const out: WebSearchResult[] = [];
  const seen = new Set<string>();
  for (const entry of entries.slice(0, MAX_ENTRIES_READ)) {
    if (out.length >= count) break;
    if (!isObject(entry) || typeof entry.url !== 'string' || entry.url.length > 2048) continue;
    const url = normalizeResearchUrl(entry.url);
    if (!url || seen.has(url)) continue;
    seen.add(url);
    const title = typeof entry.title === 'string' && entry.title.trim() ? entry.title.trim().slice(0, MAX_TITLE_CHARS) : null;
    out.push({ url, host: hostnameOf(url), title });
  }
  return out;
}
