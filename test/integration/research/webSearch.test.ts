/**
 * Research runs with only a `query`: the deployment's web search provider (here a loopback
 * SearxNG speaking its JSON API) finds the pages, which are then read exactly as given URLs are
 * (robots.txt, limits, snapshots; the outbound guard is in researchCrash.test.ts, with a worker
 * that refuses private networks). The search is one activity of the run's execution, retried
 * like the fetches when the provider may answer another time; a provider error fails the run
 * with the reason, never the worker.
 */
import { startFakeLlm, lastMessage, type FakeLlmServer } from '../../fakes/llm';
import { htmlPage, startFakeSite, type FakeSite } from '../../fakes/web';
import { startFakeSearxng, type FakeSearchProvider } from '../../fakes/webSearch';
import { useTestStack } from '../../kit';
import { createResearch, llmConfig, waitForResearch } from './support';

let llm: FakeLlmServer;
let site: FakeSite;
let searx: FakeSearchProvider;
const sql = (q: string, params: unknown[] = []) => stack.app.orm.em.fork().getConnection().execute(q, params);
const rowsOf = (runId: string) =>
  sql(`select url, outcome, reason from research_sources where run_id = ? order by created_at, id`, [runId]) as Promise<
    Array<{ url: string; outcome: string; reason: string | null }>
  >;

const stack = useTestStack(async () => {
  llm = await startFakeLlm();
  site = await startFakeSite();
  searx = await startFakeSearxng();
  return { config: { llm: llmConfig(llm), research: { search: { provider: 'searxng' as const, baseUrl: searx.url, apiKey: undefined } } } };
});
beforeAll(() => {
  site.robots('User-agent: *\nDisallow: /private\n');
  for (const n of [1, 2, 3, 4, 5, 6, 7, 8])
    site.page(`/hit${n}`, htmlPage(`Hit ${n}`, `Fact number ${n} about beavers and dams.`, ['/linked']));
  site.page('/linked', htmlPage('Linked', 'A page the hits link to, about beaver lodges.'));
  site.page('/private/hidden', htmlPage('Hidden', 'Robots say no.'));
  llm.reply((req) => ({ content: `Beavers build dams [1][2]. (${lastMessage(req).length} characters read)` }));
});
afterAll(async () => {
  await llm?.close();
  await site?.close();
  await searx?.close();
});
beforeEach(() => {
  searx.raw(null);
  searx.results(() => []);
});

/** The provider's requests for one query. */
const searchesFor = (query: string) => searx.requests.filter((r) => r.query.get('q') === query);

describe('a run with only a query', () => {
  test('searches, reads the pages found (robots.txt obeyed) and cites them in its answer', async () => {
    searx.results((q) =>
      q === 'How do beavers build dams?'
        ? [
            { url: `${site.origin}/hit1#section`, title: 'Hit one', content: 'snippet' },
            { url: `${site.origin}/private/hidden`, title: 'Hidden' },
            { url: 'ftp://files.example/beavers.txt', title: 'not http' },
            { url: `${site.origin}/hit1`, title: 'duplicate' },
            { url: `${site.origin}/hit2`, title: 'Hit two' },
          ]
        : [],
    );
    const res = await createResearch(stack.app, stack.ws.token, { query: 'How do beavers build dams?', limits: { maxPages: 3 } });
    expect(res.status).toBe(202);
    expect(res.body.data.run).toMatchObject({ query: 'How do beavers build dams?', sourceUrls: [], limits: { maxPages: 3 } });
    const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id);

    expect(run).toMatchObject({ status: 'succeeded', error: null, sourceUrls: [], resultDocumentId: expect.any(String) });
    expect(run.sources.map((s) => [s.canonicalUrl, s.title])).toEqual([
      [`${site.origin}/hit1`, 'Hit 1'],
      [`${site.origin}/hit2`, 'Hit 2'],
      [`${site.origin}/linked`, 'Linked'],
    ]);
    expect(run.sources[0].snapshotText).toContain('Fact number 1 about beavers and dams.');

    const [search] = searchesFor('How do beavers build dams?');
    expect(search.path).toBe('/search');
    expect(search.query.get('format')).toBe('json');
    expect(search.headers['user-agent']).toBe('svc-research/1.0');
    expect(searchesFor('How do beavers build dams?')).toHaveLength(1);
    // The disallowed result is recorded, not requested; the non-http and duplicate results are dropped.
    expect(site.count('/private/hidden')).toBe(0);
    expect(await rowsOf(run.id)).toEqual([
      { url: `${site.origin}/hit1`, outcome: 'stored', reason: null },
      { url: `${site.origin}/private/hidden`, outcome: 'skipped', reason: 'Disallowed by robots.txt for svc-research/1.0.' },
      { url: `${site.origin}/hit2`, outcome: 'stored', reason: null },
      { url: `${site.origin}/linked`, outcome: 'stored', reason: null },
    ]);

    const chat = llm.chats.find((c) => lastMessage(c).includes('How do beavers build dams?'))!;
    expect(lastMessage(chat)).toContain('[1] Hit 1');
    expect(lastMessage(chat)).toContain('[2] Hit 2');
    const [doc] = await sql(`select content_text, metadata from knowledge_documents where id = ?`, [run.resultDocumentId]);
    expect(doc.content_text).toContain(`[1] Hit 1 — ${site.origin}/hit1`);
    expect(doc.metadata.search).toEqual({
      provider: 'searxng',
      results: [
        { url: `${site.origin}/hit1`, title: 'Hit one' },
        { url: `${site.origin}/private/hidden`, title: 'Hidden' },
        { url: `${site.origin}/hit2`, title: 'Hit two' },
      ],
    });
  });

  test('limits bound the results fetched: maxPages results at most, maxDomains as for given URLs', async () => {
    searx.results(() => [1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ url: `${site.origin}/hit${n}?q=limits` })));
    const before = site.requests.length;
    const res = await createResearch(stack.app, stack.ws.token, { query: 'limits', limits: { maxPages: 2 } });
    const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id);
    expect(run.status).toBe('succeeded');
    expect(run.sources.map((s) => s.title)).toEqual(['Hit 1', 'Hit 2']);
    expect(site.requests.slice(before).filter((p) => p !== '/robots.txt')).toEqual(['/hit1', '/hit2']);
    expect((await rowsOf(run.id)).map((r) => r.outcome)).toEqual(['stored', 'stored']);

    searx.results(() => [
      { url: `${site.origin}/hit3?q=domains` },
      { url: 'http://localhost:9/elsewhere' },
      { url: `${site.origin}/hit4?q=domains` },
    ]);
    const domains = await createResearch(stack.app, stack.ws.token, { query: 'domains', limits: { maxDomains: 1, maxPages: 3 } });
    const second = await waitForResearch(stack.app, stack.ws.token, domains.body.data.run.id);
    expect(second.status).toBe('succeeded');
    expect(await rowsOf(second.id)).toEqual([
      { url: `${site.origin}/hit3?q=domains`, outcome: 'stored', reason: null },
      { url: 'http://localhost:9/elsewhere', outcome: 'skipped', reason: "Over the run's maxDomains limit (1)." },
      { url: `${site.origin}/hit4?q=domains`, outcome: 'stored', reason: null },
      { url: `${site.origin}/linked`, outcome: 'stored', reason: null },
    ]);
  });

  test('with sourceUrls given, the provider is not asked', async () => {
    const res = await createResearch(stack.app, stack.ws.token, { query: 'given only', sourceUrls: [`${site.origin}/hit5`] });
    const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id);
    expect(run.status).toBe('succeeded');
    expect(searchesFor('given only')).toHaveLength(0);
  });

  test('sourceUrls: [] is a run with only a query', async () => {
    searx.results(() => [{ url: `${site.origin}/hit6` }]);
    const res = await createResearch(stack.app, stack.ws.token, { query: 'empty list', sourceUrls: [] });
    expect(res.status).toBe(202);
    const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id);
    expect(run).toMatchObject({ status: 'succeeded', sourceUrls: [] });
    expect(run.sources.map((s) => s.title)).toEqual(['Hit 6', 'Linked']);
  });
});

describe('provider errors fail the run with the reason; nothing is fetched, the model is not called', () => {
  async function failedRun(query: string, limits: Record<string, number> = {}) {
    const chats = llm.chats.length;
    const requests = site.requests.length;
    const res = await createResearch(stack.app, stack.ws.token, { query, limits });
    expect(res.status).toBe(202);
    const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id, undefined, 120_000);
    expect(run).toMatchObject({ status: 'failed', resultDocumentId: null, sources: [] });
    expect(site.requests.length).toBe(requests);
    expect(llm.chats.length).toBe(chats);
    expect(await rowsOf(run.id)).toEqual([]);
    return run;
  }

  test('HTTP 500: retried like the fetches (5 attempts), then failed', async () => {
    searx.raw((q) => (q === 'five hundred' ? { status: 500, body: 'Internal Server Error', contentType: 'text/plain' } : undefined));
    const run = await failedRun('five hundred');
    expect(run.error).toBe('The web search (searxng) answered HTTP 500.');
    expect(searchesFor('five hundred')).toHaveLength(5);
  }, 150_000);

  test('malformed JSON: failed at once (another attempt would get the same answer)', async () => {
    searx.raw((q) =>
      q === 'malformed' ? { body: '{"results": [ {"url": "http://a.example/"', contentType: 'application/json' } : undefined,
    );
    const run = await failedRun('malformed');
    expect(run.error).toBe('The web search (searxng) answered something other than the JSON its API documents (results[] with url).');
    expect(searchesFor('malformed')).toHaveLength(1);
  });

  test('JSON without a results list, and the 403 of an instance without the json format', async () => {
    searx.raw((q) => (q === 'no list' ? { body: JSON.stringify({ results: 'none' }) } : undefined));
    expect((await failedRun('no list')).error).toBe(
      'The web search (searxng) answered something other than the JSON its API documents (results[] with url).',
    );
    searx.raw((q) => (q === 'forbidden' ? { status: 403, body: '<h1>403 Forbidden</h1>', contentType: 'text/html' } : undefined));
    expect((await failedRun('forbidden')).error).toBe(
      'The web search (searxng) answered HTTP 403 (is the json format enabled in its settings.yml, search.formats?).',
    );
    expect(searchesFor('forbidden')).toHaveLength(1);
  });

  test('no result: failed with that reason', async () => {
    searx.results(() => []);
    expect((await failedRun('nothing at all')).error).toBe('The web search (searxng) found no result for this query.');
  });

  test('a provider that does not answer: each attempt times out at timeoutMs, then the run fails', async () => {
    const gate = searx.hold();
    try {
      const run = await failedRun('silence', { timeoutMs: 1000 });
      expect(run.error).toBe('The web search (searxng) failed: Request timed out after 1000 ms.');
      expect(searchesFor('silence')).toHaveLength(5);
    } finally {
      gate.release();
    }
  }, 150_000);
});
