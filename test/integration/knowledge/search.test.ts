/**
 * POST /knowledge-bases/search over real HTTP, PostgreSQL and Temporal with a loopback
 * OpenAI-compatible embeddings server: keyword, vector and hybrid (RRF) provenance, empty
 * queries, workspace scoping, trashed bases, keyword-only deployments and a failing endpoint.
 */
import { startFakeEmbeddings, type FakeEmbeddingsServer } from '../../fakes/embeddings';
import { startTestApp } from '../../support/harness';
import { createWorkspace, http, useTestStack, type TestApp, type WorkspaceFixture } from '../../kit';
import {
  createBase,
  knowledgeConfig,
  search,
  uploadDocument,
  waitForDocument,
  type KnowledgeBase,
  type KnowledgeDocument,
  type SearchAnswer,
} from './support';

let embeddings: FakeEmbeddingsServer;
let keywordOnly: TestApp;
let other: WorkspaceFixture;
let token: string;
let kbA: KnowledgeBase;
let kbB: KnowledgeBase;
const docs: Record<string, KnowledgeDocument> = {};

const small = { chunking: { minChunkSizeChars: 10, maxChunkSizeTokens: 64, overlapTokens: 0 } };

beforeAll(async () => {
  embeddings = await startFakeEmbeddings();
});
const stack = useTestStack(async () => ({
  config: await knowledgeConfig({ embeddingsUrl: embeddings.url, embeddingsKey: embeddings.apiKey }),
}));
beforeAll(async () => {
  keywordOnly = await startTestApp(await knowledgeConfig());
  token = stack.ws.token;
  other = await createWorkspace(stack.app, 'Other');
  kbA = await createBase(stack.app, token, { name: 'Fleet', ...small });
  kbB = await createBase(stack.app, token, { name: 'Finance', ...small });
  const files: Array<[string, KnowledgeBase, string]> = [
    ['brakes', kbA, 'The automobile needs new brake pads every 40000 kilometres.'],
    ['tyres', kbA, 'Winter tyres must be fitted to the vehicle before December.'],
    ['invoices', kbB, 'Every invoice is paid within thirty days of receipt.'],
    ['refunds', kbB, 'A refund is issued to the original payment card.'],
  ];
  for (const [name, kb, content] of files) {
    const doc = await uploadDocument(stack.app, token, kb.id, { name: `${name}.txt`, type: 'text/plain', content });
    docs[name] = await waitForDocument(stack.app, token, kb.id, doc.id);
  }
  const foreignKb = await createBase(stack.app, other.token, small);
  const foreign = await uploadDocument(stack.app, other.token, foreignKb.id, {
    name: 'foreign.txt',
    type: 'text/plain',
    content: 'The automobile brake pads of another workspace.',
  });
  await waitForDocument(stack.app, other.token, foreignKb.id, foreign.id);
}, 120_000);
stack.beforeClose(async () => {
  await keywordOnly?.close();
});
afterAll(async () => {
  await embeddings?.close();
});

const docIds = (res: { body: SearchAnswer }) => res.body.results.map((r) => r.document.id);

test('documents are embedded through the embeddings endpoint with the configured model', () => {
  expect(Object.values(docs).every((d) => d.indexingStatus === 'ready')).toBe(true);
  expect(embeddings.requests.length).toBeGreaterThan(0);
  expect(new Set(embeddings.requests.map((r) => r.model))).toEqual(new Set(['fake-embed-1']));
});

test('an empty or blank query answers { results: [] }', async () => {
  for (const query of ['', '   ']) {
    const res = await search(stack.app, token, { query, limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ results: [] });
  }
});

test('a query matching words and meaning is hybrid; results carry chunk, document, score and provenance', async () => {
  const res = await search(stack.app, token, { knowledgeBaseId: kbA.id, query: 'automobile brake pads', limit: 5 });
  expect(res.status).toBe(200);
  expect(res.body.retrieval).toEqual({ mode: 'hybrid', vector: 'used', fusion: { method: 'rrf', k: 60, candidates: 50 } });
  const top = res.body.results[0];
  expect(top).toEqual({
    chunk: {
      id: expect.stringMatching(/^chk_/),
      ordinal: 0,
      heading: null,
      content: 'The automobile needs new brake pads every 40000 kilometres.',
      tokenCount: expect.any(Number),
    },
    document: {
      id: docs.brakes.id,
      knowledgeBaseId: kbA.id,
      name: 'brakes.txt',
      mimeType: 'text/plain',
      source: 'upload',
      connectorId: null,
      externalUrl: null,
    },
    score: expect.any(Number),
    provenance: 'hybrid',
    ranks: { keyword: 1, vector: 1 },
  });
  expect(top.score).toBeCloseTo(2 / 61, 10);
});

test('a paraphrase without shared words is found by the vector list only', async () => {
  // "car" and "vehicle" are synonyms of "automobile" for the embedding model; the text says neither "car" nor "fix".
  const res = await search(stack.app, token, { knowledgeBaseId: kbA.id, query: 'car', limit: 5 });
  expect(res.body.results.length).toBeGreaterThan(0);
  expect(res.body.results.map((r) => r.provenance)).toEqual(res.body.results.map(() => 'vector'));
  expect(docIds(res)).toEqual(expect.arrayContaining([docs.brakes.id, docs.tyres.id]));
});

test('chunks without an embedding of the current model are still found by keyword', async () => {
  const em = stack.app.orm.em.fork();
  await em.getConnection().execute(`update knowledge_chunks set embedding_model = 'older-model' where document_id = ?`, [docs.refunds.id]);
  try {
    const res = await search(stack.app, token, { query: 'refund card', limit: 5 });
    const hit = res.body.results.find((r) => r.document.id === docs.refunds.id);
    expect(hit).toMatchObject({ provenance: 'keyword', ranks: { keyword: 1, vector: null } });
  } finally {
    await em
      .getConnection()
      .execute(`update knowledge_chunks set embedding_model = 'fake-embed-1' where document_id = ?`, [docs.refunds.id]);
  }
});

test('omitting knowledgeBaseId searches every base of the workspace and never another workspace', async () => {
  const all = await search(stack.app, token, { query: 'automobile invoice', limit: 10 });
  expect(docIds(all)).toEqual(expect.arrayContaining([docs.brakes.id, docs.invoices.id]));
  const foreignDocs = all.body.results.filter((r) => r.document.name === 'foreign.txt');
  expect(foreignDocs).toEqual([]);
  const theirs = await search(stack.app, other.token, { query: 'automobile brake pads', limit: 10 });
  expect(theirs.body.results.map((r) => r.document.name)).toEqual(['foreign.txt']);
  const cross = await search(stack.app, other.token, { knowledgeBaseId: kbA.id, query: 'brake', limit: 5 });
  expect(cross.status).toBe(404);
});

test('limit is honoured and validated', async () => {
  const one = await search(stack.app, token, { query: 'automobile vehicle invoice refund', limit: 1 });
  expect(one.body.results.length).toBe(1);
  for (const limit of [0, 51, 2.5]) expect((await search(stack.app, token, { query: 'x', limit })).status).toBe(400);
  expect((await search(stack.app, token, { limit: 5 })).status).toBe(400);
  expect((await search(stack.app, token, { query: 'x', extra: true })).status).toBe(400);
});

test('a trashed base is left out of search until restored', async () => {
  await http(stack.app, 'PATCH', `/api/v1/knowledge-bases/${kbB.id}`, { token, body: { trashed: true } });
  try {
    const all = await search(stack.app, token, { query: 'invoice refund automobile', limit: 10 });
    expect(all.body.results.filter((r) => r.document.knowledgeBaseId === kbB.id)).toEqual([]);
    expect(all.body.results.length).toBeGreaterThan(0);
    const direct = await search(stack.app, token, { knowledgeBaseId: kbB.id, query: 'invoice', limit: 10 });
    expect(direct.body.results).toEqual([]);
  } finally {
    await http(stack.app, 'PATCH', `/api/v1/knowledge-bases/${kbB.id}`, { token, body: { trashed: false } });
  }
  expect(docIds(await search(stack.app, token, { knowledgeBaseId: kbB.id, query: 'invoice', limit: 10 }))).toContain(docs.invoices.id);
});

test('without an embeddings endpoint search is keyword only and says so', async () => {
  const res = await search(keywordOnly, token, { query: 'brake pads', limit: 5 });
  expect(res.status).toBe(200);
  expect(res.body.retrieval).toEqual({
    mode: 'keyword',
    vector: 'not_configured',
    fusion: null,
    note: expect.stringContaining('EMBEDDINGS_BASE_URL'),
  });
  expect(res.body.results[0]).toMatchObject({
    document: { id: docs.brakes.id },
    provenance: 'keyword',
    ranks: { keyword: 1, vector: null },
  });
  // Paraphrases need vectors: nothing shares a word with "car".
  expect((await search(keywordOnly, token, { query: 'car', limit: 5 })).body.results).toEqual([]);
});

test('web-search syntax is honoured: quoted phrases and exclusions', async () => {
  const phrase = await search(keywordOnly, token, { query: '"brake pads"', limit: 5 });
  expect(docIds(phrase)).toEqual([docs.brakes.id]);
  const excluded = await search(keywordOnly, token, { query: 'automobile -brake', limit: 5 });
  expect(docIds(excluded)).not.toContain(docs.brakes.id);
  // A plain query matches any of its words, with documents containing all of them first.
  const eitherWord = await search(keywordOnly, token, { query: 'winter brake', limit: 5 });
  expect(docIds(eitherWord)).toEqual(expect.arrayContaining([docs.brakes.id, docs.tyres.id]));
});

test('when the endpoint fails at query time the search falls back to keyword and says why', async () => {
  embeddings.failNext(20, 500);
  try {
    const res = await search(stack.app, token, { query: 'brake pads', limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body.retrieval).toMatchObject({ mode: 'keyword', vector: 'unavailable', note: expect.stringContaining('keyword only') });
    expect(res.body.results[0]).toMatchObject({ document: { id: docs.brakes.id }, provenance: 'keyword' });
  } finally {
    embeddings.failNext(0, 500);
  }
});

test('429 and 5xx answers of the embeddings endpoint are retried while indexing', async () => {
  const before = embeddings.requests.length;
  embeddings.failNext(2, 429);
  const doc = await uploadDocument(stack.app, token, kbA.id, {
    name: 'retry.txt',
    type: 'text/plain',
    content: 'Retried embeddings still index the document.',
  });
  expect((await waitForDocument(stack.app, token, kbA.id, doc.id)).indexingStatus).toBe('ready');
  expect(embeddings.requests.length).toBeGreaterThan(before);
});
