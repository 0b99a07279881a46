/**
 * Knowledge benchmarks.
 *
 * `npm run bench -- retrieval`: retrieval quality (recall@5, MRR) of keyword, vector and hybrid
 * search over a generated, labelled corpus (scripts/bench/knowledgeCorpus.ts) uploaded through
 * `POST /api/v1/documents` and indexed by the indexing workflows, with the deterministic loopback
 * embeddings server of the tests (test/fakes/embeddings.ts). Each mode ranks through the same
 * service function the search route uses (`rankChunks`), query embeddings included.
 */
import { performance } from 'node:perf_hooks';
import { startFakeEmbeddings, type FakeEmbeddingsServer } from '../../test/fakes/embeddings';
import { rankChunks, type RetrievalMode } from '../../services/knowledge';
import { benchEnvironment, writeResults, type BenchContext } from './report';
import { startBenchStack, temporalFacts, type BenchStack } from './stack';
import { round, spread, textTable } from './stats';
import { buildCorpus, score } from './knowledgeCorpus';

const CHUNKING = { minChunkSizeChars: 100, maxChunkSizeTokens: 64, overlapTokens: 16 };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function api(stack: BenchStack, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.workspace.apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Points the stack's API and worker at the fake embeddings server (they read the environment). */
function useEmbeddings(server: FakeEmbeddingsServer): void {
  process.env.EMBEDDINGS_BASE_URL = server.url;
  process.env.EMBEDDINGS_API_KEY = server.apiKey;
  process.env.EMBEDDINGS_MODEL = 'fake-embed-1';
}

export async function retrievalScenario(ctx: BenchContext): Promise<void> {
  const { log } = ctx;
  const started = new Date();
  const env = await benchEnvironment();
  const embeddings = await startFakeEmbeddings();
  let stack: BenchStack | null = null;
  try {
    useEmbeddings(embeddings);
    stack = await startBenchStack(log);
    const corpus = buildCorpus();
    const { knowledgeBase } = await api(stack, 'POST', '/api/v1/knowledge-bases', { name: 'Retrieval benchmark', chunking: CHUNKING });
    for (const doc of corpus.documents) {
      const form = new FormData();
      form.append('knowledgeBaseId', knowledgeBase.id);
      form.append('file', new Blob([doc.content], { type: 'text/markdown' }), doc.name);
      const res = await fetch(`${stack.apiUrl}/api/v1/documents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.workspace.apiKey}` },
        body: form,
      });
      if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
    }
    log(`uploaded ${corpus.documents.length} documents; waiting for indexing`);
    const deadline = Date.now() + 300_000;
    for (;;) {
      ctx.throwIfInterrupted();
      const { documents } = await api(stack, 'GET', `/api/v1/knowledge-bases/${knowledgeBase.id}/documents?limit=100`);
      const states = (documents as Array<{ indexingStatus: string }>).map((d) => d.indexingStatus);
      if (states.includes('failed')) throw new Error('a document failed to index');
      if (states.every((s: string) => s === 'ready')) break;
      if (Date.now() > deadline) throw new Error('indexing did not finish within 5 minutes');
      await new Promise((r) => setTimeout(r, 250));
    }
    const em = stack.api.deps.orm.em.fork();
    const [{ n: chunkCount }] = await em
      .getConnection()
      .execute<Array<{ n: string }>>(`select count(*) as n from knowledge_chunks where knowledge_base_id = ?`, [knowledgeBase.id]);
    log(`indexed ${chunkCount} chunks; running ${corpus.queries.length} queries per mode`);

    const contents = new Map<string, string>();
    const contentOf = async (ids: string[]) => {
      const missing = ids.filter((id) => !contents.has(id));
      if (missing.length) {
        const rows = await em
          .getConnection()
          .execute<Array<{ id: string; content: string }>>(
            `select id, content from knowledge_chunks where id in (select jsonb_array_elements_text(?::jsonb))`,
            [JSON.stringify(missing)],
          );
        for (const r of rows) contents.set(r.id, r.content);
      }
      return ids.map((id) => contents.get(id) ?? '');
    };

    const modes: RetrievalMode[] = ['keyword', 'vector', 'hybrid'];
    const results: Record<string, unknown> = {};
    const rows: string[][] = [];
    const styleRows: string[][] = [];
    for (const mode of modes) {
      const relevance: boolean[][] = [];
      const latencies: number[] = [];
      const byStyle = new Map<string, boolean[][]>();
      for (const q of corpus.queries) {
        ctx.throwIfInterrupted();
        const t0 = performance.now();
        const { ranked } = await rankChunks(
          em,
          stack.api.deps.services.knowledge.queryEmbedder,
          stack.workspace.id,
          { knowledgeBaseId: knowledgeBase.id, query: q.query, limit: 10 },
          mode,
        );
        latencies.push(performance.now() - t0);
        const rel = (await contentOf(ranked.map((r) => r.id))).map((c) => c.includes(q.code));
        relevance.push(rel);
        byStyle.set(q.style, [...(byStyle.get(q.style) ?? []), rel]);
      }
      const overall = score(relevance, 5);
      const styles = Object.fromEntries([...byStyle].map(([style, rels]) => [style, score(rels, 5)]));
      const latency = spread(latencies);
      results[mode] = { ...overall, byStyle: styles, latencyMs: latency };
      rows.push([mode, round(overall.recallAtK, 3).toFixed(3), round(overall.mrr, 3).toFixed(3), `${round(latency.median, 1)} ms`]);
      styleRows.push([
        mode,
        ...['lexical', 'paraphrase', 'mixed', 'identifier'].map(
          (s) => `${(styles[s]?.recallAtK ?? 0).toFixed(2)} / ${(styles[s]?.mrr ?? 0).toFixed(2)}`,
        ),
      ]);
    }
    const file = await writeResults('retrieval', started, {
      scenario: 'retrieval',
      startedAt: started.toISOString(),
      environment: env,
      temporal: temporalFacts(stack),
      corpus: {
        documents: corpus.documents.length,
        chunks: Number(chunkCount),
        queries: corpus.queries.length,
        chunking: CHUNKING,
        embeddingDims: 256,
      },
      results,
    });
    const lines = [
      `retrieval: ${corpus.documents.length} documents, ${chunkCount} chunks, ${corpus.queries.length} labelled queries`,
      ...textTable(['mode', 'recall@5', 'MRR', 'median latency'], rows),
      '',
      'by query style (recall@5 / MRR):',
      ...textTable(['mode', 'lexical', 'paraphrase', 'mixed', 'identifier'], styleRows),
      `results: ${file}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await stack?.stop();
    await embeddings.close();
  }
}

/**
 * `npm run bench -- sync`: items per second of knowledge sync runs against the loopback provider
 * servers of the tests: a 5,000-message chat channel (Slack conversations.history, 25 pages of
 * 200) and a 2,000-file repository (GitHub recursive tree and blobs, 1 KiB files), each synced
 * in one run with maxItems 5000 (`BENCH_RUNS` repetitions, fresh data each). The time is the
 * whole `POST /runs` (queue, Temporal start, lease claim, fetch, one-transaction apply);
 * indexing of the synced documents follows in its own workflow and is timed apart (no
 * embeddings endpoint: chunking only).
 */
export async function syncScenario(ctx: BenchContext): Promise<void> {
  const { log } = ctx;
  const started = new Date();
  const env = await benchEnvironment();
  const reps = Math.max(1, Math.floor(envNumberOr('BENCH_RUNS', 3)));
  const { startChatFake } = await import('../../test/fakes/chat');
  const { startRepoFake } = await import('../../test/fakes/repo');
  const { createCredential } = await import('../../test/integration/knowledge/support');
  const chat = await startChatFake();
  const repo = await startRepoFake();
  let stack: BenchStack | null = null;
  try {
    delete process.env.EMBEDDINGS_BASE_URL;
    stack = await startBenchStack(log);
    const s = stack;
    const orm = s.api.deps.orm;
    const chatCred = await createCredential({ url: s.apiUrl, orm }, s.workspace.apiKey, s.workspace.id, 'chat', {
      token: 'xoxb-fake-token',
      baseUrl: chat.url,
    });
    const repoCred = await createCredential({ url: s.apiUrl, orm }, s.workspace.apiKey, s.workspace.id, 'repo', {
      token: 'ghp_fake_token',
      baseUrl: repo.url,
    });
    const { knowledgeBase } = await api(s, 'POST', '/api/v1/knowledge-bases', { name: 'Sync benchmark' });
    const options = { maxPages: 50, maxItems: 5000, maxBytes: 52428800, timeoutMs: 120000 };
    const measure = async (providerId: 'chat' | 'repo', rep: number, items: number) => {
      const name = `${providerId}-${rep}`;
      let config: Record<string, unknown>;
      if (providerId === 'chat') {
        chat.post(
          `CBENCH${rep}`,
          Array.from(
            { length: items },
            (_, i) => `Message ${i} of the benchmark channel, about deploys, incidents and reviews number ${i % 97}.`,
          ),
        );
        config = { credentialId: chatCred, channelIds: [`CBENCH${rep}`] };
      } else {
        repo.setFiles(
          `bench/repo${rep}`,
          Object.fromEntries(
            Array.from({ length: items }, (_, i) => [
              `docs/section-${Math.floor(i / 100)}/file-${i}.md`,
              `# File ${i}\n\n${'Lorem ipsum dolor sit amet. '.repeat(36)}`,
            ]),
          ),
        );
        config = { credentialId: repoCred, repositories: [`bench/repo${rep}`] };
      }
      const res = await fetch(`${s.apiUrl}/api/v1/knowledge-connectors`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${s.workspace.apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': `bench-${name}-${started.getTime()}`,
        },
        body: JSON.stringify({ knowledgeBaseId: knowledgeBase.id, providerId, name, config }),
      });
      const connectorId = ((await res.json()) as { data: { connector: { id: string } } }).data.connector.id;
      const t0 = performance.now();
      const run = await fetch(`${s.apiUrl}/api/v1/knowledge-connectors/${connectorId}/runs`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${s.workspace.apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': `bench-run-${name}`,
        },
        body: JSON.stringify({ options }),
      });
      const seconds = (performance.now() - t0) / 1000;
      const body = (await run.json()) as { ok: boolean; data?: { run: { id: string; upsertedCount: number } }; error?: unknown };
      if (run.status !== 201 || !body.data) throw new Error(`sync run failed: ${run.status} ${JSON.stringify(body.error)}`);
      const upserted = body.data.run.upsertedCount;
      const runId = body.data.run.id;
      const deadline = Date.now() + 600_000;
      for (;;) {
        const [{ n }] = await orm.em
          .fork()
          .getConnection()
          .execute<Array<{ n: string }>>(
            `select count(*) as n from knowledge_documents where last_sync_run_id = ? and indexing_status <> 'ready'`,
            [runId],
          );
        if (Number(n) === 0) break;
        if (Date.now() > deadline) throw new Error('indexing did not finish within 10 minutes');
        await new Promise((r) => setTimeout(r, 200));
      }
      const indexedSeconds = (performance.now() - t0) / 1000;
      log(
        `${name}: ${upserted} items in ${seconds.toFixed(2)} s (${(upserted / seconds).toFixed(0)} items/s); indexed after ${indexedSeconds.toFixed(1)} s`,
      );
      return { upserted, seconds, itemsPerSecond: upserted / seconds, indexedAfterSeconds: indexedSeconds };
    };
    const results: Record<string, Array<Awaited<ReturnType<typeof measure>>>> = { chat: [], repo: [] };
    for (let rep = 0; rep < reps; rep++) {
      ctx.throwIfInterrupted();
      results.chat.push(await measure('chat', rep, 5000));
      results.repo.push(await measure('repo', rep, 2000));
    }
    const rows = (['chat', 'repo'] as const).map((p) => {
      const rate = spread(results[p].map((r) => r.itemsPerSecond));
      const secs = spread(results[p].map((r) => r.seconds));
      const indexed = spread(results[p].map((r) => r.indexedAfterSeconds));
      return [
        p === 'chat' ? 'chat, 5,000 messages' : 'repo, 2,000 files',
        `${round(secs.median, 2)} s`,
        `${round(rate.median, 0)} (${round(rate.min, 0)}–${round(rate.max, 0)})`,
        `${round(indexed.median, 1)} s`,
      ];
    });
    const file = await writeResults('sync', started, {
      scenario: 'sync',
      startedAt: started.toISOString(),
      environment: env,
      temporal: temporalFacts(s),
      options,
      repetitions: reps,
      results,
    });
    process.stdout.write(
      `${['sync runs (median of ' + reps + ')', ...textTable(['run', 'POST /runs', 'items/s (min–max)', 'indexed after'], rows), `results: ${file}`].join('\n')}\n`,
    );
  } finally {
    await stack?.stop();
    await chat.close();
    await repo.close();
  }
}

function envNumberOr(name: string, fallback: number): number {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}
