import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/**
 * The at-rest format of every blob: a fixed header, then the plaintext cut into fixed-size
 * segments, each sealed on its own with AES-256-GCM, so a range read fetches and decrypts only
 * the segments it touches.
 *
 *   header  = magic "SVB1" | version u8 (1) | segment size u32 BE | key id (8) | salt (16)   (33 bytes)
 *   segment = nonce (12, random) | ciphertext (≤ segment size) | tag (16)
 *
 * Every segment is encrypted with a per-blob key, HKDF-SHA256(master key, salt, "svc-blob-segments"),
 * and authenticates as associated data: the header, the blob's storage key, the segment index
 * (u64) and a final flag. So a segment cannot be altered, moved to another position or another
 * blob, the header cannot be edited, and dropping trailing segments is detected (the new last
 * segment was not sealed as final). A blob always has at least one segment (an empty final one
 * for empty content). The key id (first 8 bytes of SHA-256 over the master key) tells a wrong
 * key apart from tampering.
 */
export const MAGIC = Buffer.from('SVB1', 'ascii');
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 33;
export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;
export const SEGMENT_OVERHEAD = NONCE_BYTES + TAG_BYTES;
export const DEFAULT_SEGMENT_BYTES = 64 * 1024;

/** A stored blob failed authentication: tampered, truncated, or encrypted under another key. */
export class BlobIntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BlobIntegrityError';
  }
}

export interface BlobHeader {
  segmentBytes: number;
  keyId: Buffer;
  salt: Buffer;
  raw: Buffer;
}

export function keyIdOf(masterKey: Buffer): Buffer {
  return createHash('sha256').update('svc-blob-key-id\0').update(masterKey).digest().subarray(0, 8);
}

export function newHeader(masterKey: Buffer, segmentBytes = DEFAULT_SEGMENT_BYTES): BlobHeader {
  const raw = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(raw, 0);
  raw.writeUInt8(FORMAT_VERSION, 4);
  raw.writeUInt32BE(segmentBytes, 5);
  const keyId = keyIdOf(masterKey);
  keyId.copy(raw, 9);
  const salt = randomBytes(16);
  salt.copy(raw, 17);
  return { segmentBytes, keyId, salt, raw };
}

export function parseHeader(raw: Buffer, masterKey: Buffer): BlobHeader {
  if (raw.length < HEADER_BYTES || !raw.subarray(0, 4).equals(MAGIC)) throw new BlobIntegrityError('Blob header is missing or damaged.');
  if (raw.readUInt8(4) !== FORMAT_VERSION) throw new BlobIntegrityError(`Unsupported blob format version ${raw.readUInt8(4)}.`);
  const segmentBytes = raw.readUInt32BE(5);
  if (segmentBytes < 1024 || segmentBytes > 16 * 1024 * 1024) throw new BlobIntegrityError('Blob header names an impossible segment size.');
  const keyId = raw.subarray(9, 17);
  if (!keyId.equals(keyIdOf(masterKey))) throw new BlobIntegrityError('Blob was encrypted with another key.');
  return {
    segmentBytes,
    keyId: Buffer.from(keyId),
    salt: Buffer.from(raw.subarray(17, 33)),
    raw: Buffer.from(raw.subarray(0, HEADER_BYTES)),
  };
}

function blobKey(masterKey: Buffer, header: BlobHeader): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, header.salt, Buffer.from('svc-blob-segments', 'utf8'), 32));
}

function associatedData(header: BlobHeader, storageKey: string, index: number, final: boolean): Buffer {
  const name = Buffer.from(storageKey, 'utf8');
  const tail = Buffer.alloc(4 + 8 + 1);
  tail.writeUInt32BE(name.length, 0);
  tail.writeBigUInt64BE(BigInt(index), 4);
  tail.writeUInt8(final ? 1 : 0, 12);
  return Buffer.concat([header.raw, tail.subarray(0, 4), name, tail.subarray(4)]);
}

/** Stored size of a blob whose plaintext is `plainBytes` long. */
export function encryptedSize(plainBytes: number, segmentBytes = DEFAULT_SEGMENT_BYTES): number {
  const segments = Math.max(1, Math.ceil(plainBytes / segmentBytes));
  return HEADER_BYTES + segments * SEGMENT_OVERHEAD + plainBytes;
}

/** Segment count and plaintext size of a stored object of `storedBytes`. */
export function layoutOf(storedBytes: number, segmentBytes: number): { segments: number; plainBytes: number } {
  const body = storedBytes - HEADER_BYTES;
  if (body < SEGMENT_OVERHEAD) throw new BlobIntegrityError('Blob is truncated.');
  const segments = Math.max(1, Math.ceil(body / (segmentBytes + SEGMENT_OVERHEAD)));
  const plainBytes = body - segments * SEGMENT_OVERHEAD;
  if (plainBytes < 0 || plainBytes > segments * segmentBytes) throw new BlobIntegrityError('Blob is truncated.');
  return { segments, plainBytes };
}

/** Offset of segment `index` in the stored object. */
export function segmentOffset(index: number, segmentBytes: number): number {
  return HEADER_BYTES + index * (segmentBytes + SEGMENT_OVERHEAD);
}

/** Collects chunks without copying until `take(n)` needs exactly n bytes. */
class ByteQueue {
  private chunks: Buffer[] = [];
  length = 0;
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }
  take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const head = this.chunks[0];
      if (head === undefined) throw new RangeError(`take(${n}) with only ${filled} bytes buffered`);
      const need = n - filled;
      if (head.length <= need) {
        head.copy(out, filled);
        filled += head.length;
        this.chunks.shift();
      } else {
        head.copy(out, filled, 0, need);
        this.chunks[0] = head.subarray(need);
        filled += need;
      }
    }
    this.length -= n;
    return out;
  }
}

/**
 * Plaintext in, stored format out (header first). A segment is sealed only once a byte past it
 * has arrived, so the last one, whatever its size, is the one sealed as final.
 */
export class EncryptSegments extends Transform {
  private readonly queue = new ByteQueue();
  private readonly key: Buffer;
  private index = 0;

  constructor(
    masterKey: Buffer,
    private readonly storageKey: string,
    private readonly header: BlobHeader = newHeader(masterKey),
  ) {
    super();
    this.key = blobKey(masterKey, header);
    this.push(header.raw);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.queue.push(chunk);
    while (this.queue.length > this.header.segmentBytes) this.push(this.seal(this.queue.take(this.header.segmentBytes), false));
    done();
  }

  override _flush(done: TransformCallback): void {
    this.push(this.seal(this.queue.take(this.queue.length), true));
    done();
  }

  private seal(plain: Buffer, final: boolean): Buffer {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(associatedData(this.header, this.storageKey, this.index++, final));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([nonce, body, cipher.getAuthTag()]);
  }
}

/**
 * Stored segments `first..` in (starting at a segment boundary), plaintext bytes
 * [skip, skip + length) of them out. Each segment is authenticated before any of its bytes
 * is passed on; a failure errors the stream with BlobIntegrityError.
 */
export class DecryptSegments extends Transform {
  private readonly queue = new ByteQueue();
  private readonly key: Buffer;
  private index: number;
  private toSkip: number;
  private remaining: number;

  constructor(
    masterKey: Buffer,
    private readonly storageKey: string,
    private readonly header: BlobHeader,
    private readonly totalSegments: number,
    range: { firstSegment: number; skip: number; length: number },
  ) {
    super();
    this.key = blobKey(masterKey, header);
    this.index = range.firstSegment;
    this.toSkip = range.skip;
    this.remaining = range.length;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.queue.push(chunk);
    const full = this.header.segmentBytes + SEGMENT_OVERHEAD;
    try {
      // The final segment may be shorter: it is opened in _flush.
      while (this.queue.length >= full && this.index < this.totalSegments - 1) this.emit_(this.open(this.queue.take(full), false));
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      if (this.queue.length > 0) {
        if (this.index !== this.totalSegments - 1) throw new BlobIntegrityError('Blob is truncated.');
        this.emit_(this.open(this.queue.take(this.queue.length), true));
      }
      if (this.remaining > 0) throw new BlobIntegrityError('Blob is truncated.');
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  private open(sealed: Buffer, final: boolean): Buffer {
    if (sealed.length < SEGMENT_OVERHEAD) throw new BlobIntegrityError('Blob is truncated.');
    const nonce = sealed.subarray(0, NONCE_BYTES);
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce);
    decipher.setAAD(associatedData(this.header, this.storageKey, this.index, final));
    decipher.setAuthTag(tag);
    try {
      const plain = Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
      this.index++;
      return plain;
    } catch {
      throw new BlobIntegrityError(`Blob segment ${this.index} failed authentication.`);
    }
  }

  private emit_(plain: Buffer): void {
    let part = plain;
    if (this.toSkip > 0) {
      const skip = Math.min(this.toSkip, part.length);
      part = part.subarray(skip);
      this.toSkip -= skip;
    }
    if (part.length > this.remaining) part = part.subarray(0, this.remaining);
    this.remaining -= part.length;
    if (part.length > 0) this.push(part);
  }
}
