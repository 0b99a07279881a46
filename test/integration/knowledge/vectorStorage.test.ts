/**
 * The two places embeddings live (issue 13), over real HTTP, PostgreSQL and Temporal with the
 * loopback embeddings server:
 *
 * - pgvector (the test database, migrated by global setup on a server that has the extension):
 *   chunks store `embedding_vec`, the HNSW index of the dimension exists and can serve the search
 *   query, and search answers from the `<=>` operator (it keeps its answers when the `real[]`
 *   column is emptied). Skipped, with the reason in its name, on a server without pgvector;
 * - real[] (a second database made here and migrated by a role that may not create extensions,
 *   as on a managed server): no `embedding_vec`, exact cosine, and the same answers.
 *
 * Both halves index the same corpus and run the same queries; every vector rank is checked
 * against exact cosine computed here from the fake model's vectors. The halves run one after the
 * other (one stack at a time: both workers would poll the same task queue).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateUp, openOrm } from '../../../db/orm';
import { fakeEmbedding, startFakeEmbeddings, type FakeEmbeddingsServer } from '../../fakes/embeddings';
import { useTestStack, type WorkspaceTarget } from '../../kit';
import { TEST_ENV, testEnv } from '../../support/env';
import {
  ensureVectorIndex,
  hnswSearchSettings,
  vectorIndexName,
  vectorIndexSql,
  vectorSearchQuery,
} from '../../../services/knowledge/vectors';
import { createBase, knowledgeConfig, search, uploadDocument, waitForDocument } from './support';

const PGVECTOR = process.env[TEST_ENV.pgvector] || 'global setup did not report it';
const withPgvector = PGVECTOR === 'available';
if (!withPgvector) console.warn(`vectorStorage.test.ts: the pgvector half is skipped: ${PGVECTOR}. The real[] half runs.`);

const DIMS = 256;
const small = { chunking: { minChunkSizeChars: 10, maxChunkSizeTokens: 64, overlapTokens: 0 } };
const CORPUS: Array<[string, string]> = [
  ['brakes', 'The automobile needs new brake pads every 40000 kilometres.'],
  ['tyres', 'Winter tyres must be fitted to the vehicle before December.'],
  ['repairs', 'Mechanics repair engine faults in the workshop on Mondays.'],
  ['invoices', 'Every invoice is paid within thirty days of receipt.'],
  ['refunds', 'A refund is issued to the original payment card of the customer.'],
  ['salaries', 'Staff salary is transferred on the last working day of the month.'],
  ['backups', 'Each server takes a nightly snapshot that is archived for a year.'],
  ['passwords', 'Reset your passphrase from the sign-in page if you forget it.'],
  ['holidays', 'Employees book vacation days in the team calendar.'],
  ['shipping', 'Rapid delivery is free for orders above fifty euros.'],
  ['contracts', 'Every supplier agreement is reviewed by the legal team.'],
  ['meetings', 'The weekly conference starts at nine in the large room.'],
];
const QUERIES = [
  'car brake repair',
  'refund to the client',
  'host backup',
  'forgot my password',
  'quick shipment',
  'worker pay',
  'agenda for the meeting',
];

type Row = { doc: string; ordinal: number; provenance: string; ranks: { keyword: number | null; vector: number | null }; score: number };

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);
/** Exact cosine ranking of the corpus for a query, from the fake model's own vectors. */
function expectedVectorRanks(query: string): string[] {
  const q = fakeEmbedding(query, DIMS);
  return CORPUS.map(([name, text]) => ({ name, s: cosine(fakeEmbedding(text, DIMS), q) }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s)
    .map((x) => x.name);
}

let embeddings: FakeEmbeddingsServer;
beforeAll(async () => {
  embeddings = await startFakeEmbeddings({ dims: DIMS });
});
afterAll(async () => {
  await embeddings?.close();
});

/** Indexes the corpus in a fresh base of the stack's workspace and answers every query over HTTP. */
async function indexAndSearch(stack: WorkspaceTarget): Promise<{ kbId: string; answers: Map<string, Row[]> }> {
  const token = stack.ws.token;
  const kb = await createBase(stack.app, token, { name: 'Handbook', ...small });
  const names = new Map<string, string>();
  for (const [name, content] of CORPUS) {
    const doc = await uploadDocument(stack.app, token, kb.id, { name: `${name}.txt`, type: 'text/plain', content });
    const done = await waitForDocument(stack.app, token, kb.id, doc.id);
    expect(done.indexingStatus).toBe('ready');
    names.set(doc.id, name);
  }
  return { kbId: kb.id, answers: await answer(stack, kb.id, names) };
}

async function answer(stack: WorkspaceTarget, kbId: string, names?: Map<string, string>): Promise<Map<string, Row[]>> {
  const answers = new Map<string, Row[]>();
  for (const query of QUERIES) {
    const res = await search(stack.app, stack.ws.token, { knowledgeBaseId: kbId, query, limit: 8 });
    expect(res.status).toBe(200);
    expect(res.body.retrieval).toMatchObject({ mode: 'hybrid', vector: 'used' });
    answers.set(
      query,
      res.body.results.map((r) => ({
        doc: names?.get(r.document.id) ?? r.document.name.replace(/\.txt$/, ''),
        ordinal: r.chunk.ordinal,
        provenance: r.provenance,
        ranks: r.ranks,
        score: r.score,
      })),
    );
  }
  return answers;
}

/** Every vector rank a search reports is the exact cosine rank; some results come from vectors. */
function expectExactVectorRanks(answers: Map<string, Row[]>): void {
  let vectorResults = 0;
  for (const [query, rows] of answers) {
    const expected = expectedVectorRanks(query);
    for (const row of rows.filter((r) => r.ranks.vector !== null)) {
      vectorResults++;
      expect({ query, doc: row.doc, rank: row.ranks.vector }).toEqual({ query, doc: row.doc, rank: expected.indexOf(row.doc) + 1 });
    }
    expect(rows.filter((r) => r.provenance !== 'keyword').length).toBeGreaterThan(0);
  }
  expect(vectorResults).toBeGreaterThanOrEqual(QUERIES.length);
}

let pgvectorAnswers: Map<string, Row[]> | null = null;

(withPgvector ? describe : describe.skip)(`pgvector storage${withPgvector ? '' : ` (skipped: ${PGVECTOR})`}`, () => {
  let kbId: string;
  const stack = useTestStack(async () => ({
    config: await knowledgeConfig({ embeddingsUrl: embeddings.url, embeddingsKey: embeddings.apiKey }),
  }));
  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    stack.app.orm.em.getConnection().execute<T[]>(text, params);

  beforeAll(async () => {
    ({ kbId, answers: pgvectorAnswers } = await indexAndSearch(stack));
  }, 180_000);

  test('indexed chunks store embedding_vec, equal to their real[] embedding', async () => {
    const [row] = await sql(
      `select count(*)::int as n, count(embedding_vec)::int as vec, count(*) filter (where vector_dims(embedding_vec) = ${DIMS} and embedding_vec::real[] = embedding)::int as same
         from knowledge_chunks where knowledge_base_id = ?`,
      [kbId],
    );
    expect(row).toEqual({ n: CORPUS.length, vec: CORPUS.length, same: CORPUS.length });
  });

  test(`the HNSW index for ${DIMS} dimensions exists and serves the search query`, async () => {
    const [index] = await sql(`select indexdef from pg_indexes where tablename = 'knowledge_chunks' and indexname = ?`, [
      vectorIndexName(DIMS),
    ]);
    expect(index.indexdef).toMatch(/USING hnsw \(\(\(embedding_vec\)::vector\(256\)\) vector_cosine_ops\) WHERE \(embedding_dims = 256\)/);
    // With sequential scans priced out, the planner uses the index for the query search runs.
    const q = vectorSearchQuery(true, {
      model: 'fake-embed-1',
      embedding: fakeEmbedding('car brake repair', DIMS),
      scope: { sql: 'c.workspace_id = ?', params: [] },
      workspaceId: stack.ws.workspaceId,
      limit: 50,
    });
    const plan = await stack.app.orm.em.fork().transactional(async (tx) => {
      await tx.execute(`set local enable_seqscan = off`);
      for (const [name, value] of hnswSearchSettings('0.8.0', 50)) await tx.execute(`select set_config(?, ?, true)`, [name, value]);
      return tx.execute<Array<{ 'QUERY PLAN': string }>>(`explain ${q.sql}`, q.params);
    });
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toContain(`Index Scan using ${vectorIndexName(DIMS)}`);
  });

  test('vector ranks are exact cosine ranks', () => {
    expectExactVectorRanks(pgvectorAnswers!);
  });

  test('two workers creating the first HNSW index of a dimension at once: the later one finds it and goes on', async () => {
    const dims = 7;
    const first = new pg.Client({ connectionString: testEnv('databaseUrl') });
    await first.connect();
    try {
      await first.query('begin');
      await first.query(vectorIndexSql(dims));
      // The second `create index if not exists` does not see the uncommitted index and waits on its name.
      const second = ensureVectorIndex(stack.app.orm.em.fork(), dims).then(
        () => 'created',
        (err: Error) => `failed: ${err.message}`,
      );
      for (;;) {
        const { rows } = await first.query(
          `select count(*)::int as n from pg_stat_activity where pid <> pg_backend_pid() and wait_event_type = 'Lock' and query like $1`,
          [`create index if not exists ${vectorIndexName(dims)}%`],
        );
        if (rows[0].n > 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await first.query('commit');
      expect(await second).toBe('created');
    } finally {
      await first.query(`drop index if exists ${vectorIndexName(dims)}`).catch(() => undefined);
      await first.end();
    }
  });

  test('search answers from the <=> operator: emptying the real[] column changes nothing', async () => {
    await sql(`update knowledge_chunks set embedding = null where knowledge_base_id = ?`, [kbId]);
    expect(await answer(stack, kbId)).toEqual(pgvectorAnswers);
  });

  test('HNSW search settings: 50 candidates through the index, where pgvector defaults stop at 40', async () => {
    const [doc] = await sql(`select id, content_version from knowledge_documents where knowledge_base_id = ? order by id limit 1`, [kbId]);
    await sql(
      `insert into knowledge_chunks (id, workspace_id, knowledge_base_id, document_id, content_version, ordinal, heading, content, token_count, char_start, char_end,
                                     embedding, embedding_model, embedding_dims, embedding_vec, created_at)
       select 'chk_synthetic_' || g, ?, ?, ?, ?, 100 + g, null, 'synthetic ' || g, 1, 0, 1, v, 'fake-embed-1', ${DIMS}, v::vector, now()
         from generate_series(1, 60) g,
              lateral (select array_agg(sin(g * 0.37 + j * 1.3)::real order by j) as v from generate_series(1, ${DIMS}) j) x`,
      [stack.ws.workspaceId, kbId, doc.id, doc.content_version],
    );
    const q = vectorSearchQuery(true, {
      model: 'fake-embed-1',
      embedding: fakeEmbedding('car brake repair', DIMS),
      scope: { sql: 'c.workspace_id = ? and c.knowledge_base_id = ?', params: [kbId] },
      workspaceId: stack.ws.workspaceId,
      limit: 50,
    });
    const run = (setup: string[], settings: Array<[string, string]>) =>
      stack.app.orm.em.fork().transactional(async (tx) => {
        for (const statement of setup) await tx.execute(statement);
        for (const [name, value] of settings) await tx.execute(`select set_config(?, ?, true)`, [name, value]);
        return tx.execute<Array<{ id: string; score: number }>>(q.sql, q.params);
      });
    const exact = await run(['set local enable_indexscan = off', 'set local enable_bitmapscan = off'], []);
    const defaults = await run(['set local enable_seqscan = off'], []);
    const tuned = await run(['set local enable_seqscan = off'], hnswSearchSettings('0.8.6', 50));
    expect(exact).toHaveLength(50);
    expect(defaults.length).toBeLessThanOrEqual(40);
    expect(tuned).toHaveLength(50);
    expect(new Set(tuned.map((r) => r.id))).toEqual(new Set(exact.map((r) => r.id)));
    expect(tuned.map((r) => r.score)).toEqual([...tuned.map((r) => r.score)].sort((a, b) => b - a));
  });
});

describe('real[] storage (a database where the migration could not create the extension)', () => {
  let admin: pg.Client;
  let kbId: string;
  let answers: Map<string, Row[]>;
  const suffix = randomBytes(4).toString('hex');
  const role = `svc_novec_${suffix}`;
  const base = new URL(testEnv('databaseUrl'));
  const database = `${base.pathname.slice(1)}_novec_${suffix}`;

  const stack = useTestStack(async () => {
    admin = new pg.Client({ connectionString: base.toString() });
    await admin.connect();
    await admin.query(`create role ${role} login password '${role}'`);
    await admin.query(`create database ${database}`);
    await admin.query(`grant connect, temporary on database ${database} to ${role}`);
    const inDb = new pg.Client({ connectionString: Object.assign(new URL(base), { pathname: `/${database}` }).toString() });
    await inDb.connect();
    await inDb.query(`grant usage, create on schema public to ${role}`);
    await inDb.end();
    const url = Object.assign(new URL(base), { pathname: `/${database}`, username: role, password: role }).toString();
    const orm = await openOrm(url);
    await migrateUp(orm);
    await orm.close();
    return {
      config: { ...(await knowledgeConfig({ embeddingsUrl: embeddings.url, embeddingsKey: embeddings.apiKey })), databaseUrl: url },
    };
  });
  beforeAll(async () => {
    ({ kbId, answers } = await indexAndSearch(stack));
  }, 180_000);
  afterAll(async () => {
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.query(`drop role if exists ${role}`);
    await admin.end();
  });

  test('no vector extension and no embedding_vec column; embeddings are in real[]', async () => {
    const [row] = await stack.app.orm.em.getConnection().execute(
      `select exists (select 1 from pg_extension where extname = 'vector') as extension,
              exists (select 1 from information_schema.columns where table_name = 'knowledge_chunks' and column_name = 'embedding_vec') as column,
              (select count(*)::int from knowledge_chunks where knowledge_base_id = ? and array_length(embedding, 1) = ${DIMS}) as embedded`,
      [kbId],
    );
    expect(row).toEqual({ extension: false, column: false, embedded: CORPUS.length });
  });

  test('vector ranks are exact cosine ranks', () => {
    expectExactVectorRanks(answers);
  });

  test('the same results as the pgvector path for the same corpus and queries', () => {
    if (!pgvectorAnswers) {
      console.warn(`vectorStorage.test.ts: no pgvector answers to compare with (${PGVECTOR}); the exact-cosine check above stands.`);
      return;
    }
    expect(answers).toEqual(pgvectorAnswers);
  });

  test('without real[] embeddings the real[] path finds nothing by vector (the check above can fail)', async () => {
    await stack.app.orm.em.getConnection().execute(`update knowledge_chunks set embedding = null where knowledge_base_id = ?`, [kbId]);
    const after = await answer(stack, kbId);
    expect([...after.values()].flat().every((r) => r.ranks.vector === null)).toBe(true);
  });
});
