import { z } from 'zod';
import path from 'node:path';
import { defineArea, envBool, SECRET } from './define';
import type { ProcessesEnv } from './processes';

/** Files (services/files/) and the blob store under them (services/kernel/blobs/), with the optional clamd scan. */
export const filesArea = defineArea('files', 'Files and blobs', {
  BLOB_STORAGE: z
    .enum(['local', 's3'])
    .default('local')
    .describe('Where file contents are kept: `local` (a folder) or `s3` (S3-compatible object storage).'),
  BLOB_DIR: z
    .string()
    .optional()
    .describe(
      'Folder of the local blob backend; the API and the workers must see the same one (a shared volume). Unset: `<DATA_DIR>/blobs`.',
    ),
  BLOB_S3_ENDPOINT: z
    .string()
    .url()
    .optional()
    .describe('S3-compatible endpoint URL, e.g. a MinIO, Ceph or R2 address. Unset: AWS by region.'),
  BLOB_S3_REGION: z.string().default('us-east-1').describe('Region used for signing.'),
  BLOB_S3_BUCKET: z.string().optional().describe('Bucket (required with `BLOB_STORAGE=s3`).'),
  BLOB_S3_ACCESS_KEY_ID: z.string().optional().describe('Access key id of the bucket (required with `BLOB_STORAGE=s3`).'),
  BLOB_S3_SECRET_ACCESS_KEY: z
    .string()
    .optional()
    .meta(SECRET)
    .describe('Secret access key of the bucket (required with `BLOB_STORAGE=s3`).'),
  BLOB_S3_FORCE_PATH_STYLE: envBool(true).describe('Path-style addressing (`endpoint/bucket/key`), which most S3-compatible stores need.'),
  BLOB_ENCRYPTION_KEY: z
    .string()
    .regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$/, 'expected 32 bytes as 64 hex characters or base64')
    .optional()
    .meta(SECRET)
    .describe(
      'Dedicated 32-byte key (64 hex characters or base64) for blob encryption; unset: HKDF of `SECRET_KEY`, purpose `file-blobs`. Changing it makes existing blobs unreadable.',
    ),
  FILES_WRITES_DISABLED: envBool(false).describe(
    'Block file writes: `POST /files` answers 503 `service_unavailable` (replays of earlier creates still answer).',
  ),
  FILES_PURGE_DELAY_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 86400)
    .default(86400)
    .describe('How long after `DELETE /files/{id}` the purge workflow removes the blob and marks the file `deleted` (0 to 30 days).'),
  CLAMD_ADDRESS: z
    .string()
    .regex(/^((\[[0-9a-fA-F:]+\]|[\w.-]+):\d{1,5}|unix:.+)$/, 'expected host:port or unix:/path/to/clamd.sock')
    .optional()
    .describe(
      'ClamAV daemon, `host:port` or `unix:/path/clamd.sock`: completed files are also streamed to it (INSTREAM); its `StreamMaxLength` must allow 100M.',
    ),
  CLAMD_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(60_000)
    .describe('How long one clamd scan may take before it counts as failed (the file stays `pending_scan`).'),
});

export type FilesEnv = z.output<typeof filesArea.schema>;

export interface BlobConfig {
  backend: 'local' | 's3';
  /** Local backend: the folder blobs are written under (default `<DATA_DIR>/blobs`). */
  localDir: string;
  s3: {
    endpoint: string | undefined;
    region: string;
    bucket: string | undefined;
    accessKeyId: string | undefined;
    secretAccessKey: string | undefined;
    forcePathStyle: boolean;
  };
  /** Dedicated 32-byte key (`BLOB_ENCRYPTION_KEY`); unset: derived from SECRET_KEY for purpose `file-blobs`. */
  encryptionKey: Buffer | undefined;
}

export interface FilesConfig {
  /** Where blobs (file contents and other areas' binary data) are kept; see services/kernel/blobs/. */
  blobs: BlobConfig;
  files: {
    /** New creates answer 503 (`FILES_WRITES_DISABLED`); replays of earlier creates still answer. */
    writesDisabled: boolean;
    /** How long after a deletion request the purge workflow removes the blob. */
    purgeDelayMs: number;
    /** clamd `host:port` or `unix:/path`; unset: only the built-in scanner runs. */
    clamdAddress: string | undefined;
    clamdTimeoutMs: number;
  };
}

export function filesConfig(e: FilesEnv & Pick<ProcessesEnv, 'DATA_DIR'>): FilesConfig {
  return {
    blobs: {
      backend: e.BLOB_STORAGE,
      localDir: path.resolve(e.BLOB_DIR || path.join(e.DATA_DIR, 'blobs')),
      s3: {
        endpoint: e.BLOB_S3_ENDPOINT || undefined,
        region: e.BLOB_S3_REGION,
        bucket: e.BLOB_S3_BUCKET || undefined,
        accessKeyId: e.BLOB_S3_ACCESS_KEY_ID || undefined,
        secretAccessKey: e.BLOB_S3_SECRET_ACCESS_KEY || undefined,
        forcePathStyle: e.BLOB_S3_FORCE_PATH_STYLE,
      },
      encryptionKey: e.BLOB_ENCRYPTION_KEY
        ? Buffer.from(e.BLOB_ENCRYPTION_KEY, /^[0-9a-fA-F]{64}$/.test(e.BLOB_ENCRYPTION_KEY) ? 'hex' : 'base64')
        : undefined,
    },
    files: {
      writesDisabled: e.FILES_WRITES_DISABLED,
      purgeDelayMs: e.FILES_PURGE_DELAY_SECONDS * 1000,
      clamdAddress: e.CLAMD_ADDRESS || undefined,
      clamdTimeoutMs: e.CLAMD_TIMEOUT_MS,
    },
  };
}
