import { EntitySchema } from '@mikro-orm/core';

export const FILE_STATUSES = ['pending', 'pending_scan', 'ready', 'quarantined', 'deletion_requested', 'deleted'] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

/** The sha256 a file shows until it is completed. */
export const UNSET_SHA256 = '0'.repeat(64);

/**
 * An uploaded file. The blob columns are internal (storage key, measured size and digest of the
 * last PUT content); clients see only the file fields of the spec.
 */
export interface StoredFile {
  /** UUID. */
  id: string;
  workspaceId: string;
  name: string;
  mimeType: string;
  /** Declared at create; complete verifies the blob against it. */
  sizeBytes: number;
  /** Declared at create (lowercase hex) or null; complete verifies the blob against it. */
  declaredSha256: string | null;
  /** The verified digest once completed; 64 zeros before. */
  sha256: string;
  status: FileStatus;
  blobKey: string | null;
  /** The public id of the stored blob (`blob.key` of PUT content); the storage key is never shown. */
  blobId: string | null;
  blobSize: number | null;
  blobSha256: string | null;
  /** While set and in the future, one complete call is scanning the file. */
  scanLeaseUntil: Date | null;
  createdById: string;
  createdAt: Date;
  updatedAt: Date;
  deletionRequestedAt: Date | null;
  deletedAt: Date | null;
}

export type ScanVerdict = 'clean' | 'infected' | 'error';

/** One scanner's verdict on one file (never serialized). */
export interface FileScan {
  id: string;
  workspaceId: string;
  fileId: string;
  /** `builtin` or `clamd`. */
  scanner: string;
  verdict: ScanVerdict;
  /** Signature or rule that matched, or the error; null when clean. */
  detail: string | null;
  blobSha256: string;
  createdAt: Date;
}

export const StoredFileSchema = new EntitySchema<StoredFile>({
  name: 'StoredFile',
  tableName: 'files',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    name: { type: 'text' },
    mimeType: { type: 'text', fieldName: 'mime_type' },
    sizeBytes: { type: 'integer', fieldName: 'size_bytes' },
    declaredSha256: { type: 'string', fieldName: 'declared_sha256', nullable: true, hidden: true },
    sha256: { type: 'string' },
    status: { type: 'string' },
    blobKey: { type: 'text', fieldName: 'blob_key', nullable: true, hidden: true },
    blobId: { type: 'string', fieldName: 'blob_id', nullable: true, hidden: true },
    blobSize: { type: 'integer', fieldName: 'blob_size', nullable: true, hidden: true },
    blobSha256: { type: 'string', fieldName: 'blob_sha256', nullable: true, hidden: true },
    scanLeaseUntil: { type: 'Date', fieldName: 'scan_lease_until', columnType: 'timestamptz', nullable: true, hidden: true },
    createdById: { type: 'string', fieldName: 'created_by_id', hidden: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
    deletionRequestedAt: { type: 'Date', fieldName: 'deletion_requested_at', columnType: 'timestamptz', nullable: true },
    deletedAt: { type: 'Date', fieldName: 'deleted_at', columnType: 'timestamptz', nullable: true },
  },
});

export const FileScanSchema = new EntitySchema<FileScan>({
  name: 'FileScan',
  tableName: 'file_scans',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    fileId: { type: 'string', fieldName: 'file_id' },
    scanner: { type: 'string' },
    verdict: { type: 'string' },
    detail: { type: 'text', nullable: true },
    blobSha256: { type: 'string', fieldName: 'blob_sha256' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
  },
});
