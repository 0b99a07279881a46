/**
 * A worker process SIGKILLed in the middle of indexing (its embeddings request in flight) is
 * replaced; the document's indexing resumes at the embedding step (the chunks written before
 * the crash are kept, not rewritten) and ends ready with every chunk embedded.
 */
import type { ChildProcess } from 'node:child_process';
import { startFakeEmbeddings, type FakeEmbeddingsServer } from '../../fakes/embeddings';
import { useTestStack } from '../../kit';
import { createBase, getDocument, killWorker, knowledgeConfig, spawnWorker, uploadDocument, waitForDocument } from './support';

let embeddings: FakeEmbeddingsServer;
let workerEnv: Record<string, string>;

beforeAll(async () => {
  embeddings = await startFakeEmbeddings();
});
// The worker is a separate process the test kills: the stack runs none of its own.
const stack = useTestStack(async () => {
  const config = await knowledgeConfig({ embeddingsUrl: embeddings.url, embeddingsKey: embeddings.apiKey });
  workerEnv = {
    BLOB_DIR: config.blobs!.localDir,
    EMBEDDINGS_BASE_URL: embeddings.url,
    EMBEDDINGS_API_KEY: embeddings.apiKey,
    EMBEDDINGS_MODEL: 'fake-embed-1',
  };
  return { worker: false, config };
});
afterAll(async () => {
  await embeddings?.close();
});

async function chunkRows(documentId: string): Promise<Array<{ id: string; embedded: boolean }>> {
  return stack.app.orm.em
    .fork()
    .getConnection()
    .execute(`select id, embedding is not null as embedded from knowledge_chunks where document_id = ? order by ordinal`, [documentId]);
}

test('indexing resumes on another worker after a kill -9 during embedding', async () => {
  let worker: ChildProcess = await spawnWorker(workerEnv);
  try {
    const gate = embeddings.hold();
    const kb = await createBase(stack.app, stack.ws.token, {
      chunking: { minChunkSizeChars: 20, maxChunkSizeTokens: 40, overlapTokens: 0 },
    });
    const text = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} covers the repair of engine part ${i}.`).join('\n\n');
    const doc = await uploadDocument(stack.app, stack.ws.token, kb.id, { name: 'manual.txt', type: 'text/plain', content: text });
    await gate.held;

    const during = (await getDocument(stack.app, stack.ws.token, kb.id, doc.id)).body.document;
    expect(during.indexingStatus).toBe('processing');
    const before = await chunkRows(doc.id);
    expect(before.length).toBeGreaterThan(3);
    expect(before.every((c) => !c.embedded)).toBe(true);

    await killWorker(worker);
    gate.release();
    worker = await spawnWorker(workerEnv);

    const ready = await waitForDocument(stack.app, stack.ws.token, kb.id, doc.id, undefined, 90_000);
    expect(ready.indexingStatus).toBe('ready');
    const after = await chunkRows(doc.id);
    // Same chunk rows: the new worker resumed at embedding instead of chunking again.
    expect(after.map((c) => c.id)).toEqual(before.map((c) => c.id));
    expect(after.every((c) => c.embedded)).toBe(true);
  } finally {
    await killWorker(worker);
  }
}, 150_000);
