/**
 * Blobs: binary content of any area (file uploads today; knowledge documents, skill files and
 * research snapshots later), streamed in and out, encrypted at rest in authenticated segments
 * (segments.ts), kept by one of two backends (local.ts, s3.ts). Callers name a storage key and
 * never see the encryption or the backend; storage keys are internal and never shown to clients.
 */
import { createHash } from 'node:crypto';
import { PassThrough, Readable, Transform, Writable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobConfig } from '../config';
import { ReasonedError, unavailable } from '../errors';
import { deriveKey } from '../secrets';
import type { ObjectBackend } from './backend';
import { localBackend } from './local';
import { s3Backend } from './s3';
import { DecryptSegments, EncryptSegments, HEADER_BYTES, encryptedSize, layoutOf, parseHeader, segmentOffset } from './segments';

export { BlobNotFoundError, type ObjectBackend } from './backend';
export { BlobIntegrityError } from './segments';

/** What a stored blob is: its storage key, plaintext size and plaintext SHA-256 (hex). */
export interface BlobStat {
  key: string;
  size: number;
  sha256: string;
}

/** The stream was longer than allowed, or not as long as announced. Nothing was stored. */
export class BlobSizeError extends ReasonedError<'too_large' | 'longer_than_declared' | 'shorter_than_declared'> {}

export interface PutOptions {
  /** Refuse (BlobSizeError `too_large`) past this many bytes. */
  maxBytes: number;
  /** The exact length announced (e.g. Content-Length): more or fewer bytes is a BlobSizeError. */
  expectedBytes?: number;
}

export interface BlobStore {
  readonly backend: ObjectBackend['kind'];
  /** Streams `source` in under `key`, hashing and encrypting as it goes; nothing is buffered whole. */
  put(key: string, source: Readable, opts: PutOptions): Promise<BlobStat>;
  /**
   * Plaintext bytes [start, end] (inclusive; the whole blob without a range), decrypting only
   * the segments they touch. The stream errors with BlobIntegrityError at the first segment
   * that fails authentication, before any of its bytes are passed on.
   */
  read(key: string, range?: { start: number; end: number }): Promise<Readable>;
  /** Plaintext size, from the stored object's size (reads the header only). */
  size(key: string): Promise<number>;
  /** Removes the blob; a missing one is not an error. */
  delete(key: string): Promise<void>;
}

/** Size and SHA-256 of a stream (without storing it), with the same limits as `put`. */
export async function measureStream(source: Readable, opts: PutOptions): Promise<{ size: number; sha256: string }> {
  const meter = new Meter(opts);
  await pipeline(source, meter, new Writable({ write: (_c, _e, done) => done() }));
  return { size: meter.size, sha256: meter.digest() };
}

/** Counts, hashes and bounds the bytes flowing through it. */
class Meter extends Transform {
  size = 0;
  private readonly hash = createHash('sha256');
  constructor(private readonly opts: PutOptions) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.opts.expectedBytes !== undefined && this.size > this.opts.expectedBytes) {
      return done(new BlobSizeError('longer_than_declared', `The body is longer than the ${this.opts.expectedBytes} bytes declared.`));
    }
    if (this.size > this.opts.maxBytes) return done(new BlobSizeError('too_large', `The body is larger than ${this.opts.maxBytes} bytes.`));
    this.hash.update(chunk);
    done(null, chunk);
  }
  override _flush(done: TransformCallback): void {
    if (this.opts.expectedBytes !== undefined && this.size < this.opts.expectedBytes) {
      return done(
        new BlobSizeError('shorter_than_declared', `The body ended after ${this.size} of the ${this.opts.expectedBytes} bytes declared.`),
      );
    }
    done();
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/** A blob store over `backend`, encrypting with the key `masterKey()` returns (called when first needed). */
export function blobStore(backend: ObjectBackend, masterKey: () => Buffer): BlobStore {
  async function readHeader(key: string) {
    const { body, totalSize } = await backend.getRange(key, 0, HEADER_BYTES - 1);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    const header = parseHeader(Buffer.concat(chunks), masterKey());
    return { header, ...layoutOf(totalSize, header.segmentBytes) };
  }

  return {
    backend: backend.kind,

    async put(key, source, opts) {
      const meter = new Meter(opts);
      const encrypt = new EncryptSegments(masterKey(), key);
      const flowing = pipeline(source, meter, encrypt);
      // Observed below; without this an early failure would be an unhandled rejection.
      const streamFailure = flowing.then(
        () => null,
        (err: Error) => err,
      );
      try {
        await backend.put(key, encrypt, opts.expectedBytes !== undefined ? encryptedSize(opts.expectedBytes) : null);
      } catch (err) {
        encrypt.destroy(err as Error);
        await backend.delete(key).catch(() => undefined);
        throw (await streamFailure) ?? err;
      }
      const failed = await streamFailure;
      if (failed) {
        await backend.delete(key).catch(() => undefined);
        throw failed;
      }
      return { key, size: meter.size, sha256: meter.digest() };
    },

    async read(key, range) {
      const { header, segments, plainBytes } = await readHeader(key);
      const start = range?.start ?? 0;
      const end = range?.end ?? plainBytes - 1;
      if (start < 0 || (plainBytes > 0 && (start > end || end >= plainBytes)))
        throw new RangeError(`Range ${start}-${end} is outside the blob (${plainBytes} bytes).`);
      const length = plainBytes === 0 ? 0 : end - start + 1;
      // An empty read still authenticates the one (empty, final) segment.
      const first = plainBytes === 0 ? 0 : Math.floor(start / header.segmentBytes);
      const last = plainBytes === 0 ? 0 : Math.floor(end / header.segmentBytes);
      const { body } = await backend.getRange(
        key,
        segmentOffset(first, header.segmentBytes),
        segmentOffset(last + 1, header.segmentBytes) - 1,
      );
      const decrypt = new DecryptSegments(masterKey(), key, header, segments, {
        firstSegment: first,
        skip: start - first * header.segmentBytes,
        length,
      });
      const out = new PassThrough();
      pipeline(body, decrypt, out).catch((err: Error) => out.destroy(err));
      return out;
    },

    async size(key) {
      return (await readHeader(key)).plainBytes;
    },

    delete: (key) => backend.delete(key),
  };
}

/** The master key of blob encryption: BLOB_ENCRYPTION_KEY, else derived from SECRET_KEY (purpose `file-blobs`). */
export function blobMasterKey(config: BlobConfig, secretKey: string | undefined): () => Buffer {
  let key: Buffer | undefined = config.encryptionKey;
  return () => {
    if (key) return key;
    if (!secretKey) throw unavailable('File storage is unavailable: neither BLOB_ENCRYPTION_KEY nor SECRET_KEY is configured.');
    key = deriveKey(secretKey, 'file-blobs');
    return key;
  };
}

/** The blob store the configuration names: local folder (default) or S3-compatible bucket. */
export function createBlobStore(config: BlobConfig, secretKey: string | undefined): BlobStore {
  return blobStore(createBackend(config), blobMasterKey(config, secretKey));
}

function createBackend(config: BlobConfig): ObjectBackend {
  if (config.backend === 'local') return localBackend(config.localDir);
  const { endpoint, region, bucket, accessKeyId, secretAccessKey, forcePathStyle } = config.s3;
  if (!bucket || !accessKeyId || !secretAccessKey)
    throw new Error('BLOB_STORAGE=s3 needs BLOB_S3_BUCKET, BLOB_S3_ACCESS_KEY_ID and BLOB_S3_SECRET_ACCESS_KEY.');
  return s3Backend({ endpoint, region, bucket, accessKeyId, secretAccessKey, forcePathStyle });
}

/** A readable of `bytes` (for small in-memory blobs). */
export const bytesStream = (bytes: Buffer | string): Readable => Readable.from([Buffer.from(bytes)]);
