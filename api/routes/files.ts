import contentDisposition from 'content-disposition';
import { z } from 'zod';
import { routeGroup, SESSION_READ, WORKSPACE_READ } from '../http/route';
import { answerById } from '../http/handlers';
import { conflictOrReplay, envelopeAuthErrors, notFound } from '../http/envelopeErrors';
import type { Access } from '../middleware/auth';
import { withStreamedIdempotency } from '../middleware/idempotency';
import { HttpError } from '../http/errorMapping';
import { etagMatches, parseByteRange } from '../http/ranges';
import { fileLinks } from '../http/links';
import { requestOrigin } from '../http/urls';
import type { AppContext } from '../context';
import { cursorPageQuery, idParams } from '../schemas';
import { createdFileSchema, fileEnvelopeSchema, fileListSchema, storedBlobSchema } from '../schemas/files';
import { invalidInput } from '../../services/kernel/errors';
import {
  EMPTY_FILE_NAME,
  MAX_FILE_BYTES,
  storableFileName,
  completeFile,
  createFile,
  getFile,
  listFiles,
  measureUpload,
  openDownload,
  prepareUpload,
  requestFileDeletion,
  stageUpload,
} from '../../services/files';

/**
 * Files, in the envelope family, mounted twice with the same handlers: `/api/v1/files` for
 * workspace API keys and `/api/files` for signed-in sessions. Mutations need a role above viewer.
 */

const sha256Hex = z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters');
const fileSize = z.number().int().min(0).max(MAX_FILE_BYTES);
const boundedText = (what: string) =>
  z
    .string()
    .trim()
    .min(1, `${what} must not be empty`)
    .max(255, `${what} must be at most 255 characters`)
    .refine((s) => !hasControlCharacter(s), `${what} must not contain control characters`);
const hasControlCharacter = (s: string) => [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
/** `type/subtype` with optional parameters (RFC 6838), so it can be sent back as a Content-Type. */
const mediaType = boundedText('mimeType').pipe(
  z
    .string()
    .regex(
      /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;\s*[\w!#$&^.+-]+=("[^"\\]*"|[\w!#$&^.+-]+))*$/,
      'mimeType must be a media type such as text/plain',
    ),
);

/** Names are stored without control, bidirectional and zero-width characters (services/files/names.ts); empty after that is a 400. */
const fileName = z
  .string()
  .transform(storableFileName)
  .pipe(z.string().min(1, EMPTY_FILE_NAME).max(255, 'name must be at most 255 characters'));
const createBody = z.strictObject({ name: fileName, mimeType: mediaType, sizeBytes: fileSize, sha256: sha256Hex.optional() });
const completeBody = z.strictObject({ sizeBytes: fileSize.optional(), sha256: sha256Hex.optional() });
/** Download bodies: the file's bytes, served with the file's own content-type. */
const rawBytes = z.string().meta({ format: 'binary', description: "The file's bytes, with the file's mimeType as content-type" });

const fileNotFound = notFound('no such file in this workspace');
const inProgress = conflictOrReplay('the key is still in use by a request in progress');

/** The Content-Length of an upload: required, at most 100 MiB (413 before the body is read). */
function uploadLength(ctx: AppContext): number {
  const raw = ctx.get('content-length');
  if (!/^\d{1,20}$/.test(raw))
    throw invalidInput('PUT content needs the raw body with a Content-Length header.', { code: 'request_malformed' });
  const length = Number(raw);
  // Connection: close, so the server does not read the refused body to keep the connection.
  if (length > MAX_FILE_BYTES)
    throw new HttpError(413, `File content is larger than ${MAX_FILE_BYTES} bytes (100 MiB).`, { Connection: 'close' });
  return length;
}

type SignedIn = Exclude<Access, { kind: 'public' } | { kind: 'operator' }>;

function fileRoutesAt(mount: string, access: SignedIn, opSuffix: string, tag: string) {
  const fileRoute = routeGroup({
    tags: [tag],
    family: 'envelope',
    access,
    errors: { ...envelopeAuthErrors, 403: '`authorization_failed`: not a workspace key' },
    pathPrefix: mount,
  });
  const write: SignedIn = { ...access, roles: 'write' };
  const op = (name: string) => `${name}${opSuffix}`;
  return [
    fileRoute({
      method: 'get',
      path: '',
      operationId: op('listFiles'),
      summary: 'Files of the workspace, newest first (createdAt desc, id desc)',
      query: cursorPageQuery,
      responses: {
        200: { description: '`{ files, nextCursor }`', schema: fileListSchema },
        400: '`request_malformed`: limit outside 1 to 100; `validation_failed`: invalid cursor',
      },
      handler: async (ctx, { principal, query }) => ({ status: 200, body: await listFiles(ctx.state.em, principal, query) }),
    }),
    fileRoute({
      method: 'post',
      path: '',
      operationId: op('createFile'),
      summary: 'Create upload metadata; then PUT the content and POST complete',
      access: write,
      body: createBody,
      idempotency: 'required',
      responses: {
        201: { description: '`{ file, uploadUrl, completeUrl }`', schema: createdFileSchema },
        400: '`validation_failed`: bad body; `idempotency_key_invalid`: missing or invalid Idempotency-Key',
        ...inProgress,
        503: '`service_unavailable`: file writes are blocked on this deployment (a replay still answers 201)',
      },
      handler: async (ctx, { principal, body, deps }) => {
        const file = await createFile(ctx.state.em, deps.services.files, principal, body);
        return { status: 201, body: { file, ...fileLinks(requestOrigin(ctx), mount, file.id) } };
      },
    }),
    fileRoute({
      method: 'get',
      path: '/{id}',
      operationId: op('getFile'),
      summary: 'One file',
      params: idParams,
      responses: { 200: { description: '`{ file }`', schema: fileEnvelopeSchema }, ...fileNotFound },
      handler: answerById('file', getFile),
    }),
    fileRoute({
      method: 'delete',
      path: '/{id}',
      operationId: op('deleteFile'),
      summary: 'Request deletion: the file becomes deletion_requested and its blob is purged later',
      access: write,
      params: idParams,
      idempotency: 'required',
      responses: {
        202: { description: '`{ file }` (unchanged when deletion was already requested or done)', schema: fileEnvelopeSchema },
        400: '`idempotency_key_invalid`',
        ...fileNotFound,
        ...inProgress,
      },
      handler: async (ctx, { principal, params, deps }) => ({
        status: 202,
        body: { file: await requestFileDeletion(ctx.state.em, deps.services.files, principal, params.id) },
      }),
    }),
    fileRoute({
      method: 'put',
      path: '/{id}/content',
      operationId: op('putFileContent'),
      summary: 'Store the raw content of a pending file (streamed to storage, encrypted at rest)',
      access: write,
      params: idParams,
      idempotency: 'required',
      rawBody: { contentType: 'application/octet-stream', description: 'The raw bytes, with Content-Length (at most 104857600)' },
      responses: {
        201: { description: '`{ blob: { key, size, sha256 } }`', schema: storedBlobSchema },
        400: '`idempotency_key_invalid`; `request_malformed`: no Content-Length, or a body shorter or longer than it',
        ...fileNotFound,
        ...conflictOrReplay('the file is not pending'),
        413: '`validation_failed`: Content-Length over 100 MiB, or over the sizeBytes declared at create (nothing is stored)',
      },
      handler: async (ctx, { principal, params, deps }) =>
        withStreamedIdempotency(ctx, {
          // The fingerprint of a raw body: its declared length and the SHA-256 computed while streaming.
          measure: async () => {
            const length = uploadLength(ctx);
            const { sha256 } = await measureUpload(ctx.req, length);
            return { contentLength: length, sha256 };
          },
          stage: async () => {
            const length = uploadLength(ctx);
            const file = await prepareUpload(ctx.state.em, principal, params.id);
            // Refused unread: Connection: close so the server does not read the body to keep the connection.
            if (length > file.sizeBytes) ctx.set('Connection', 'close');
            const staged = await stageUpload(ctx.state.em, deps.services.files.blobs, file, ctx.req, length);
            return {
              fingerprint: { contentLength: length, sha256: staged.stat.sha256 },
              commit: async () => ({ status: 201, body: { blob: await staged.commit() } }),
              discard: staged.discard,
            };
          },
        }),
    }),
    fileRoute({
      method: 'get',
      path: '/{id}/content',
      operationId: op('downloadFile'),
      summary: 'Download a ready file (raw bytes, not the envelope); Range bytes=a-b or bytes=a- for part of it',
      params: idParams,
      responses: {
        200: {
          description: 'The whole content, with accept-ranges, content-type, content-disposition, etag and content-length',
          schema: rawBytes,
          mediaType: 'application/octet-stream',
        },
        206: { description: 'The requested range, with content-range', schema: rawBytes, mediaType: 'application/octet-stream' },
        304: { description: 'If-None-Match matched the etag' },
        400: '`request_malformed`: a Range other than bytes=<start>-<end>',
        ...fileNotFound,
        416: '`validation_failed`: the range cannot be satisfied',
        423: '`conflict`: the file is not ready',
      },
      handler: async (ctx, { principal, params, deps }) => {
        const download = await openDownload(ctx.state.em, deps.services.files.blobs, principal, params.id);
        const { file, etag } = download;
        const headers: Record<string, string> = {
          'Accept-Ranges': 'bytes',
          ETag: etag,
          'Content-Type': file.mimeType,
          // RFC 6266: an ASCII `filename` for old clients, `filename*` (UTF-8) for the real name.
          'Content-Disposition': contentDisposition(file.name, { type: 'attachment', fallback: file.name.replace(/[^\x20-\x7e]/g, '?') }),
          'X-Content-Type-Options': 'nosniff',
          'Cache-Control': 'private, no-cache',
        };
        if (etagMatches(ctx.get('if-none-match') || undefined, etag)) return { status: 304, body: null, headers, raw: true };
        // If-Range with another validator: the content changed, send all of it.
        const ifRange = ctx.get('if-range');
        const range = ifRange && ifRange !== etag ? null : parseByteRange(ctx.get('range') || undefined, file.sizeBytes);
        const body = await download.open(range);
        if (!range) return { status: 200, body, headers: { ...headers, 'Content-Length': String(file.sizeBytes) }, raw: true };
        return {
          status: 206,
          body,
          headers: {
            ...headers,
            'Content-Length': String(range.end - range.start + 1),
            'Content-Range': `bytes ${range.start}-${range.end}/${file.sizeBytes}`,
          },
          raw: true,
        };
      },
    }),
    fileRoute({
      method: 'post',
      path: '/{id}/complete',
      operationId: op('completeFile'),
      summary: 'Verify the uploaded content against the declared size and sha256, then scan it (same call)',
      access: write,
      params: idParams,
      body: completeBody,
      idempotency: 'required',
      responses: {
        202: {
          description: '`{ file }`: ready or quarantined; pending_scan when a scanner could not answer (complete again later)',
          schema: fileEnvelopeSchema,
        },
        400: '`validation_failed`: bad body; `idempotency_key_invalid`',
        ...fileNotFound,
        ...conflictOrReplay('no content uploaded, size or checksum mismatch, wrong file status, or a scan in progress'),
      },
      handler: async (ctx, { principal, params, body, deps }) => ({
        status: 202,
        body: { file: await completeFile(ctx.state.em, deps.services.files, principal, params.id, body, ctx.state.log) },
      }),
    }),
  ];
}

export const fileRoutes = [
  ...fileRoutesAt('/api/v1/files', WORKSPACE_READ, '', 'Files'),
  ...fileRoutesAt('/api/files', SESSION_READ, 'Session', 'Files (session)'),
];
