import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, HIDDEN, timestamps, timestamptz, workspaceScoped } from './columns';
import type { FileStatus } from '../../engine/statuses';
export type { FileStatus } from '../../engine/statuses';

/** The sha256 a file shows until it is completed. */
export const UNSET_SHA256 = '0'.repeat(64);

/**
 * A ready file as another area keeps a reference to it (command attachments, a loaded skill's
 * files): the File fields that identify its content, frozen at the time it was taken.
 */
export interface ReadyFileRef {
  id: string;
  name: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  status: 'ready';
}

export type ScanVerdict = 'clean' | 'infected' | 'error';

export const StoredFileSchema = entity('StoredFile', 'files', {
  /** Its id is a UUID. */
  ...workspaceScoped(),
  name: p.text(),
  mimeType: p.text(),
  /** Declared at create; complete verifies the blob against it. */
  sizeBytes: p.integer(),
  /** Declared at create (lowercase hex) or null; complete verifies the blob against it. */
  declaredSha256: p.string().nullable().hidden(HIDDEN),
  /** The verified digest once completed; 64 zeros before. */
  sha256: p.string(),
  status: p.string().$type<FileStatus>(),
  blobKey: p.text().nullable().hidden(HIDDEN),
  /** The public id of the stored blob (`blob.key` of PUT content); the storage key is never shown. */
  blobId: p.string().nullable().hidden(HIDDEN),
  blobSize: p.integer().nullable().hidden(HIDDEN),
  blobSha256: p.string().nullable().hidden(HIDDEN),
  /** While set and in the future, one complete call is scanning the file. */
  scanLeaseUntil: timestamptz('scan_lease_until').nullable().hidden(HIDDEN),
  createdById: p.string().hidden(HIDDEN),
  ...timestamps(),
  deletionRequestedAt: timestamptz('deletion_requested_at').nullable(),
  deletedAt: timestamptz('deleted_at').nullable(),
});
/**
 * An uploaded file. The blob columns are internal (storage key, measured size and digest of the
 * last PUT content); clients see only the file fields of the spec.
 */
export type StoredFile = InferEntity<typeof StoredFileSchema>;

export const FileScanSchema = entity('FileScan', 'file_scans', {
  ...workspaceScoped(),
  fileId: p.string(),
  /** `builtin` or `clamd`. */
  scanner: p.string(),
  verdict: p.string().$type<ScanVerdict>(),
  /** Signature or rule that matched, or the error; null when clean. */
  detail: p.text().nullable(),
  blobSha256: p.string(),
  ...createdAt(),
});
/** One scanner's verdict on one file (never serialized). */
export type FileScan = InferEntity<typeof FileScanSchema>;
