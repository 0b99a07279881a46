/**
 * Research runs over real HTTP, PostgreSQL and Temporal, with a loopback web site (pages, links,
 * robots.txt) and a loopback OpenAI-compatible model server: create (202, run id from the key,
 * dispatch), replay (200, Idempotency-Replayed, deduplicated) and conflict, the fetch (sources
 * and same-domain links within limits, robots.txt honoured and skips recorded), the synthesized
 * answer in the "Research" knowledge base with usage and cost, list (status filter, cursor,
 * limits), get, cancel (running and terminal), validation messages, scopes, and another
 * workspace's ids (404, nothing changed).
 */
import { createHash } from 'node:crypto';
import { startFakeLlm, lastMessage, type FakeLlmServer } from '../../fakes/llm';
import { htmlPage, startFakeSite, type FakeSite } from '../../fakes/web';
import type { z } from 'zod';
import type { knowledgeBaseList, knowledgeDocumentEnvelope } from '../../../api/schemas/knowledge';
import type { researchRunListSchema } from '../../../api/schemas/research';
import { addUserWithKey, createWorkspace, useTestStack, type Enveloped, type WorkspaceFixture } from '../../kit';
import {
  createResearch,
  expectedRunId,
  getResearch,
  key,
  llmConfig,
  waitForResearch,
  type ResearchRun,
  type ResearchRunAnswer,
} from './support';
import { fetchResearchSource } from '../../../services/research';

type ResearchRunList = Enveloped<z.infer<typeof researchRunListSchema>>;

let llm: FakeLlmServer;
let site: FakeSite;
let token: string;
let other: WorkspaceFixture;
const META = { contractVersion: 'api-contracts.v1' };
const RUN_FIELDS = [
  'id',
  'workspaceId',
  'createdById',
  'query',
  'sourceUrls',
  'limits',
  'status',
  'resultDocumentId',
  'error',
  'cancelRequestedAt',
  'startedAt',
  'finishedAt',
  'createdAt',
  'updatedAt',
  'sources',
].sort();
const NO_WEB_SEARCH =
  'Invalid request body: sourceUrls: sourceUrls must name at least one URL, since this deployment has no web search provider (RESEARCH_SEARCH_PROVIDER is not set).';
const sql = (q: string, params: unknown[] = []) => stack.app.orm.em.fork().getConnection().execute(q, params);

const stack = useTestStack(async () => {
  llm = await startFakeLlm();
  site = await startFakeSite();
  return { config: { llm: llmConfig(llm) } };
});
beforeAll(async () => {
  token = stack.ws.token;
  other = await createWorkspace(stack.app, 'Other');
  site.robots('User-agent: *\nDisallow: /private\n');
  site.page(
    '/start',
    htmlPage('Start page', 'Alpha facts about otters and rivers.', [
      '/linked',
      '/private/secret',
      'http://other.example/elsewhere',
      '#top',
    ]),
  );
  site.page('/linked', htmlPage('Linked page', 'Beta details about otter diets.', ['/start']));
  site.page('/private/secret', htmlPage('Secret', 'Nobody should read this.'));
  site.page('/second', htmlPage('Second page', 'Gamma notes about otter habitats.', ['/linked']));
  site.page('/plain.txt', { body: 'Plain text about otters.\n\n\n\nMore text.', contentType: 'text/plain' });
  site.page('/image.png', { body: 'PNG', contentType: 'image/png' });
});
afterAll(async () => {
  await llm?.close();
  await site?.close();
});

describe('a run end to end', () => {
  let run: ResearchRun;
  let k: string;
  const body = () => ({ query: 'What do otters eat?', sourceUrls: [`${site.origin}/start#intro`], limits: { maxPages: 5 } });

  beforeAll(async () => {
    llm.reply((req) => ({
      content: lastMessage(req).includes('Beta details') ? 'Otters eat fish [1][2].' : 'No idea.',
      usage: { prompt_tokens: 1000, completion_tokens: 100 },
    }));
    k = key();
    const res = await createResearch(stack.app, token, body(), k);
    expect(res.status).toBe(202);
    expect(Object.keys(res.body.data.run).sort()).toEqual(RUN_FIELDS);
    expect(res.body).toMatchObject({
      ok: true,
      meta: META,
      data: {
        run: {
          id: expectedRunId(stack.ws.workspaceId, k),
          workspaceId: stack.ws.workspaceId,
          createdById: stack.ws.ownerId,
          query: 'What do otters eat?',
          sourceUrls: [`${site.origin}/start`],
          limits: { maxPages: 5 },
          status: expect.stringMatching(/^(queued|running|succeeded)$/),
          error: null,
          cancelRequestedAt: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          sources: expect.any(Array),
        },
        deduplicated: false,
        dispatch: { dispatched: true, queued: true, mode: 'temporal' },
      },
    });
    run = await waitForResearch(stack.app, token, res.body.data.run.id);
  });

  test('succeeds with the source and its same-domain link as snapshots, in fetch order', () => {
    expect(run.status).toBe('succeeded');
    expect(run.error).toBeNull();
    expect(run.startedAt).toEqual(expect.any(String));
    expect(run.finishedAt).toEqual(expect.any(String));
    expect(run.sources.map((s) => s.canonicalUrl)).toEqual([`${site.origin}/start`, `${site.origin}/linked`]);
    const [start] = run.sources;
    expect(Object.keys(start).sort()).toEqual(
      ['canonicalUrl', 'createdAt', 'fetchedAt', 'id', 'runId', 'sha256', 'snapshotFileId', 'snapshotText', 'title'].sort(),
    );
    expect(start).toMatchObject({ runId: run.id, title: 'Start page', snapshotFileId: null });
    expect(start.snapshotText).toContain('Alpha facts about otters and rivers.');
    expect(start.snapshotText).not.toContain('footer text');
    expect(start.sha256).toBe(createHash('sha256').update(start.snapshotText, 'utf8').digest('hex'));
  });

  test('its execution is filed under the workspace, the trigger and the query (search attributes)', async () => {
    const execution = await stack.app.deps.temporal.client.workflow.getHandle(run.id).describe();
    expect(execution.searchAttributes).toMatchObject({
      WorkspaceId: [stack.ws.workspaceId],
      SvcTrigger: ['research'],
      SvcName: ['What do otters eat?'],
    });
  });

  test('robots.txt is read once and a disallowed page is not fetched but recorded as skipped', async () => {
    expect(site.count('/robots.txt')).toBe(1);
    expect(site.count('/private/secret')).toBe(0);
    expect(site.count('/start')).toBe(1);
    expect(site.count('/linked')).toBe(1);
    const rows = await sql(`select url, outcome, reason from research_sources where run_id = ? order by created_at, id`, [run.id]);
    expect(rows).toEqual([
      { url: `${site.origin}/start`, outcome: 'stored', reason: null },
      { url: `${site.origin}/linked`, outcome: 'stored', reason: null },
      { url: `${site.origin}/private/secret`, outcome: 'skipped', reason: 'Disallowed by robots.txt for svc-research/1.0.' },
    ]);
  });

  test('the model saw the question and the snapshots; the answer is a document of the "Research" knowledge base; usage and cost are recorded', async () => {
    const chat = llm.chats.find((c) => lastMessage(c).includes('What do otters eat?'))!;
    expect(lastMessage(chat)).toContain('[1] Start page');
    expect(lastMessage(chat)).toContain('[2] Linked page');
    expect(run.resultDocumentId).toEqual(expect.any(String));

    const bases = await stack.as(token).get<z.infer<typeof knowledgeBaseList>>('/api/v1/knowledge-bases');
    const research = bases.body.knowledgeBases.filter((b) => b.name === 'Research');
    expect(research).toHaveLength(1);
    const doc = await stack
      .as(token)
      .get<z.infer<typeof knowledgeDocumentEnvelope>>(`/api/v1/knowledge-bases/${research[0].id}/documents/${run.resultDocumentId}`);
    expect(doc.status).toBe(200);
    expect(doc.body.document).toMatchObject({
      name: 'Research: What do otters eat?',
      mimeType: 'text/markdown',
      metadata: expect.objectContaining({ researchRunId: run.id, costCredits: 3 }),
    });
    const [text] = await sql(`select content_text from knowledge_documents where id = ?`, [run.resultDocumentId]);
    expect(text.content_text).toContain('Otters eat fish [1][2].');
    expect(text.content_text).toContain(`[1] Start page — ${site.origin}/start`);

    const [row] = await sql(`select prompt_tokens, completion_tokens, cost_credits from research_runs where id = ?`, [run.id]);
    expect(row).toEqual({ prompt_tokens: 1000, completion_tokens: 100, cost_credits: 3 });
  });

  test('a replay answers 200 with the run as it is now, deduplicated, not dispatched; nothing runs again', async () => {
    const chats = llm.chats.length;
    const res = await createResearch(stack.app, token, body(), k);
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotency-replayed')).toBe('true');
    expect(res.body.data).toEqual({ run: { ...run, updatedAt: expect.any(String) }, deduplicated: true, dispatch: { dispatched: false } });
    expect(res.body.data.run.status).toBe('succeeded');
    expect(llm.chats.length).toBe(chats);
    expect(site.count('/start')).toBe(1);
  });

  test('the same key with another body is 409 conflict; the run is unchanged', async () => {
    const res = await createResearch(stack.app, token, { ...body(), query: 'Something else?' }, k);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      ok: false,
      error: { code: 'conflict', message: 'This Idempotency-Key was already used for a research run with a different request.' },
    });
    expect((await getResearch(stack.app, token, run.id)).query).toBe('What do otters eat?');
  });

  test('the same key in another workspace names another run', async () => {
    const res = await createResearch(stack.app, other.token, { query: 'q', sourceUrls: [`${site.origin}/image.png`] }, k);
    expect(res.status).toBe(202);
    expect(res.body.data.run.id).toBe(expectedRunId(other.workspaceId, k));
    expect(res.body.data.run.id).not.toBe(run.id);
    await waitForResearch(stack.app, other.token, res.body.data.run.id);
  });

  test('GET and cancel of this run with another workspace key are 404 and change nothing', async () => {
    const get = await stack.as(other.token).get<ResearchRunAnswer>(`/api/v1/research/${run.id}`);
    expect(get.status).toBe(404);
    expect(get.body).toEqual({ ok: false, error: { code: 'resource_not_found', message: `Research run ${run.id} not found.` } });
    const cancel = await stack
      .as(other.token)
      .post<ResearchRunAnswer>(`/api/v1/research/${run.id}/cancel`, undefined, { headers: { 'idempotency-key': key() } });
    expect(cancel.status).toBe(404);
    expect(cancel.body.error.code).toBe('resource_not_found');
    const list = await stack.as(other.token).get<ResearchRunList>('/api/v1/research?limit=100');
    expect(list.body.data.runs.map((r) => r.id)).not.toContain(run.id);
    const [row] = await sql(`select status, cancel_requested_at from research_runs where id = ?`, [run.id]);
    expect(row).toEqual({ status: 'succeeded', cancel_requested_at: null });
  });

  test('cancel of a terminal run returns the current row (no 409); its key replays', async () => {
    const ck = key();
    const res = await stack
      .as(token)
      .post<ResearchRunAnswer>(`/api/v1/research/${run.id}/cancel`, undefined, { headers: { 'idempotency-key': ck } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, meta: META, data: { run: { ...run, updatedAt: expect.any(String) } } });
    const again = await stack
      .as(token)
      .post<ResearchRunAnswer>(`/api/v1/research/${run.id}/cancel`, undefined, { headers: { 'idempotency-key': ck } });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
  });
});

describe('limits and outcomes', () => {
  test('maxPages stops the crawl: a second source over the limit is recorded as skipped, links are not followed', async () => {
    const res = await createResearch(stack.app, token, {
      query: 'habitats',
      sourceUrls: [`${site.origin}/second`, `${site.origin}/plain.txt`],
      limits: { maxPages: 1 },
    });
    const run = await waitForResearch(stack.app, token, res.body.data.run.id);
    expect(run.status).toBe('succeeded');
    expect(run.sources.map((s) => s.canonicalUrl)).toEqual([`${site.origin}/second`]);
    const rows = await sql(`select url, outcome, reason from research_sources where run_id = ? order by created_at, id`, [run.id]);
    expect(rows).toEqual([
      { url: `${site.origin}/second`, outcome: 'stored', reason: null },
      { url: `${site.origin}/plain.txt`, outcome: 'skipped', reason: "Over the run's maxPages limit (1)." },
    ]);
  });

  test('maxDomains: a source on another hostname over the limit is skipped without a request; plain text is read', async () => {
    const before = site.requests.length;
    const res = await createResearch(stack.app, token, {
      query: 'plain',
      sourceUrls: [`${site.origin}/plain.txt`, 'http://localhost:9/never'],
      limits: { maxDomains: 1 },
    });
    const run = await waitForResearch(stack.app, token, res.body.data.run.id);
    expect(run.status).toBe('succeeded');
    expect(run.sources).toHaveLength(1);
    expect(run.sources[0]).toMatchObject({ title: null, snapshotText: 'Plain text about otters.\n\nMore text.' });
    const rows = await sql(`select url, outcome, reason from research_sources where run_id = ? order by created_at, id`, [run.id]);
    expect(rows[1]).toEqual({ url: 'http://localhost:9/never', outcome: 'skipped', reason: "Over the run's maxDomains limit (1)." });
    expect(site.requests.slice(before).filter((p) => p !== '/robots.txt')).toEqual(['/plain.txt']);
  });

  test('maxBytes: a page larger than the budget is skipped', async () => {
    site.page('/big', htmlPage('Big', 'x'.repeat(3000)));
    const res = await createResearch(stack.app, token, {
      query: 'big',
      sourceUrls: [`${site.origin}/big`, `${site.origin}/plain.txt`],
      limits: { maxBytes: 1024 },
    });
    const run = await waitForResearch(stack.app, token, res.body.data.run.id);
    expect(run.status).toBe('succeeded');
    const rows = await sql(`select url, outcome, reason from research_sources where run_id = ? order by created_at, id`, [run.id]);
    expect(rows[0]).toEqual({
      url: `${site.origin}/big`,
      outcome: 'skipped',
      reason: "The page is larger than the run's remaining byte budget (1024 bytes).",
    });
    expect(rows[1].outcome).toBe('stored');
  });

  test('a run whose sources all fail is failed with the reason, without a model call', async () => {
    const chats = llm.chats.length;
    const res = await createResearch(stack.app, token, {
      query: 'nothing',
      sourceUrls: [`${site.origin}/missing`, `${site.origin}/image.png`],
    });
    const run = await waitForResearch(stack.app, token, res.body.data.run.id);
    expect(run).toMatchObject({
      status: 'failed',
      error: 'No source could be fetched, so there was nothing to research.',
      resultDocumentId: null,
      sources: [],
    });
    expect(llm.chats.length).toBe(chats);
    const rows = await sql(`select outcome, reason from research_sources where run_id = ? order by created_at, id`, [run.id]);
    expect(rows).toEqual([
      { outcome: 'failed', reason: 'The page answered HTTP 404.' },
      { outcome: 'skipped', reason: 'Unsupported content type "image/png" (HTML and plain text are read).' },
    ]);
  });
  test('a model that refuses the request fails the run with the reason; the snapshots stay', async () => {
    llm.reply(() => ({ status: 400 }));
    try {
      const res = await createResearch(stack.app, token, { query: 'refused by the model', sourceUrls: [`${site.origin}/plain.txt`] });
      const run = await waitForResearch(stack.app, token, res.body.data.run.id);
      expect(run).toMatchObject({
        status: 'failed',
        resultDocumentId: null,
        error: expect.stringMatching(/^The answer could not be synthesized: 400 /),
      });
      expect(run.sources).toHaveLength(1);
    } finally {
      llm.reply((req) => ({ content: `answer to ${lastMessage(req).slice(0, 20)}` }));
    }
  });

  test('a fetch retried for a URL its run already stored returns the stored row and makes no request', async () => {
    const res = await createResearch(stack.app, token, { query: 'retry', sourceUrls: [`${site.origin}/second`], limits: { maxPages: 1 } });
    const run = await waitForResearch(stack.app, token, res.body.data.run.id);
    const before = site.requests.length;
    const again = await fetchResearchSource(
      stack.app.orm.em.fork(),
      { allowPrivateNetworks: true },
      {
        workspaceId: stack.ws.workspaceId,
        runId: run.id,
        url: `${site.origin}/second`,
        timeoutMs: 5_000,
        maxBytes: 1_000_000,
        domains: ['127.0.0.1'],
      },
    );
    expect(again).toEqual({ outcome: 'stored', bytes: expect.any(Number), links: [`${site.origin}/linked`] });
    expect(site.requests.length).toBe(before);
    expect((await getResearch(stack.app, token, run.id)).sources).toHaveLength(1);
  });
});

describe('cancel', () => {
  test('a running run is canceled at once; its execution stops at the next step (no model call, no document)', async () => {
    site.page('/slow', htmlPage('Slow', 'Slow page text.', ['/linked']));
    const gate = site.hold('/slow');
    const chats = llm.chats.length;
    const res = await createResearch(stack.app, token, { query: 'slow', sourceUrls: [`${site.origin}/slow`] });
    const id = res.body.data.run.id;
    await gate.held;
    expect((await getResearch(stack.app, token, id)).status).toBe('running');

    const ck = key();
    const cancel = await stack
      .as(token)
      .post<ResearchRunAnswer>(`/api/v1/research/${id}/cancel`, undefined, { headers: { 'idempotency-key': ck } });
    expect(cancel.status).toBe(200);
    expect(cancel.body.data.run).toMatchObject({
      id,
      status: 'canceled',
      cancelRequestedAt: expect.any(String),
      finishedAt: expect.any(String),
      resultDocumentId: null,
    });
    gate.release();

    const execution = await stack.app.deps.temporal.client.workflow
      .getHandle(id)
      .result()
      .then(
        () => 'completed',
        (err: Error) => err.constructor.name,
      );
    expect(execution).toBe('WorkflowFailedError');
    const description = await stack.app.deps.temporal.client.workflow.getHandle(id).describe();
    expect(description.status.name).toBe('CANCELLED');
    const after = await getResearch(stack.app, token, id);
    expect(after).toMatchObject({ status: 'canceled', resultDocumentId: null });
    expect(site.count('/linked')).toBe(1); // only the first run's fetch: the canceled run went no further
    expect(llm.chats.length).toBe(chats);

    const replay = await stack
      .as(token)
      .post<ResearchRunAnswer>(`/api/v1/research/${id}/cancel`, undefined, { headers: { 'idempotency-key': ck } });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
  });

  test('unknown id is 404; a missing Idempotency-Key is 400 idempotency_key_invalid', async () => {
    const missing = await stack
      .as(token)
      .post<ResearchRunAnswer>('/api/v1/research/research_nope/cancel', undefined, { headers: { 'idempotency-key': key() } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ ok: false, error: { code: 'resource_not_found', message: 'Research run research_nope not found.' } });
    const nokey = await stack.as(token).post<ResearchRunAnswer>('/api/v1/research/research_nope/cancel');
    expect(nokey.status).toBe(400);
    expect(nokey.body).toEqual({ ok: false, error: { code: 'idempotency_key_invalid', message: 'Idempotency-Key header is required.' } });
  });
});

describe('create: input and access', () => {
  const valid = () => ({ query: 'q', sourceUrls: [`${site.origin}/start`] });
  const count = async () =>
    Number((await sql(`select count(*)::int as n from research_runs where workspace_id = ?`, [stack.ws.workspaceId]))[0].n);

  test('a missing or invalid Idempotency-Key is 400 idempotency_key_invalid', async () => {
    const before = await count();
    const res = await createResearch(stack.app, token, valid(), null);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ ok: false, error: { code: 'idempotency_key_invalid', message: 'Idempotency-Key header is required.' } });
    const bad = await createResearch(stack.app, token, valid(), 'has space');
    expect(bad.body.error).toEqual({
      code: 'idempotency_key_invalid',
      message: 'Idempotency-Key must be 1 to 255 visible ASCII characters.',
    });
    expect(await count()).toBe(before);
  });

  test.each([
    [{ sourceUrls: ['http://a.example/'] }, 'Invalid request body: query: query must be a string'],
    [{ query: '   ', sourceUrls: ['http://a.example/'] }, 'Invalid request body: query: query must not be empty'],
    // No web search provider is configured in this file's stack (webSearch.test.ts has one).
    [{ query: 'q' }, NO_WEB_SEARCH],
    [{ query: 'q', sourceUrls: [] }, NO_WEB_SEARCH],
    [{ query: 'q', sourceUrls: 'http://a.example/' }, 'Invalid request body: sourceUrls: sourceUrls must be an array of URLs'],
    [
      { query: 'q', sourceUrls: ['ftp://a.example/'] },
      'Invalid request body: sourceUrls.0: a source URL must be an absolute http or https URL without credentials',
    ],
    [
      { query: 'q', sourceUrls: ['http://user:pw@a.example/'] },
      'Invalid request body: sourceUrls.0: a source URL must be an absolute http or https URL without credentials',
    ],
    [
      { query: 'q', sourceUrls: Array.from({ length: 21 }, (_, i) => `http://a.example/${i}`) },
      'Invalid request body: sourceUrls: sourceUrls must name at most 20 URLs',
    ],
    [
      { query: 'q', sourceUrls: ['http://a.example/'], limits: { maxPages: 0 } },
      'Invalid request body: limits.maxPages: maxPages must be at least 1',
    ],
    [
      { query: 'q', sourceUrls: ['http://a.example/'], limits: { maxPages: 51 } },
      'Invalid request body: limits.maxPages: maxPages must be at most 50',
    ],
    [
      { query: 'q', sourceUrls: ['http://a.example/'], limits: { maxDomains: 21 } },
      'Invalid request body: limits.maxDomains: maxDomains must be at most 20',
    ],
    [
      { query: 'q', sourceUrls: ['http://a.example/'], limits: { maxBytes: 1023 } },
      'Invalid request body: limits.maxBytes: maxBytes must be at least 1024',
    ],
    [
      { query: 'q', sourceUrls: ['http://a.example/'], limits: { timeoutMs: 60001 } },
      'Invalid request body: limits.timeoutMs: timeoutMs must be at most 60000',
    ],
    [
      { query: 'q', sourceUrls: ['http://a.example/'], limits: { timeoutMs: 1500.5 } },
      'Invalid request body: limits.timeoutMs: timeoutMs must be an integer',
    ],
    [
      { query: 'q', sourceUrls: ['http://a.example/'], limits: { maxDepth: 2 } },
      'Invalid request body: limits: Unrecognized key: "maxDepth"',
    ],
    [{ query: 'q', sourceUrls: ['http://a.example/'], extra: true }, 'Invalid request body: body: Unrecognized key: "extra"'],
  ])('bad research input %j is 400 validation_failed and creates nothing', async (body, message) => {
    const before = await count();
    const res = await createResearch(stack.app, token, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ ok: false, error: { code: 'validation_failed', message } });
    expect(await count()).toBe(before);
  });

  test('a viewer key and a personal key are 403 authorization_failed; no bearer is 401', async () => {
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
    const before = await count();
    for (const t of [viewer.token, personal.token]) {
      const res = await createResearch(stack.app, t, valid());
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('authorization_failed');
    }
    const list = await stack.as(personal.token).get<ResearchRunList>('/api/v1/research');
    expect(list.status).toBe(403);
    const anon = await stack.as().get<ResearchRunList>('/api/v1/research');
    expect(anon.status).toBe(401);
    expect(anon.body.error.code).toBe('authentication_required');
    expect(await count()).toBe(before);
  });
});

describe('list and get', () => {
  let ws: WorkspaceFixture;
  const ids: string[] = [];

  beforeAll(async () => {
    // Rows straight in the table (no executions), 30 of them with distinct times.
    ws = await createWorkspace(stack.app, 'Lists');
    for (let i = 0; i < 30; i++) {
      const id = `research_${String(i).padStart(32, '0')}`;
      const status = i % 3 === 0 ? 'failed' : 'succeeded';
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
      await sql(
        `insert into research_runs (id, workspace_id, created_by_id, query, source_urls, limits, status, request_fingerprint, created_at, updated_at) values (?, ?, ?, ?, '[]', '{}', ?, 'x', ?, ?)`,
        [id, ws.workspaceId, ws.ownerId, `q${i}`, status, at, at],
      );
      ids.unshift(id);
    }
  });

  test('newest first, default limit 25, cursor pages to the end', async () => {
    const first = await stack.as(ws.token).get<ResearchRunList>('/api/v1/research');
    expect(first.status).toBe(200);
    expect(first.body.ok).toBe(true);
    expect(first.body.data.runs.map((r) => r.id)).toEqual(ids.slice(0, 25));
    expect(first.body.data.runs[0]).toMatchObject({ limits: {}, sources: [], sourceUrls: [] });
    const second = await stack.as(ws.token).get<ResearchRunList>(`/api/v1/research?cursor=${first.body.data.nextCursor}`);
    expect(second.body.data.runs.map((r) => r.id)).toEqual(ids.slice(25));
    expect(second.body.data.nextCursor).toBeNull();
  });

  test('status filter', async () => {
    const res = await stack.as(ws.token).get<ResearchRunList>('/api/v1/research?status=failed&limit=100');
    expect(res.body.data.runs).toHaveLength(10);
    expect(res.body.data.runs.every((r) => r.status === 'failed')).toBe(true);
    const none = await stack.as(ws.token).get<ResearchRunList>('/api/v1/research?status=canceled');
    expect(none.body.data).toEqual({ runs: [], nextCursor: null });
  });

  test('limit 1 to 100', async () => {
    const one = await stack.as(ws.token).get<ResearchRunList>('/api/v1/research?limit=1');
    expect(one.body.data.runs).toHaveLength(1);
    expect(one.body.data.nextCursor).toEqual(expect.any(String));
    for (const bad of ['0', '101', 'x']) {
      const res = await stack.as(ws.token).get<ResearchRunList>(`/api/v1/research?limit=${bad}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('request_malformed');
    }
  });

  test('an unknown status and an invalid cursor are 400 validation_failed', async () => {
    const status = await stack.as(ws.token).get<ResearchRunList>('/api/v1/research?status=done');
    expect(status.status).toBe(400);
    expect(status.body).toEqual({
      ok: false,
      error: { code: 'validation_failed', message: 'status must be one of queued, running, succeeded, failed, canceled.' },
    });
    const cursor = await stack.as(ws.token).get<ResearchRunList>('/api/v1/research?cursor=not-a-cursor');
    expect(cursor.status).toBe(400);
    expect(cursor.body).toEqual({ ok: false, error: { code: 'validation_failed', message: 'Invalid cursor.' } });
  });

  test('GET one; unknown is 404', async () => {
    const res = await stack.as(ws.token).get<ResearchRunAnswer>(`/api/v1/research/${ids[0]}`);
    expect(res.status).toBe(200);
    expect(res.body.data.run).toMatchObject({ id: ids[0], query: 'q29', workspaceId: ws.workspaceId, createdById: ws.ownerId });
    const missing = await stack.as(ws.token).get<ResearchRunAnswer>('/api/v1/research/research_missing');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('resource_not_found');
  });

  test('there are no routes for web search, read or crawl: the API documents exactly four research operations', async () => {
    const doc = await stack.as().get<{ paths: Record<string, Record<string, unknown>> }>('/api/v1/openapi.json');
    const paths = Object.keys(doc.body.paths).filter((p) => p.startsWith('/api/v1/research'));
    expect(paths.sort()).toEqual(['/api/v1/research', '/api/v1/research/{id}', '/api/v1/research/{id}/cancel']);
    expect(Object.keys(doc.body.paths['/api/v1/research']).sort()).toEqual(['get', 'post']);
    for (const path of ['/api/v1/research/search', '/api/v1/research/read', '/api/v1/research/crawl']) {
      const res = await stack.as(token).post<Enveloped>(path, {}, { headers: { 'idempotency-key': key() } });
      expect(res.status).toBe(405);
    }
  });
});
