/**
 * The file lifecycle of the spec's state table:
 *
 *   (none) ──create──> pending ──PUT content──> pending (blob stored; a new PUT replaces it)
 *   pending ──complete, blob verified──> pending_scan ──scan, same call──> ready | quarantined
 *   any ──DELETE──> deletion_requested (unchanged when already requested or deleted)
 *   deletion_requested ──purge workflow, after the delay──> deleted
 *
 * Every query is scoped to the caller's workspace: another workspace's id is not found.
 * State moves are conditional updates (`where status = …`), so concurrent requests cannot
 * move a file twice or resurrect a deleted one.
 */
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { FileScanSchema, StoredFileSchema, UNSET_SHA256, type FileStatus, type ReadyFileRef, type StoredFile } from '../../db/entities';
import { BlobSizeError, measureStream, type BlobStat, type BlobStore } from '../kernel/blobs';
import { conflict, invalidInput, locked, notFound, tooLarge, unavailable } from '../kernel/errors';
import { findInWorkspace } from '../kernel/workspaceScope';
import { newId } from '../kernel/ids';
import { decodeCursor, nextCursorOf } from '../kernel/pagination';
import type { FilePurger } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { storableFileName } from './names';
import { attachPendingBlob, leaseScan } from './store';
import type { FileScanner } from './scanning';

/** A name with nothing left once control, bidirectional and zero-width characters are removed. */
export const EMPTY_FILE_NAME = 'name must not be empty (control, bidirectional and zero-width characters are removed).';

/** 100 MiB: the largest file (declared size and uploaded content). */
export const MAX_FILE_BYTES = 104_857_600;
/** How long one complete call may hold a file's scan before another may take it over. */
const SCAN_LEASE_MS = 5 * 60_000;

/** What files need besides the database: the blob store, the scanners and the purge workflow. */
export interface FilesRuntime {
  blobs: BlobStore;
  scanners: FileScanner[];
  purger: FilePurger;
  writesDisabled: boolean;
  purgeDelayMs: number;
}

/** A file as clients see it (the spec's File resource). */
export type FileView = Pick<StoredFile, 'id' | 'name' | 'mimeType' | 'sizeBytes' | 'sha256' | 'status' | 'createdAt' | 'updatedAt'>;

export function fileView(f: StoredFile): FileView {
  return {
    id: f.id,
    name: f.name,
    mimeType: f.mimeType,
    sizeBytes: f.sizeBytes,
    sha256: f.sha256,
    status: f.status,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
  };
}

/** The reference another area keeps to a file it checked is ready (`status` is not re-read). */
export function readyFileRef(f: Pick<StoredFile, 'id' | 'name' | 'mimeType' | 'sizeBytes' | 'sha256'>): ReadyFileRef {
  return { id: f.id, name: f.name, mimeType: f.mimeType, sizeBytes: f.sizeBytes, sha256: f.sha256, status: 'ready' };
}

async function findFile(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<StoredFile> {
  return findInWorkspace(em, StoredFileSchema, principal.workspaceId, id, `File ${id} not found.`);
}

export async function getFile(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<FileView> {
  return fileView(await findFile(em, principal, id));
}

export async function listFiles(
  em: EntityManager,
  principal: WorkspacePrincipal,
  query: { limit: number; cursor?: string },
): Promise<{ files: FileView[]; nextCursor: string | null }> {
  const position = query.cursor ? decodeCursor(query.cursor) : null;
  const where = position
    ? {
        workspaceId: principal.workspaceId,
        $or: [{ createdAt: { $lt: position.createdAt } }, { createdAt: position.createdAt, id: { $lt: position.id } }],
      }
    : { workspaceId: principal.workspaceId };
  const rows = await em.find(StoredFileSchema, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: query.limit + 1 });
  const { page, nextCursor } = nextCursorOf(rows, query.limit);
  return { files: page.map(fileView), nextCursor };
}

export interface CreateFileInput {
  name: string;
  mimeType: string;
  sizeBytes: number;
  sha256?: string;
}

export async function createFile(
  em: EntityManager,
  runtime: Pick<FilesRuntime, 'writesDisabled'>,
  principal: WorkspacePrincipal,
  input: CreateFileInput,
): Promise<FileView> {
  if (runtime.writesDisabled) throw unavailable('File uploads are disabled on this deployment.');
  const name = storableFileName(input.name);
  if (!name) throw invalidInput(EMPTY_FILE_NAME, { details: { field: 'name' } });
  const now = new Date();
  const file = em.create(StoredFileSchema, {
    id: randomUUID(),
    workspaceId: principal.workspaceId,
    name,
    mimeType: input.mimeType,
    sizeBytes: input.sizeBytes,
    declaredSha256: input.sha256?.toLowerCase() ?? null,
    sha256: UNSET_SHA256,
    status: 'pending',
    blobKey: null,
    blobId: null,
    blobSize: null,
    blobSha256: null,
    scanLeaseUntil: null,
    createdById: principal.principalId,
    createdAt: now,
    updatedAt: now,
    deletionRequestedAt: null,
    deletedAt: null,
  });
  await em.persistAndFlush(file);
  return fileView(file);
}

/** The `{ blob }` of PUT content: the blob's public id (not its storage key), size and digest. */
export interface BlobView {
  key: string;
  size: number;
  sha256: string;
}

/**
 * PUT content, in two steps so the request body is read once, straight into storage:
 * `prepareUpload` refuses what can be refused before reading (unknown file, wrong status), then
 * `stage` streams the body into a new blob and returns its stat; `commit` attaches it to the
 * file (still pending) and removes the blob it replaces, `discard` removes it.
 */
export async function prepareUpload(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<StoredFile> {
  const file = await findFile(em, principal, id);
  if (file.status !== 'pending') throw conflict(`File is ${file.status}; content can only be uploaded while it is pending.`);
  return file;
}

export interface StagedBlob {
  stat: BlobStat;
  blobId: string;
  commit(): Promise<BlobView>;
  discard(): Promise<void>;
}

/**
 * Refuses, before any byte is read, content longer than the size declared at create: it could
 * never complete, and storing it first would let a caller park up to 100 MiB per pending file.
 */
export function checkUploadLength(file: StoredFile, contentLength: number): void {
  if (contentLength > file.sizeBytes) {
    throw tooLarge(`File content is ${contentLength} bytes, larger than the ${file.sizeBytes} bytes declared when the file was created.`, {
      details: { declaredBytes: file.sizeBytes, contentLength },
    });
  }
}

export async function stageUpload(
  em: EntityManager,
  blobs: BlobStore,
  file: StoredFile,
  body: Readable,
  contentLength: number,
): Promise<StagedBlob> {
  checkUploadLength(file, contentLength);
  const blobId = newId('blob');
  const storageKey = `files/${file.workspaceId}/${file.id}/${blobId}`;
  let stat: BlobStat;
  try {
    // The declared size bounds the stream too: a body that outgrows it is cut off mid-stream and nothing is kept.
    stat = await blobs.put(storageKey, body, { maxBytes: Math.min(file.sizeBytes, MAX_FILE_BYTES), expectedBytes: contentLength });
  } catch (err) {
    throw sizeErrorAsInput(err);
  }
  const discard = () => blobs.delete(storageKey);
  return {
    stat,
    blobId,
    discard,
    commit: async () => {
      const previous = await attachPendingBlob(em, file, { storageKey, blobId, size: stat.size, sha256: stat.sha256 });
      const [replaced] = previous;
      if (replaced === undefined) {
        await discard();
        throw conflict('File is no longer pending; the uploaded content was not kept.');
      }
      if (replaced.blob_key) await blobs.delete(replaced.blob_key).catch(() => undefined);
      return { key: blobId, size: stat.size, sha256: stat.sha256 };
    },
  };
}

/** Size and digest of a body without storing it (the replay of an earlier upload). */
export async function measureUpload(body: Readable, contentLength: number): Promise<{ size: number; sha256: string }> {
  try {
    return await measureStream(body, { maxBytes: MAX_FILE_BYTES, expectedBytes: contentLength });
  } catch (err) {
    throw sizeErrorAsInput(err);
  }
}

function sizeErrorAsInput(err: unknown): unknown {
  if (err instanceof BlobSizeError) return invalidInput(err.message, { code: 'request_malformed' });
  return err;
}

/**
 * POST complete: verifies the uploaded blob against the declared size and digest (create's,
 * and complete's own when given), moves the file to `pending_scan`, then scans it in the same
 * call. A file already `pending_scan` (an earlier scan could not finish) is scanned again.
 */
export async function completeFile(
  em: EntityManager,
  runtime: Pick<FilesRuntime, 'blobs' | 'scanners'>,
  principal: WorkspacePrincipal,
  id: string,
  declared: { sizeBytes?: number; sha256?: string },
  log: { warn(obj: object, msg: string): void },
): Promise<FileView> {
  let file = await findFile(em, principal, id);
  if (file.status === 'pending') file = await verifyBlob(em, file, declared);
  else if (file.status !== 'pending_scan') throw conflict(`File is ${file.status}; only pending files can be completed.`);
  return fileView(await scanFile(em, runtime, file, log));
}

async function verifyBlob(em: EntityManager, file: StoredFile, declared: { sizeBytes?: number; sha256?: string }): Promise<StoredFile> {
  if (!file.blobKey || file.blobSize === null || !file.blobSha256) throw conflict('No content was uploaded for this file.');
  for (const size of [file.sizeBytes, declared.sizeBytes]) {
    if (size !== undefined && size !== file.blobSize)
      throw conflict(`Size mismatch: the uploaded content is ${file.blobSize} bytes, ${size} were declared.`);
  }
  for (const sha of [file.declaredSha256, declared.sha256?.toLowerCase()]) {
    if (sha && sha !== file.blobSha256)
      throw conflict(`Checksum mismatch: the uploaded content has sha256 ${file.blobSha256}, ${sha} was declared.`);
  }
  const moved = await em.nativeUpdate(
    StoredFileSchema,
    { id: file.id, workspaceId: file.workspaceId, status: 'pending', blobKey: file.blobKey },
    { status: 'pending_scan', sha256: file.blobSha256, updatedAt: new Date() },
  );
  if (moved === 0) throw conflict('File changed while it was being completed; retry.');
  return reload(em, file);
}

async function scanFile(
  em: EntityManager,
  runtime: Pick<FilesRuntime, 'blobs' | 'scanners'>,
  file: StoredFile,
  log: { warn(obj: object, msg: string): void },
): Promise<StoredFile> {
  const now = new Date();
  if (!(await leaseScan(em, file, now, new Date(now.getTime() + SCAN_LEASE_MS))))
    throw conflict('A scan of this file is already in progress.');
  const blobKey = file.blobKey!;
  const input = {
    mimeType: file.mimeType,
    sizeBytes: file.blobSize ?? 0,
    open: (range?: { start: number; end: number }) => runtime.blobs.read(blobKey, range),
  };
  const verdicts: Array<'clean' | 'infected' | 'error'> = [];
  for (const scanner of runtime.scanners) {
    let verdict: 'clean' | 'infected' | 'error';
    let detail: string | null;
    try {
      ({ verdict, detail } = await scanner.scan(input));
    } catch (err) {
      verdict = 'error';
      detail = (err instanceof Error ? err.message : String(err)).slice(0, 500);
      log.warn({ fileId: file.id, scanner: scanner.name, err }, 'file scan failed; the file stays pending_scan');
    }
    verdicts.push(verdict);
    em.create(FileScanSchema, {
      id: newId('scan'),
      workspaceId: file.workspaceId,
      fileId: file.id,
      scanner: scanner.name,
      verdict,
      detail,
      blobSha256: file.blobSha256 ?? UNSET_SHA256,
      createdAt: new Date(),
    });
  }
  await em.flush();
  const next: FileStatus | null = verdicts.includes('infected') ? 'quarantined' : verdicts.includes('error') ? null : 'ready';
  await em.nativeUpdate(
    StoredFileSchema,
    { id: file.id, workspaceId: file.workspaceId, status: 'pending_scan' },
    next ? { status: next, scanLeaseUntil: null, updatedAt: new Date() } : { scanLeaseUntil: null },
  );
  return reload(em, file);
}

async function reload(em: EntityManager, file: StoredFile): Promise<StoredFile> {
  const fresh = await em.fork().findOne(StoredFileSchema, { id: file.id, workspaceId: file.workspaceId });
  if (!fresh) throw notFound(`File ${file.id} not found.`);
  return fresh;
}

/**
 * DELETE: marks the file `deletion_requested` (a file already requested or deleted is left as it
 * is) and makes sure its purge workflow runs; the blob goes when the workflow's timer fires.
 */
export async function requestFileDeletion(
  em: EntityManager,
  runtime: Pick<FilesRuntime, 'purger' | 'purgeDelayMs'>,
  principal: WorkspacePrincipal,
  id: string,
): Promise<FileView> {
  const file = await findFile(em, principal, id);
  if (file.status === 'deleted') return fileView(file);
  if (file.status !== 'deletion_requested') {
    const now = new Date();
    await em.nativeUpdate(
      StoredFileSchema,
      { id: file.id, workspaceId: file.workspaceId, status: { $nin: ['deletion_requested', 'deleted'] } },
      { status: 'deletion_requested', deletionRequestedAt: now, updatedAt: now },
    );
  }
  // Also for a file already requested: a purge whose start failed earlier is started now.
  await runtime.purger.schedulePurge({ workspaceId: file.workspaceId, fileId: file.id, name: file.name }, runtime.purgeDelayMs);
  return fileView(await reload(em, file));
}

/** The purge workflow's activity: removes the blob of a file whose deletion was requested, then marks it `deleted`. */
export async function purgeFile(
  em: EntityManager,
  blobs: BlobStore,
  ref: { workspaceId: string; fileId: string },
): Promise<{ purged: boolean }> {
  const file = await em.findOne(StoredFileSchema, { id: ref.fileId, workspaceId: ref.workspaceId });
  if (!file || file.status !== 'deletion_requested') return { purged: false };
  if (file.blobKey) await blobs.delete(file.blobKey);
  const now = new Date();
  const updated = await em.nativeUpdate(
    StoredFileSchema,
    { id: file.id, workspaceId: file.workspaceId, status: 'deletion_requested' },
    { status: 'deleted', blobKey: null, deletedAt: now, updatedAt: now },
  );
  return { purged: updated > 0 };
}

/** A ready file's content for download, or why not. */
export interface Download {
  file: FileView;
  etag: string;
  /** Opens plaintext bytes [start, end]; the first segment is authenticated before it resolves. */
  open(range: { start: number; end: number } | null): Promise<Readable>;
}

export async function openDownload(em: EntityManager, blobs: BlobStore, principal: WorkspacePrincipal, id: string): Promise<Download> {
  const file = await findFile(em, principal, id);
  if (file.status !== 'ready' || !file.blobKey) throw locked(`File is ${file.status}; only ready files can be downloaded.`);
  const blobKey = file.blobKey;
  return {
    file: fileView(file),
    etag: `"sha256-${file.sha256}"`,
    open: async (range) => primed(await blobs.read(blobKey, range ?? undefined)),
  };
}

/**
 * Waits for the stream's first chunk (or its end) before handing it over, so a blob that fails
 * authentication at its first segment is an error answer rather than a cut-off 200.
 */
async function primed(stream: Readable): Promise<Readable> {
  await new Promise<void>((resolve, reject) => {
    const done = () => {
      stream.off('error', fail);
      resolve();
    };
    const fail = (err: Error) => {
      stream.off('readable', done);
      stream.off('end', done);
      reject(err);
    };
    stream.once('readable', done);
    stream.once('end', done);
    stream.once('error', fail);
  });
  // Until the response pipes it (and listens itself), a later error must not go unheard.
  stream.on('error', () => undefined);
  return stream;
}

/**
 * The ready files of a workspace among `ids`, by id: how other areas (skills) refer to files
 * without reading their content. Unknown ids, other workspaces' files and files that are not
 * ready (pending, quarantined, being deleted) are absent from the map.
 */
export async function readyFilesByIds(em: EntityManager, workspaceId: string, ids: readonly string[]): Promise<Map<string, FileView>> {
  if (ids.length === 0) return new Map();
  const rows = await em.find(StoredFileSchema, { workspaceId, id: { $in: [...new Set(ids)] }, status: 'ready' });
  return new Map(rows.map((f) => [f.id, fileView(f)]));
}
