import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { BlobNotFoundError, checkStorageKey, type ObjectBackend } from './backend';
import { lazyModule } from '../lazyModule';

/** The S3 SDK, loaded with the first blob operation (services/kernel/lazyModule.ts). */
const loadS3Sdk = lazyModule(() => import('@aws-sdk/client-s3'));

export interface S3BackendOptions {
  /** e.g. `https://s3.eu-central-1.amazonaws.com` or a MinIO / R2 / Ceph address; unset: AWS by region. */
  endpoint: string | undefined;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Path-style addressing (`endpoint/bucket/key`), which most S3-compatible stores need. */
  forcePathStyle: boolean;
}

/**
 * Blobs in an S3-compatible bucket: PutObject, GetObject with Range, DeleteObject. Uploads
 * stream with a known Content-Length; a body of unknown length is first spooled to a
 * temporary file (memory stays flat either way). The SDK's optional CRC checksums are left
 * off (`WHEN_REQUIRED`) because many S3-compatible stores reject aws-chunked uploads; the
 * blobs carry their own authentication (segments.ts).
 */
export function s3Backend(opts: S3BackendOptions): ObjectBackend {
  const clientOptions: S3ClientConfig = {
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    region: opts.region,
    forcePathStyle: opts.forcePathStyle,
    credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  };
  // The client is made with the first operation: a deployment on S3 that serves no file yet loads no SDK.
  const sdk = lazyModule(async () => {
    const { S3Client, PutObjectCommand, GetObjectCommand, DeleteObjectCommand } = await loadS3Sdk();
    return { client: new S3Client(clientOptions), PutObjectCommand, GetObjectCommand, DeleteObjectCommand };
  });
  const Bucket = opts.bucket;

  async function putKnownLength(key: string, body: Readable, length: number): Promise<void> {
    const { client, PutObjectCommand } = await sdk();
    await client.send(
      new PutObjectCommand({ Bucket, Key: key, Body: body, ContentLength: length, ContentType: 'application/octet-stream' }),
    );
  }

  return {
    kind: 's3',
    async put(key, body, length) {
      checkStorageKey(key);
      if (length !== null) return putKnownLength(key, body, length);
      const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-blob-'));
      try {
        const spool = path.join(dir, 'spool');
        await pipeline(body, createWriteStream(spool));
        await putKnownLength(key, createReadStream(spool), (await stat(spool)).size);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    async getRange(key, start, end) {
      checkStorageKey(key);
      const { client, GetObjectCommand } = await sdk();
      try {
        const res = await client.send(new GetObjectCommand({ Bucket, Key: key, Range: `bytes=${start}-${end}` }));
        const total = /\/(\d+)$/.exec(res.ContentRange ?? '')?.[1];
        const totalSize = total !== undefined ? Number(total) : Number(res.ContentLength ?? 0);
        return { body: res.Body as Readable, totalSize };
      } catch (err) {
        const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
        if (e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) throw new BlobNotFoundError(key);
        throw err;
      }
    },
    async delete(key) {
      checkStorageKey(key);
      const { client, DeleteObjectCommand } = await sdk();
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
  };
}
