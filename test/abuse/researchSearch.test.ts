/**
 * Issue 31, item 3: the web search of research runs is a new input path (the provider's answer).
 * Workspace A's runs get hostile answers from the loopback SearxNG: over the size cap, nested
 * half a million deep, hundreds of thousands of junk entries, not JSON, and results whose titles
 * carry NUL bytes and lone surrogates (made storable where the answer's metadata is written, by
 * the knowledge area's document writer). Each run ends with a clear reason (or succeeds with
 * well-formed metadata), never a crash or a stuck run; meanwhile workspace B's run with only a
 * query completes, and B's probe keeps succeeding (the kit's `survives`).
 */
import type { AppConfig } from '../../services/kernel/config';
import { startFakeLlm, type FakeLlmServer } from '../fakes/llm';
import { htmlPage, startFakeSite, type FakeSite } from '../fakes/web';
import { startFakeSearxng, type FakeSearchProvider } from '../fakes/webSearch';
import { createResearch, llmConfig, waitForResearch, type ResearchRun } from '../integration/research/support';
import { abuseStackPerFile, expectWellFormed, type AbuseWorkspace } from './kit';

let llm: FakeLlmServer;
let site: FakeSite;
let searx: FakeSearchProvider;
const config: Partial<AppConfig> = {};

// Registered before the kit's own beforeAll, so the stack starts with the fakes' addresses.
beforeAll(async () => {
  llm = await startFakeLlm();
  site = await startFakeSite();
  searx = await startFakeSearxng();
  Object.assign(config, { llm: llmConfig(llm), research: { search: { provider: 'searxng', baseUrl: searx.url, apiKey: undefined } } });
  site.page('/fine', htmlPage('Fine page', 'An ordinary page about research under attack.'));
  llm.reply(() => ({ content: 'An answer [1].' }));
});
const kit = abuseStackPerFile({ config });
afterAll(async () => {
  await llm?.close();
  await site?.close();
  await searx?.close();
});

const DEPTH = 500_000;
const hostile: Record<string, { body: string; contentType?: string }> = {
  'over the size cap': {
    body: JSON.stringify({ results: Array.from({ length: 60_000 }, (_, i) => ({ url: `http://x.example/${i}`, title: 'x'.repeat(200) })) }),
  },
  'nested half a million deep': { body: `{"results":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}` },
  'hundreds of thousands of junk entries': {
    body: JSON.stringify({ results: Array.from({ length: 300_000 }, (_, i) => [null, 1, 'x', { url: 1 }][i % 4]) }),
  },
  'not JSON under a JSON content type': { body: '<html>'.repeat(10_000) },
  'a binary body': {
    body: Buffer.from(Array.from({ length: 100_000 }, (_, i) => i % 256)).toString('latin1'),
    contentType: 'application/octet-stream',
  },
};

/** A's run for `query`; it must end (failed or succeeded), its status and error returned. */
async function runOf(ws: AbuseWorkspace, query: string): Promise<ResearchRun> {
  const res = await createResearch(kit.app, ws.token, { query });
  expect([res.status, res.text.slice(0, 300)]).toEqual([202, expect.anything()]);
  return waitForResearch(kit.app, ws.token, res.body.data.run.id, undefined, 120_000);
}

test('hostile provider answers fail A’s runs with a clear reason; B’s run with only a query completes meanwhile', async () => {
  searx.raw((q) => (hostile[q] ? { contentType: 'application/json', ...hostile[q] } : undefined));
  searx.results((q) => (q === 'bystander' ? [{ url: `${site.origin}/fine`, title: 'Fine' }] : []));
  await kit.survives(async () => {
    const [attacks, bystander] = await Promise.all([
      Promise.all(Object.keys(hostile).map((q) => runOf(kit.a, q))),
      runOf(kit.b, 'bystander'),
    ]);
    expect(bystander).toMatchObject({ status: 'succeeded', resultDocumentId: expect.any(String) });
    expect(bystander.sources.map((s) => s.title)).toEqual(['Fine page']);
    expect(Object.fromEntries(attacks.map((r) => [r.query, [r.status, r.error]]))).toEqual({
      'over the size cap': ['failed', 'The web search (searxng) answered more than 2097152 bytes, so its answer was not read.'],
      'nested half a million deep': ['failed', 'The web search (searxng) found no result for this query.'],
      'hundreds of thousands of junk entries': ['failed', 'The web search (searxng) found no result for this query.'],
      'not JSON under a JSON content type': [
        'failed',
        'The web search (searxng) answered something other than the JSON its API documents (results[] with url).',
      ],
      'a binary body': [
        'failed',
        'The web search (searxng) answered something other than the JSON its API documents (results[] with url).',
      ],
    });
  });
});

test('result titles with NUL bytes and lone surrogates, and URLs that are no web pages: the run succeeds, its metadata well-formed', async () => {
  searx.raw(null);
  searx.results((q) =>
    q === 'odd titles'
      ? [
          { url: 'javascript:alert(1)', title: 'script' },
          { url: `http://${'a'.repeat(5000)}.example/`, title: 'too long' },
          { url: `${site.origin}/fine?odd`, title: 'NUL\u0000 and a lone \ud800 surrogate' },
        ]
      : [],
  );
  await kit.survives(async () => {
    const run = await runOf(kit.a, 'odd titles');
    expect(run.status).toBe('succeeded');
    const [doc] = await kit.app.orm.em
      .fork()
      .getConnection()
      .execute(`select metadata from knowledge_documents where id = ?`, [run.resultDocumentId]);
    expect(doc.metadata.search.results).toEqual([{ url: `${site.origin}/fine?odd`, title: 'NUL\ufffd and a lone \ufffd surrogate' }]);
    expectWellFormed(doc.metadata);
  });
});
