import type { Readable } from 'node:stream';
import { z } from 'zod';
import { routeGroup, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { answerById } from '../http/handlers';
import { readMultipart, type MultipartFile } from '../http/multipartStream';
import { cursorPageQuery, pathId, idParams } from '../schemas';
import {
  knowledgeBaseEnvelope,
  knowledgeBaseList,
  knowledgeDocumentDeleted,
  knowledgeDocumentEnvelope,
  knowledgeDocumentList,
  knowledgeNotFound,
  searchResponseSchema,
} from '../schemas/knowledge';
import { invalidInput } from '../../services/kernel/errors';
import {
  createKnowledgeBase,
  createUploadedDocument,
  deleteDocument,
  getDocument,
  getKnowledgeBase,
  listDocuments,
  listKnowledgeBases,
  MAX_DOCUMENT_BYTES,
  searchKnowledge,
  setKnowledgeBaseTrashed,
  stageDocumentUpload,
  type UploadFields,
} from '../../services/knowledge';
import { measureStream } from '../../services/kernel/blobs';
import { storableFileName } from '../../services/files';
import { findUnstorableText } from '../../services/kernel/storableText';
import { withStreamedIdempotency } from '../middleware/idempotency';

/**
 * Knowledge bases, their documents and search (bare family). Connectors and sync runs, in the
 * envelope family, are in knowledgeConnectors.ts.
 */

const knowledgeRoute = routeGroup({ tags: ['Knowledge bases'], family: 'bare', access: WORKSPACE_READ, pathPrefix: '/api/v1' });

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const chunking = z
  .strictObject({
    minChunkSizeChars: z.number().int().min(0).max(10_000).default(100),
    maxChunkSizeTokens: z.number().int().min(32).max(8192).default(1024),
    overlapTokens: z.number().int().min(0).max(4096).default(200),
  })
  .refine((c) => c.overlapTokens <= c.maxChunkSizeTokens / 2, {
    message: 'overlapTokens must be at most half of maxChunkSizeTokens',
    path: ['overlapTokens'],
  });

const createBody = z.strictObject({
  name,
  description: z.string().max(2000, 'must be at most 2000 characters').nullable().optional(),
  chunking: chunking.optional(),
});
const patchBody = z.strictObject({ trashed: z.boolean() });
const searchBody = z.strictObject({
  knowledgeBaseId: pathId.optional(),
  query: z.string().max(2000, 'must be at most 2000 characters'),
  limit: z.number().int().min(1).max(50).default(10),
});
const documentParams = z.object({ id: pathId, documentId: pathId });

export const knowledgeRoutes = [
  knowledgeRoute({
    method: 'get',
    path: '/knowledge-bases',
    operationId: 'listKnowledgeBases',
    summary: 'Knowledge bases of the workspace, newest first (trashed ones included, with `trashed: true`)',
    responses: { 200: { description: '`{ knowledgeBases }`', schema: knowledgeBaseList } },
    handler: async (ctx, { principal }) => ({ status: 200, body: { knowledgeBases: await listKnowledgeBases(ctx.state.em, principal) } }),
  }),
  knowledgeRoute({
    method: 'post',
    path: '/knowledge-bases',
    operationId: 'createKnowledgeBase',
    summary: 'Create a knowledge base; chunking defaults 100 characters, 1024 tokens, 200 tokens of overlap',
    access: WORKSPACE_WRITE,
    body: createBody,
    idempotency: 'optional',
    responses: {
      201: { description: '`{ knowledgeBase }`', schema: knowledgeBaseEnvelope },
      409: 'Idempotency-Key reused with another body',
    },
    handler: async (ctx, { principal, body }) => ({
      status: 201,
      body: { knowledgeBase: await createKnowledgeBase(ctx.state.em, principal, body) },
    }),
  }),
  knowledgeRoute({
    method: 'post',
    path: '/knowledge-bases/search',
    operationId: 'searchKnowledgeBases',
    summary: 'Hybrid retrieval (keyword + vector, reciprocal rank fusion) over one base or every base of the workspace',
    body: searchBody,
    responses: {
      200: { description: '`{ results, retrieval }`; an empty query answers `{ results: [] }`', schema: searchResponseSchema },
      ...knowledgeNotFound,
    },
    handler: async (ctx, { principal, body, deps }) => ({
      status: 200,
      body: await searchKnowledge(ctx.state.em, deps.services.knowledge.queryEmbedder, principal, body),
    }),
  }),
  knowledgeRoute({
    method: 'get',
    path: '/knowledge-bases/{id}',
    operationId: 'getKnowledgeBase',
    summary: 'One knowledge base',
    params: idParams,
    responses: { 200: { description: '`{ knowledgeBase }`', schema: knowledgeBaseEnvelope }, ...knowledgeNotFound },
    handler: answerById('knowledgeBase', getKnowledgeBase),
  }),
  knowledgeRoute({
    method: 'patch',
    path: '/knowledge-bases/{id}',
    operationId: 'patchKnowledgeBase',
    summary: '`{ trashed: true }` trashes the base (excluded from search), `{ trashed: false }` restores it',
    access: WORKSPACE_WRITE,
    params: idParams,
    body: patchBody,
    idempotency: 'optional',
    responses: {
      200: { description: '`{ knowledgeBase }`', schema: knowledgeBaseEnvelope },
      ...knowledgeNotFound,
      409: 'Idempotency-Key reused with another body',
    },
    handler: async (ctx, { principal, params, body }) => ({
      status: 200,
      body: { knowledgeBase: await setKnowledgeBaseTrashed(ctx.state.em, principal, params.id, body.trashed) },
    }),
  }),
  knowledgeRoute({
    method: 'post',
    path: '/documents',
    operationId: 'uploadKnowledgeDocument',
    summary:
      'Upload a document into a knowledge base (multipart: `knowledgeBaseId`, `file`, optional `name`); it is indexed in the background',
    access: WORKSPACE_WRITE,
    idempotency: 'optional',
    rawBody: {
      contentType: 'multipart/form-data',
      description: `Fields \`knowledgeBaseId\` (required) and \`name\` (optional), and one \`file\` part of at most ${MAX_DOCUMENT_BYTES} bytes: text, Markdown, HTML, PDF or JSON`,
    },
    responses: {
      201: { description: '`{ document }` with `indexingStatus: pending`', schema: knowledgeDocumentEnvelope },
      ...knowledgeNotFound,
      409: 'The knowledge base is trashed; Idempotency-Key reused with another body',
      413: 'The file is larger than 50 MiB',
    },
    handler: async (ctx, { principal, deps }) => {
      const blobs = deps.services.knowledge.blobs;
      const parts = <T>(onFile: (stream: Readable) => Promise<T>, discard: (result: T) => Promise<void>) =>
        readMultipart<T>(ctx.req, ctx.headers, {
          fileField: 'file',
          limits: { maxFileBytes: MAX_DOCUMENT_BYTES, maxFields: 4, maxFieldBytes: 1024 },
          onFile,
          discard,
        });
      // The idempotency fingerprint of an upload: its fields and its file's name, type, size and SHA-256.
      const fingerprint = (fields: Record<string, string>, file: MultipartFile<{ size: number; sha256: string }> | null) => ({
        fields,
        file: file ? { filename: file.filename, mimeType: file.mimeType, size: file.result.size, sha256: file.result.sha256 } : null,
      });
      return withStreamedIdempotency(
        ctx,
        {
          measure: async () => {
            const { fields, file } = await parts(
              (stream) => measureStream(stream, { maxBytes: MAX_DOCUMENT_BYTES }),
              async () => undefined,
            );
            return fingerprint(fields, file);
          },
          stage: async () => {
            const { fields, file } = await parts(
              (stream) => stageDocumentUpload(blobs, principal.workspaceId, stream),
              (staged) => blobs.delete(staged.blobKey),
            );
            const discard = async () => {
              if (file) await blobs.delete(file.result.blobKey).catch(() => undefined);
            };
            const refuse = async (message: string): Promise<never> => {
              await discard();
              throw invalidInput(message);
            };
            if (!file) return refuse('A `file` part is required.');
            const unknown = Object.keys(fields).filter((k) => k !== 'knowledgeBaseId' && k !== 'name');
            if (unknown.length) return refuse(`Unknown field(s): ${unknown.join(', ')}; send knowledgeBaseId, name and file.`);
            // The fields skip the route's JSON check (api/http/route.ts): the same refusal, here.
            const unstorable = findUnstorableText(fields, { root: 'fields' });
            if (unstorable)
              return refuse(
                `Invalid multipart fields: ${unstorable.path} ${unstorable.problem}; such text cannot be stored, remove or escape it`,
              );
            const kbId = pathId.safeParse(fields.knowledgeBaseId ?? '');
            if (!kbId.success) return refuse('knowledgeBaseId is required (1 to 200 printable characters).');
            const docName = fields.name === undefined ? undefined : name.safeParse(fields.name);
            if (docName && !docName.success) return refuse('name must be 1 to 200 characters after trimming.');
            const upload: UploadFields = {
              knowledgeBaseId: kbId.data,
              name: docName?.data,
              fileName: storableFileName(file.filename).slice(0, 200) || 'upload',
              mimeType: file.mimeType || 'application/octet-stream',
            };
            return {
              fingerprint: fingerprint(fields, { ...file, result: file.result.stat }),
              commit: async () => ({
                status: 201,
                body: { document: await createUploadedDocument(ctx.state.em, deps.services.knowledge, principal, file.result, upload) },
              }),
              discard,
            };
          },
        },
        'optional',
      );
    },
  }),
  knowledgeRoute({
    method: 'get',
    path: '/knowledge-bases/{id}/documents',
    operationId: 'listKnowledgeDocuments',
    summary: 'Documents of a knowledge base, newest first, with cursor pagination',
    params: idParams,
    query: cursorPageQuery,
    responses: {
      200: { description: '`{ documents, nextCursor }`', schema: knowledgeDocumentList },
      ...knowledgeNotFound,
    },
    handler: async (ctx, { principal, params, query }) => ({
      status: 200,
      body: await listDocuments(ctx.state.em, principal, params.id, query),
    }),
  }),
  knowledgeRoute({
    method: 'get',
    path: '/knowledge-bases/{id}/documents/{documentId}',
    operationId: 'getKnowledgeDocument',
    summary: 'One document with its indexing status',
    params: documentParams,
    responses: { 200: { description: '`{ document }`', schema: knowledgeDocumentEnvelope }, ...knowledgeNotFound },
    handler: async (ctx, { principal, params }) => ({
      status: 200,
      body: { document: await getDocument(ctx.state.em, principal, params.id, params.documentId) },
    }),
  }),
  knowledgeRoute({
    method: 'delete',
    path: '/knowledge-bases/{id}/documents/{documentId}',
    operationId: 'deleteKnowledgeDocument',
    summary: 'Delete a document, its chunks and its stored bytes',
    access: WORKSPACE_WRITE,
    params: documentParams,
    idempotency: 'optional',
    responses: {
      200: { description: '`{ deleted: true, documentId }`', schema: knowledgeDocumentDeleted },
      ...knowledgeNotFound,
    },
    handler: async (ctx, { principal, params, deps }) => ({
      status: 200,
      body: await deleteDocument(ctx.state.em, deps.services.knowledge, principal, params.id, params.documentId),
    }),
  }),
];
