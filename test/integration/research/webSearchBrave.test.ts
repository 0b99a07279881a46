/**
 * Research runs with only a `query` on a deployment whose web search provider is the Brave
 * Search API (a loopback fake speaking its documented JSON): the subscription token and
 * `count` are sent, the results in `web.results[]` are read as given URLs are, a query over
 * Brave's bounds is cut at a word, and a refused token fails the run with the provider's status.
 */
import { startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import { htmlPage, startFakeSite, type FakeSite } from '../../fakes/web';
import { startFakeBrave, type FakeSearchProvider } from '../../fakes/webSearch';
import { useTestStack } from '../../kit';
import { createResearch, llmConfig, waitForResearch } from './support';

const TOKEN = 'brave-subscription-token-0123';
let llm: FakeLlmServer;
let site: FakeSite;
let brave: FakeSearchProvider;

const stack = useTestStack(async () => {
  llm = await startFakeLlm();
  site = await startFakeSite();
  brave = await startFakeBrave(TOKEN);
  return { config: { llm: llmConfig(llm), research: { search: { provider: 'brave' as const, baseUrl: brave.url, apiKey: TOKEN } } } };
});
beforeAll(() => {
  site.page('/otters', htmlPage('Otters', 'Otters hold hands while they sleep.'));
  site.page('/rivers', htmlPage('Rivers', 'Rivers are where otters live.'));
  llm.reply(() => ({ content: 'Otters sleep holding hands [1].' }));
});
afterAll(async () => {
  await llm?.close();
  await site?.close();
  await brave?.close();
});

test('a run with only a query reads the pages of web.results[]; the token and count are sent', async () => {
  brave.results(() => [
    { url: `${site.origin}/otters`, title: 'Otters', content: 'snippet' },
    { url: `${site.origin}/rivers`, title: 'Rivers' },
  ]);
  const res = await createResearch(stack.app, stack.ws.token, { query: 'Do otters hold hands?', limits: { maxPages: 4 } });
  const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id);
  expect(run).toMatchObject({ status: 'succeeded', sourceUrls: [] });
  expect(run.sources.map((s) => s.canonicalUrl)).toEqual([`${site.origin}/otters`, `${site.origin}/rivers`]);
  const [search] = brave.requests;
  expect(search.path).toBe('/res/v1/web/search');
  expect(search.query.get('q')).toBe('Do otters hold hands?');
  expect(search.query.get('count')).toBe('4');
  expect(search.headers['x-subscription-token']).toBe(TOKEN);
  expect(search.headers.accept).toBe('application/json');
});

test("a query over Brave's bounds (50 words, 400 characters) is cut at a word", async () => {
  brave.results(() => [{ url: `${site.origin}/otters?long` }]);
  const query = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
  const res = await createResearch(stack.app, stack.ws.token, { query });
  const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id);
  expect(run.status).toBe('succeeded');
  const sent = brave.requests.at(-1)!.query.get('q')!;
  expect(sent).toBe(query.split(' ').slice(0, 50).join(' '));
  expect(sent.length).toBeLessThanOrEqual(400);
});

test('an answer without web results fails the run as finding nothing', async () => {
  brave.results(() => []);
  const res = await createResearch(stack.app, stack.ws.token, { query: 'nothing on the web' });
  const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id);
  expect(run).toMatchObject({ status: 'failed', error: 'The web search (brave) found no result for this query.' });
});

test('a refused subscription token fails the run with the status, without retries', async () => {
  brave.raw((q) =>
    q === 'bad token'
      ? {
          status: 422,
          body: JSON.stringify({ type: 'ErrorResponse', error: { status: 422, code: 'SUBSCRIPTION_TOKEN_INVALID' } }),
        }
      : undefined,
  );
  const res = await createResearch(stack.app, stack.ws.token, { query: 'bad token' });
  const run = await waitForResearch(stack.app, stack.ws.token, res.body.data.run.id);
  expect(run).toMatchObject({ status: 'failed', error: 'The web search (brave) answered HTTP 422.', sources: [] });
  expect(brave.requests.filter((r) => r.query.get('q') === 'bad token')).toHaveLength(1);
});
