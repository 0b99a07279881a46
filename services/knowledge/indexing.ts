/**
 * The steps of indexing, run by the indexing workflows' activities (temporal/workflows/knowledge.ts).
 * Each step is idempotent and keyed by the document's content version, so an activity retried
 * after a crash picks up where the last one stopped and never mixes two versions:
 *
 * - `prepareDocuments`: marks documents processing, extracts their text and writes their chunks
 *   (embeddings empty) in one transaction; chunks already written for the version are kept.
 * - `embedPendingChunks`: embeds chunks that have no embedding of the configured model yet, a
 *   bounded number per call, so a long document makes progress call by call.
 * - `finishDocuments` / `failDocuments`: ready or failed, only for the version indexed.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { KnowledgeBaseSchema, KnowledgeDocumentSchema, type KnowledgeDocument } from '../../db/entities';
import type { BlobStore } from '../kernel/blobs';
import { newId } from '../kernel/ids';
import { storableString, wellFormedParams } from '../kernel/storableText';
import type { EmbeddingsClient } from '../models/embeddings';
import { chunkingOf } from './bases';
import { chunkText, type TextChunk } from './chunking';
import { documentKindOf, extractText, ExtractionError } from './extraction';
import { embeddingUpdateSql, ensureVectorIndex, hasPgvector } from './vectors';

export interface DocumentRef {
  id: string;
  contentVersion: number;
}

/** Chunks embedded per embeddings request. */
export const EMBED_BATCH = 64;

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** The document's text: the upload's bytes extracted, or the text a connector stored. */
export async function documentText(
  doc: KnowledgeDocument & { contentText?: string | null },
  blobs: BlobStore | undefined,
): Promise<string> {
  if (doc.source === 'connector' || !doc.blobKey) return doc.contentText ?? '';
  if (!blobs) throw new Error('This worker has no blob store configured.');
  const kind = documentKindOf(doc.mimeType, String(doc.metadata?.fileName ?? doc.name));
  if (!kind) throw new ExtractionError(`Unsupported document type ${doc.mimeType}.`);
  return extractText(await readAll(await blobs.read(doc.blobKey)), kind);
}

export interface PrepareResult {
  /** Documents whose chunks are written and that wait for embeddings (or to be finished). */
  prepared: DocumentRef[];
  /** Documents that failed (unreadable content); already marked failed. */
  failed: Array<DocumentRef & { error: string }>;
}

export async function prepareDocuments(
  em: EntityManager,
  blobs: BlobStore | undefined,
  workspaceId: string,
  refs: DocumentRef[],
  heartbeat: () => void = () => undefined,
): Promise<PrepareResult> {
  const result: PrepareResult = { prepared: [], failed: [] };
  if (refs.length === 0) return result;
  const fork = em.fork();
  const conn = fork;
  const wanted = new Map(refs.map((r) => [r.id, r.contentVersion]));
  const docs = (await fork.find(KnowledgeDocumentSchema, { workspaceId, id: { $in: [...wanted.keys()] } }, { populate: ['contentText'] }))
    // Deleted, or a newer version replaced it (its own pass indexes that one); done ones stay done.
    .filter((d) => wanted.get(d.id) === d.contentVersion && (d.indexingStatus === 'pending' || d.indexingStatus === 'processing'));
  if (docs.length === 0) return result;
  const pairs = JSON.stringify(docs.map((d) => ({ id: d.id, v: d.contentVersion })));
  await conn.execute(
    `update knowledge_documents d set indexing_status = 'processing', updated_at = ?
       from jsonb_to_recordset(?::jsonb) as x(id text, v integer)
      where d.id = x.id and d.content_version = x.v and d.indexing_status = 'pending'`,
    [new Date(), pairs],
  );
  // Chunks already written for the version (an earlier attempt crashed after writing them) are kept.
  const written = new Map(
    (
      await conn.execute<Array<{ document_id: string; n: string }>>(
        `select c.document_id, count(*) as n from knowledge_chunks c join jsonb_to_recordset(?::jsonb) as x(id text, v integer) on c.document_id = x.id and c.content_version = x.v group by c.document_id`,
        [pairs],
      )
    ).map((r) => [r.document_id, Number(r.n)]),
  );
  const bases = new Map(
    (await fork.find(KnowledgeBaseSchema, { id: { $in: [...new Set(docs.map((d) => d.knowledgeBaseId))] } })).map((kb) => [kb.id, kb]),
  );
  const toWrite: Array<{ doc: KnowledgeDocument; chunks: TextChunk[] }> = [];
  for (const doc of docs) {
    heartbeat();
    const ref = { id: doc.id, contentVersion: doc.contentVersion };
    if (doc.chunkCount > 0 && written.get(doc.id) === doc.chunkCount) {
      result.prepared.push(ref);
      continue;
    }
    const kb = bases.get(doc.knowledgeBaseId);
    if (!kb) continue;
    try {
      toWrite.push({ doc, chunks: chunkText(await documentText(doc, blobs), chunkingOf(kb)) });
      result.prepared.push(ref);
    } catch (err) {
      if (!(err instanceof ExtractionError)) throw err;
      await failDocuments(fork, workspaceId, [ref], err.message);
      result.failed.push({ ...ref, error: err.message });
    }
  }
  if (toWrite.length > 0) await writeChunks(fork, toWrite);
  return result;
}

/** Replaces the chunks of these documents (all in one transaction) and records their counts. */
async function writeChunks(em: EntityManager, items: Array<{ doc: KnowledgeDocument; chunks: TextChunk[] }>): Promise<void> {
  await em.transactional(async (tx) => {
    // The transaction's own connection: em.execute runs there, getConnection().execute would not.
    const conn = tx;
    const now = new Date();
    await conn.execute(`delete from knowledge_chunks where document_id in (select jsonb_array_elements_text(?::jsonb))`, [
      JSON.stringify(items.map((i) => i.doc.id)),
    ]);
    const rows = items.flatMap(({ doc, chunks }) =>
      chunks.map((c) => [
        newId('chk'),
        doc.workspaceId,
        doc.knowledgeBaseId,
        doc.id,
        doc.contentVersion,
        c.ordinal,
        c.heading,
        c.content,
        c.tokenCount,
        c.charStart,
        c.charEnd,
        now,
      ]),
    );
    for (let i = 0; i < rows.length; i += 500) {
      const batch = rows.slice(i, i + 500);
      await conn.execute(
        `insert into knowledge_chunks (id, workspace_id, knowledge_base_id, document_id, content_version, ordinal, heading, content, token_count, char_start, char_end, created_at)
         values ${batch.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        wellFormedParams(batch.flat()),
      );
    }
    await conn.execute(
      `update knowledge_documents d set chunk_count = x.n, updated_at = ?
         from jsonb_to_recordset(?::jsonb) as x(id text, v integer, n integer)
        where d.id = x.id and d.content_version = x.v`,
      [now, JSON.stringify(items.map(({ doc, chunks }) => ({ id: doc.id, v: doc.contentVersion, n: chunks.length })))],
    );
  });
}

/**
 * Embeds up to `maxChunks` chunks of these documents that have no embedding of the client's
 * model yet. Returns how many remain.
 */
export async function embedPendingChunks(
  em: EntityManager,
  embedder: EmbeddingsClient,
  workspaceId: string,
  refs: DocumentRef[],
  maxChunks: number,
  opts: { signal?: AbortSignal; heartbeat?: () => void } = {},
): Promise<{ embedded: number; remaining: number }> {
  if (refs.length === 0) return { embedded: 0, remaining: 0 };
  const conn = em;
  const pendingWhere = `c.workspace_id = ? and c.document_id in (select jsonb_array_elements_text(?::jsonb)) and (c.embedding is null or c.embedding_model is distinct from ?)
       and exists (select 1 from knowledge_documents d where d.id = c.document_id and d.content_version = c.content_version and d.indexing_status = 'processing')`;
  const ids = JSON.stringify(refs.map((r) => r.id));
  const rows = await conn.execute<Array<{ id: string; heading: string | null; content: string }>>(
    `select c.id, c.heading, c.content from knowledge_chunks c where ${pendingWhere} order by c.document_id, c.ordinal limit ?`,
    [workspaceId, ids, embedder.model, maxChunks],
  );
  const pgvector = await hasPgvector(em);
  let embedded = 0;
  for (let i = 0; i < rows.length; i += EMBED_BATCH) {
    opts.heartbeat?.();
    const batch = rows.slice(i, i + EMBED_BATCH);
    const vectors = await embedder.embed(
      batch.map((r) => embeddingInput(r.heading, r.content)),
      opts.signal,
    );
    const [first] = vectors;
    if (!first) throw new Error(`The embedder returned no vector for ${batch.length} texts.`);
    const dims = first.length;
    if (pgvector) await ensureVectorIndex(em, dims);
    const payload = JSON.stringify(batch.map((r, j) => ({ id: r.id, e: vectors[j] })));
    await conn.execute(embeddingUpdateSql(pgvector), [embedder.model, dims, payload]);
    embedded += batch.length;
  }
  const left = await conn.execute<Array<{ n: string }>>(`select count(*) as n from knowledge_chunks c where ${pendingWhere}`, [
    workspaceId,
    ids,
    embedder.model,
  ]);
  return { embedded, remaining: Number(left[0]?.n ?? 0) }; // count(*) always yields one row
}

/** What is embedded for a chunk: its heading path (context) and its text. */
export const embeddingInput = (heading: string | null, content: string) => (heading ? `${heading}\n\n${content}` : content);

export async function finishDocuments(em: EntityManager, workspaceId: string, refs: DocumentRef[]): Promise<number> {
  if (refs.length === 0) return 0;
  const now = new Date();
  const rows = await em.execute<Array<{ id: string }>>(
    `update knowledge_documents d set indexing_status = 'ready', indexing_error = null, indexed_at = ?, updated_at = ?
       from jsonb_to_recordset(?::jsonb) as x(id text, v integer)
      where d.id = x.id and d.workspace_id = ? and d.content_version = x.v and d.indexing_status = 'processing'
      returning d.id`,
    [now, now, JSON.stringify(refs.map((r) => ({ id: r.id, v: r.contentVersion }))), workspaceId],
  );
  return rows.length;
}

export async function failDocuments(em: EntityManager, workspaceId: string, refs: DocumentRef[], error: string): Promise<void> {
  if (refs.length === 0) return;
  const now = new Date();
  await em.execute(
    `update knowledge_documents d set indexing_status = 'failed', indexing_error = ?, updated_at = ?
       from jsonb_to_recordset(?::jsonb) as x(id text, v integer)
      where d.id = x.id and d.workspace_id = ? and d.content_version = x.v and d.indexing_status in ('pending', 'processing')`,
    [storableString(error.slice(0, 2000)), now, JSON.stringify(refs.map((r) => ({ id: r.id, v: r.contentVersion }))), workspaceId],
  );
}

/** The next documents a sync run upserted that still wait for indexing, in id order after `afterId`. */
export async function nextRunDocuments(
  em: EntityManager,
  workspaceId: string,
  runId: string,
  afterId: string | null,
  limit: number,
): Promise<DocumentRef[]> {
  const rows = await em.find(
    KnowledgeDocumentSchema,
    { workspaceId, lastSyncRunId: runId, indexingStatus: { $in: ['pending', 'processing'] }, ...(afterId ? { id: { $gt: afterId } } : {}) },
    { orderBy: { id: 'asc' }, limit, fields: ['id', 'contentVersion'] },
  );
  return rows.map((r) => ({ id: r.id, contentVersion: r.contentVersion }));
}
