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
import { storableString } from '../kernel/storableText';
import type { EmbeddingsClient } from '../models/embeddings';
import { chunkingOf } from './bases';
import { chunkText, type TextChunk } from './chunking';
import { documentKindOf, extractText, ExtractionError } from './extraction';
import {
  countPendingChunks,
  deleteDocumentChunks,
  insertChunks,
  markDocumentsFailed,
  markDocumentsProcessing,
  markDocumentsReady,
  pendingChunks,
  setChunkCounts,
  storeEmbeddings,
  writtenChunkCounts,
} from './store';
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
  const wanted = new Map(refs.map((r) => [r.id, r.contentVersion]));
  const docs = (await fork.find(KnowledgeDocumentSchema, { workspaceId, id: { $in: [...wanted.keys()] } }, { populate: ['contentText'] }))
    // Deleted, or a newer version replaced it (its own pass indexes that one); done ones stay done.
    .filter((d) => wanted.get(d.id) === d.contentVersion && (d.indexingStatus === 'pending' || d.indexingStatus === 'processing'));
  if (docs.length === 0) return result;
  const pairs = JSON.stringify(docs.map((d) => ({ id: d.id, v: d.contentVersion })));
  await markDocumentsProcessing(fork, pairs, new Date());
  // Chunks already written for the version (an earlier attempt crashed after writing them) are kept.
  const written = new Map((await writtenChunkCounts(fork, pairs)).map((r) => [r.document_id, Number(r.n)]));
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
    // Every statement on `tx`, not `em`: old chunks, new chunks and counts commit together.
    const now = new Date();
    await deleteDocumentChunks(tx, JSON.stringify(items.map((i) => i.doc.id)));
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
    for (let i = 0; i < rows.length; i += 500) await insertChunks(tx, rows.slice(i, i + 500));
    await setChunkCounts(
      tx,
      JSON.stringify(items.map(({ doc, chunks }) => ({ id: doc.id, v: doc.contentVersion, n: chunks.length }))),
      now,
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
  const ids = JSON.stringify(refs.map((r) => r.id));
  const rows = await pendingChunks(em, workspaceId, ids, embedder.model, maxChunks);
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
    await storeEmbeddings(em, embeddingUpdateSql(pgvector), embedder.model, dims, payload);
    embedded += batch.length;
  }
  return { embedded, remaining: await countPendingChunks(em, workspaceId, ids, embedder.model) };
}

/** What is embedded for a chunk: its heading path (context) and its text. */
export const embeddingInput = (heading: string | null, content: string) => (heading ? `${heading}\n\n${content}` : content);

export async function finishDocuments(em: EntityManager, workspaceId: string, refs: DocumentRef[]): Promise<number> {
  if (refs.length === 0) return 0;
  const now = new Date();
  const rows = await markDocumentsReady(em, workspaceId, JSON.stringify(refs.map((r) => ({ id: r.id, v: r.contentVersion }))), now);
  return rows.length;
}

export async function failDocuments(em: EntityManager, workspaceId: string, refs: DocumentRef[], error: string): Promise<void> {
  if (refs.length === 0) return;
  const now = new Date();
  const pairs = JSON.stringify(refs.map((r) => ({ id: r.id, v: r.contentVersion })));
  await markDocumentsFailed(em, workspaceId, pairs, storableString(error.slice(0, 2000)), now);
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
