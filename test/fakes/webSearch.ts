/**
 * Loopback web search providers for research tests, speaking their documented JSON APIs:
 * - SearxNG (https://docs.searxng.org/dev/search_api.html): `GET /search?q=…&format=json` →
 *   `{ query, number_of_results, results: [{ url, title, content, engine, … }], answers, … }`;
 *   another format is 403, as an instance answers when the format is not enabled.
 * - Brave Search API (https://api-dashboard.search.brave.com/app/documentation/web-search/get-started):
 *   `GET /res/v1/web/search?q=…&count=n` with `X-Subscription-Token` →
 *   `{ type: "search", query: { original }, web: { type: "search", results: [{ title, url, description }] } }`;
 *   a wrong token is 422 `SUBSCRIPTION_TOKEN_INVALID`.
 * Tests say which pages a query finds (`results`), or replace the whole answer (`raw`: a status,
 * a body, a content type; hostile answers), and can hold requests in flight.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestGate } from './providerServer';

export interface FakeSearchHit {
  url: string;
  title?: string;
  content?: string;
}

export interface RawSearchAnswer {
  status?: number;
  body: string | Buffer;
  contentType?: string;
}

export interface FakeSearchRequest {
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
}

export interface FakeSearchProvider {
  /** The base URL to configure (RESEARCH_SEARCH_URL). */
  url: string;
  requests: FakeSearchRequest[];
  /** The hits a query finds (default: none). */
  results(fn: (query: string) => FakeSearchHit[]): void;
  /** Replaces the whole answer for the queries it returns one for (undefined: the documented answer). */
  raw(fn: ((query: string) => RawSearchAnswer | undefined) | null): void;
  /** Holds every request until released; `held` resolves when one arrives. */
  hold(): { held: Promise<void>; release(): void };
  close(): Promise<void>;
}

type Flavour = { kind: 'searxng' } | { kind: 'brave'; token: string };

async function startFake(flavour: Flavour): Promise<FakeSearchProvider> {
  let hits: (query: string) => FakeSearchHit[] = () => [];
  let raw: ((query: string) => RawSearchAnswer | undefined) | null = null;
  const gate = requestGate();
  const requests: FakeSearchRequest[] = [];

  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
    await gate.pass();
    const q = url.searchParams.get('q') ?? '';
    const custom = raw?.(q);
    if (custom) {
      res.writeHead(custom.status ?? 200, { 'content-type': custom.contentType ?? 'application/json' });
      return void res.end(custom.body);
    }
    if (flavour.kind === 'searxng') {
      if (url.pathname !== '/search') return json(res, 404, { error: 'not found' });
      if (url.searchParams.get('format') !== 'json')
        return void res.writeHead(403, { 'content-type': 'text/html' }).end('<h1>403 Forbidden</h1>');
      const results = hits(q).map((h, i) => ({
        url: h.url,
        title: h.title ?? h.url,
        content: h.content ?? '',
        engine: 'fake',
        engines: ['fake'],
        positions: [i + 1],
        score: 1 / (i + 1),
        category: 'general',
      }));
      return json(res, 200, {
        query: q,
        number_of_results: results.length,
        results,
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [],
        unresponsive_engines: [],
      });
    }
    if (url.pathname !== '/res/v1/web/search') return json(res, 404, { type: 'ErrorResponse', error: { status: 404, code: 'NOT_FOUND' } });
    if (req.headers['x-subscription-token'] !== flavour.token)
      return json(res, 422, {
        type: 'ErrorResponse',
        error: { id: 'fake', status: 422, code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.' },
      });
    const count = Math.min(Number(url.searchParams.get('count') ?? 20) || 20, 20);
    const results = hits(q)
      .slice(0, count)
      .map((h) => ({ type: 'search_result', title: h.title ?? h.url, url: h.url, description: h.content ?? '', is_source_local: false }));
    return json(res, 200, {
      type: 'search',
      query: { original: q, more_results_available: false },
      ...(results.length > 0 ? { web: { type: 'search', results, family_friendly: true } } : {}),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    results: (fn) => void (hits = fn),
    raw: (fn) => void (raw = fn),
    hold: () => gate.hold(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A SearxNG instance with the `json` format enabled. */
export const startFakeSearxng = () => startFake({ kind: 'searxng' });

/** The Brave Search API, accepting one subscription token. */
export const startFakeBrave = (token: string) => startFake({ kind: 'brave', token });
