/**
 * Research runs executed by a worker in its own process, in a Temporal namespace of this file
 * alone (so no other test file's worker, which may reach private networks, picks up its tasks):
 * - crash-resume: the worker is SIGKILLed while a page is in flight after three sources were
 *   stored; the next worker fetches only what was not stored (requests counted on the site);
 * - the outbound guard: with private networks disallowed, a loopback source and the cloud
 *   metadata address are refused before any request and recorded as refused; so are the same
 *   URLs when a web search (the loopback SearxNG, the operator's endpoint, reached all the same)
 *   answers them for a run with only a query;
 * - a worker without the API's web search settings fails such a run, naming the setting.
 */
import type { ChildProcess } from 'node:child_process';
import { startFakeLlm, lastMessage, type FakeLlmServer } from '../../fakes/llm';
import { htmlPage, startFakeSite, type FakeSite } from '../../fakes/web';
import { startFakeSearxng, type FakeSearchProvider } from '../../fakes/webSearch';
import { useTestStack } from '../../kit';
import { killWorker, spawnWorker } from '../../support/workerProcess';
import { ensureNamespace } from '../../support/namespaces';
import { createResearch, getResearch, llmConfig, waitForResearch } from './support';

const NAMESPACE = 'research-isolated';
let llm: FakeLlmServer;
let site: FakeSite;
let searx: FakeSearchProvider;
let worker: ChildProcess | undefined;
let workerEnv: Record<string, string>;
const sql = (q: string, params: unknown[] = []) => stack.app.orm.em.fork().getConnection().execute(q, params);

/** Workers are spawned processes on this file's namespace: none in the test process. */
const stack = useTestStack(async () => {
  llm = await startFakeLlm();
  site = await startFakeSite();
  searx = await startFakeSearxng();
  await ensureNamespace(NAMESPACE);
  return {
    config: { llm: llmConfig(llm), research: { search: { provider: 'searxng' as const, baseUrl: searx.url, apiKey: undefined } } },
    temporal: { namespace: NAMESPACE },
    worker: false,
  };
});
beforeAll(async () => {
  workerEnv = {
    TEMPORAL_NAMESPACE: NAMESPACE,
    LLM_BASE_URL: llm.url,
    LLM_API_KEY: llm.apiKey,
    LLM_MODEL: llm.model,
    LLM_MAX_RETRIES: '0',
    RESEARCH_SEARCH_PROVIDER: 'searxng',
    RESEARCH_SEARCH_URL: searx.url,
  };
  site.page('/start', htmlPage('Start', 'The start page about crash recovery.', ['/one', '/two', '/three']));
  site.page('/one', htmlPage('One', 'First linked page text.'));
  site.page('/two', htmlPage('Two', 'Second linked page text.'));
  site.page('/three', htmlPage('Three', 'Third linked page text.'));
  llm.reply(() => ({ content: 'Recovered answer [1][4].', usage: { prompt_tokens: 10, completion_tokens: 5 } }));
});
stack.beforeClose(async () => {
  if (worker) await killWorker(worker);
});
afterAll(async () => {
  await llm?.close();
  await site?.close();
  await searx?.close();
});

test('a worker killed mid-run is replaced; stored sources are not fetched again', async () => {
  worker = await spawnWorker(workerEnv);
  const gate = site.hold('/three');
  const res = await createResearch(stack.app, stack.ws.token, {
    query: 'How do runs recover?',
    sourceUrls: [`${site.origin}/start`],
    limits: { maxPages: 10 },
  });
  expect(res.status).toBe(202);
  const id = res.body.data.run.id;
  await gate.held;
  const before = await getResearch(stack.app, stack.ws.token, id);
  expect(before.status).toBe('running');
  expect(before.sources.map((s) => s.title)).toEqual(['Start', 'One', 'Two']);

  await killWorker(worker);
  gate.release();
  worker = await spawnWorker(workerEnv);

  const run = await waitForResearch(stack.app, stack.ws.token, id, undefined, 120_000);
  expect(run.status).toBe('succeeded');
  expect(run.sources.map((s) => s.title)).toEqual(['Start', 'One', 'Two', 'Three']);
  expect(run.resultDocumentId).toEqual(expect.any(String));
  // Stored before the crash: fetched once. In flight at the crash: fetched again by the retry.
  expect([site.count('/start'), site.count('/one'), site.count('/two'), site.count('/three')]).toEqual([1, 1, 1, 2]);
  expect(llm.chats.filter((c) => lastMessage(c).includes('How do runs recover?'))).toHaveLength(1);
  const rows = await sql(`select count(*)::int as n from research_sources where run_id = ?`, [id]);
  expect(rows[0].n).toBe(4);
}, 180_000);

/** A run on a worker that refuses private networks: it fails with nothing fetched and no model call; its source rows. */
async function runRefusingPrivateNetworks(body: unknown): Promise<unknown[]> {
  if (worker) await killWorker(worker);
  worker = await spawnWorker({ ...workerEnv, OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false' });
  const requests = site.requests.length;
  const chats = llm.chats.length;
  const res = await createResearch(stack.app, stack.ws.token, body);
  expect(res.status).toBe(202);
  const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id, undefined, 120_000);
  expect(run).toMatchObject({ status: 'failed', error: 'No source could be fetched, so there was nothing to research.', sources: [] });
  expect(site.requests.length).toBe(requests);
  expect(llm.chats.length).toBe(chats);
  return sql(`select url, outcome, reason from research_sources where run_id = ? order by created_at, id`, [run.id]);
}

const refused = (url: string, range: string) => ({
  url,
  outcome: 'refused',
  reason: expect.stringMatching(new RegExp(`^Outbound request refused: .*${range}`)),
});

test('with private networks disallowed, a loopback source and the metadata address are refused and recorded; nothing is requested', async () => {
  const rows = await runRefusingPrivateNetworks({
    query: 'Guarded?',
    sourceUrls: [`${site.origin}/one`, 'http://169.254.169.254/latest/meta-data/'],
  });
  expect(rows).toEqual([refused(`${site.origin}/one`, 'loopback'), refused('http://169.254.169.254/latest/meta-data/', 'link-local')]);
}, 180_000);

test('with private networks disallowed, search results on loopback and the metadata address are refused as given URLs are', async () => {
  searx.results(() => [
    { url: `${site.origin}/two` },
    { url: 'http://169.254.169.254/latest/meta-data/' },
    { url: 'http://localhost/admin' },
  ]);
  const rows = await runRefusingPrivateNetworks({ query: 'Guarded search?' });
  // The provider itself is the operator's endpoint: reached although it is on loopback.
  expect(searx.requests.filter((r) => r.query.get('q') === 'Guarded search?')).toHaveLength(1);
  expect(rows).toEqual([
    refused(`${site.origin}/two`, 'loopback'),
    refused('http://169.254.169.254/latest/meta-data/', 'link-local'),
    refused('http://localhost/admin', 'loopback'),
  ]);
}, 180_000);

test('a worker without the web search settings of the API fails a run with only a query, naming the setting', async () => {
  if (worker) await killWorker(worker);
  const { RESEARCH_SEARCH_PROVIDER: _provider, RESEARCH_SEARCH_URL: _url, ...withoutSearch } = workerEnv;
  worker = await spawnWorker(withoutSearch);
  const searches = searx.requests.length;
  const res = await createResearch(stack.app, stack.ws.token, { query: 'Which worker searches?' });
  expect(res.status).toBe(202);
  const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id, undefined, 120_000);
  expect(run).toMatchObject({
    status: 'failed',
    error: 'This worker has no web search provider configured (RESEARCH_SEARCH_PROVIDER is not set).',
    sources: [],
  });
  expect(searx.requests.length).toBe(searches);
}, 180_000);
