/**
 * Documents of a knowledge base: uploads (multipart `POST /documents`, the bytes streamed into
 * the encrypted blob store) and connector items (their text kept on the row). Each new content
 * version is indexed by a Temporal workflow (services/knowledge/indexing.ts):
 *
 *   pending ──indexing starts──> processing ──chunks written and embedded──> ready
 *                                     └──extraction or embedding failed──> failed
 */
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { KnowledgeDocumentSchema, type KnowledgeBase, type KnowledgeDocument } from '../../db/entities';
import { BlobSizeError, type BlobStat, type BlobStore } from '../kernel/blobs';
import { invalidInput, notFound } from '../kernel/errors';
import { newId, sha256Hex } from '../kernel/ids';
import { decodeCursor, nextCursorOf } from '../kernel/pagination';
import type { WorkspacePrincipal } from '../kernel/principal';
import { toStorable } from '../kernel/storableText';
import { findActiveKnowledgeBase, findKnowledgeBase } from './bases';
import { documentKindOf, mimeTypeOfKind, DOCUMENT_KINDS } from './extraction';
import type { KnowledgeRuntime } from './runtime';
import { insertTextDocument } from './store';

/** 50 MiB: the largest uploaded document. */
export const MAX_DOCUMENT_BYTES = 52_428_800;

export interface DocumentView {
  id: string;
  knowledgeBaseId: string;
  connectorId: string | null;
  source: 'upload' | 'connector';
  name: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  externalId: string | null;
  externalUrl: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
  trashed: boolean;
  indexingStatus: KnowledgeDocument['indexingStatus'];
  indexingError: string | null;
  chunkCount: number;
  createdAt: Date;
  updatedAt: Date;
  indexedAt: Date | null;
}

export function documentView(d: KnowledgeDocument): DocumentView {
  return {
    id: d.id,
    knowledgeBaseId: d.knowledgeBaseId,
    connectorId: d.connectorId,
    source: d.source,
    name: d.name,
    mimeType: d.mimeType,
    sizeBytes: Number(d.sizeBytes),
    sha256: d.sha256,
    externalId: d.externalId,
    externalUrl: d.externalUrl,
    metadata: d.metadata ?? {},
    enabled: d.enabled,
    trashed: d.trashedAt !== null,
    indexingStatus: d.indexingStatus,
    indexingError: d.indexingError,
    chunkCount: d.chunkCount,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    indexedAt: d.indexedAt,
  };
}

/** Storage key of an uploaded document's bytes. */
export const documentBlobKey = (workspaceId: string, documentId: string) => `knowledge/${workspaceId}/${documentId}/original`;

/** An upload's bytes, stored before the form's other fields are checked; `discard` removes them. */
export interface StagedDocument {
  documentId: string;
  blobKey: string;
  stat: BlobStat;
}

/**
 * Streams an uploaded file into the blob store under a fresh document id (nothing is buffered
 * whole). A body over MAX_DOCUMENT_BYTES fails with BlobSizeError `too_large`.
 */
export async function stageDocumentUpload(blobs: BlobStore, workspaceId: string, body: Readable): Promise<StagedDocument> {
  const documentId = newId('doc');
  const blobKey = documentBlobKey(workspaceId, documentId);
  const stat = await blobs.put(blobKey, body, { maxBytes: MAX_DOCUMENT_BYTES });
  return { documentId, blobKey, stat };
}

export { BlobSizeError };

export interface UploadFields {
  knowledgeBaseId: string;
  /** Display name; default the file name. */
  name?: string;
  fileName: string;
  mimeType: string;
}

/**
 * Creates the document of a staged upload (pending) and starts its indexing. On any refusal the
 * staged bytes are removed, so a refused upload leaves nothing behind.
 */
export async function createUploadedDocument(
  em: EntityManager,
  runtime: Pick<KnowledgeRuntime, 'blobs' | 'indexer'>,
  principal: WorkspacePrincipal,
  staged: StagedDocument,
  fields: UploadFields,
): Promise<DocumentView> {
  const discard = () => runtime.blobs.delete(staged.blobKey).catch(() => undefined);
  let doc: KnowledgeDocument;
  let knowledgeBase: KnowledgeBase;
  try {
    knowledgeBase = await findActiveKnowledgeBase(em, principal.workspaceId, fields.knowledgeBaseId);
    const kind = documentKindOf(fields.mimeType, fields.fileName);
    if (!kind) {
      throw invalidInput(
        `Unsupported document type "${fields.mimeType}" (${fields.fileName}); supported: ${DOCUMENT_KINDS.join(', ')} (.txt, .md, .html, .pdf, .json).`,
      );
    }
    const declared = (fields.mimeType.split(';')[0] ?? '').trim().toLowerCase();
    const now = new Date();
    doc = em.create(KnowledgeDocumentSchema, {
      id: staged.documentId,
      workspaceId: principal.workspaceId,
      knowledgeBaseId: fields.knowledgeBaseId,
      connectorId: null,
      externalId: null,
      externalVersion: null,
      externalUrl: null,
      source: 'upload',
      name: fields.name ?? fields.fileName,
      // The declared type when it names the kind, else the kind's canonical type (e.g. for application/octet-stream).
      mimeType: documentKindOf(declared, undefined) === kind ? declared : mimeTypeOfKind(kind),
      sizeBytes: staged.stat.size,
      sha256: staged.stat.sha256,
      blobKey: staged.blobKey,
      contentText: null,
      metadata: { fileName: fields.fileName },
      enabled: true,
      trashedAt: null,
      indexingStatus: 'pending',
      indexingError: null,
      contentVersion: 1,
      chunkCount: 0,
      lastSyncRunId: null,
      createdById: principal.principalId,
      createdAt: now,
      updatedAt: now,
      indexedAt: null,
    });
    await em.persistAndFlush(doc);
  } catch (err) {
    await discard();
    throw err;
  }
  try {
    await runtime.indexer.start({
      kind: 'document',
      workspaceId: doc.workspaceId,
      documentId: doc.id,
      contentVersion: doc.contentVersion,
      name: knowledgeBase.name,
    });
  } catch (err) {
    // Without its indexing workflow the document would stay pending for ever: refuse the upload as a whole.
    await em.nativeDelete(KnowledgeDocumentSchema, { id: doc.id, workspaceId: doc.workspaceId });
    await discard();
    throw err;
  }
  return documentView(doc);
}

export async function listDocuments(
  em: EntityManager,
  principal: WorkspacePrincipal,
  knowledgeBaseId: string,
  query: { limit: number; cursor?: string },
): Promise<{ documents: DocumentView[]; nextCursor: string | null }> {
  await findKnowledgeBase(em, principal.workspaceId, knowledgeBaseId);
  const position = query.cursor ? decodeCursor(query.cursor) : null;
  const scope = { workspaceId: principal.workspaceId, knowledgeBaseId };
  const where = position
    ? { ...scope, $or: [{ createdAt: { $lt: position.createdAt } }, { createdAt: position.createdAt, id: { $lt: position.id } }] }
    : scope;
  const rows = await em.find(KnowledgeDocumentSchema, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: query.limit + 1 });
  const { page, nextCursor } = nextCursorOf(rows, query.limit);
  return { documents: page.map(documentView), nextCursor };
}

async function findDocument(
  em: EntityManager,
  principal: WorkspacePrincipal,
  knowledgeBaseId: string,
  id: string,
): Promise<KnowledgeDocument> {
  await findKnowledgeBase(em, principal.workspaceId, knowledgeBaseId);
  const doc = await em.findOne(KnowledgeDocumentSchema, { id, knowledgeBaseId, workspaceId: principal.workspaceId });
  if (!doc) throw notFound(`Document ${id} not found.`);
  return doc;
}

export async function getDocument(
  em: EntityManager,
  principal: WorkspacePrincipal,
  knowledgeBaseId: string,
  id: string,
): Promise<DocumentView> {
  return documentView(await findDocument(em, principal, knowledgeBaseId, id));
}

/** Deletes the document, its chunks (cascade) and its stored bytes. */
export async function deleteDocument(
  em: EntityManager,
  runtime: Pick<KnowledgeRuntime, 'blobs'>,
  principal: WorkspacePrincipal,
  knowledgeBaseId: string,
  id: string,
): Promise<{ deleted: true; documentId: string }> {
  const doc = await findDocument(em, principal, knowledgeBaseId, id);
  await em.nativeDelete(KnowledgeDocumentSchema, { id: doc.id, workspaceId: doc.workspaceId });
  if (doc.blobKey) await runtime.blobs.delete(doc.blobKey).catch(() => undefined);
  return { deleted: true, documentId: doc.id };
}

export interface TextDocumentInput {
  /** A stable id, so a retried caller adds the document once. */
  id: string;
  workspaceId: string;
  knowledgeBaseId: string;
  name: string;
  mimeType: string;
  text: string;
  metadata: Record<string, unknown>;
  createdById: string | null;
}

/**
 * Adds a document whose text is kept on the row (no blob), pending indexing; the caller starts
 * its indexing (content version 1). A document of that id already there is left as it is.
 * Runs inside the caller's transaction.
 */
export async function addTextDocument(tx: EntityManager, input: TextDocumentInput): Promise<{ id: string; contentVersion: number }> {
  const now = new Date();
  const bytes = Buffer.from(input.text, 'utf8');
  await insertTextDocument(tx, {
    id: input.id,
    workspaceId: input.workspaceId,
    knowledgeBaseId: input.knowledgeBaseId,
    name: input.name,
    mimeType: input.mimeType,
    sizeBytes: bytes.length,
    sha256: sha256Hex(bytes),
    text: input.text,
    metadataJson: JSON.stringify(toStorable(input.metadata)),
    createdById: input.createdById,
    now,
  });
  return { id: input.id, contentVersion: 1 };
}
