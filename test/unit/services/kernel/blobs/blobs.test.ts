/**
 * The blob store's at-rest format on the local backend: round trips at segment edges, ranged
 * reads, and every way of altering stored bytes (edit, reorder, truncate, move, header) refused.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BlobSizeError, blobStore, bytesStream, type BlobStore } from '../../../../../services/kernel/blobs';
import { localBackend } from '../../../../../services/kernel/blobs/local';
import { HEADER_BYTES, SEGMENT_OVERHEAD } from '../../../../../services/kernel/blobs/segments';

const SEG = 65536;
let dir: string;
let store: BlobStore;
const masterKey = randomBytes(32);

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svc-blobs-unit-'));
  store = blobStore(localBackend(dir), () => masterKey);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const fileOf = (key: string) => path.join(dir, ...key.split('/'));

test.each([0, 1, SEG - 1, SEG, SEG + 1, 3 * SEG, 200_001])('round trip of %i bytes, whole and by ranges', async (size) => {
  const content = randomBytes(size);
  const key = `unit/rt-${size}`;
  const stat = await store.put(key, bytesStream(content), { maxBytes: 1e9, expectedBytes: size });
  expect(stat.size).toBe(size);
  expect((await readFile(fileOf(key))).length).toBe(HEADER_BYTES + Math.max(1, Math.ceil(size / SEG)) * SEGMENT_OVERHEAD + size);
  expect(await store.size(key)).toBe(size);
  expect((await readAll(await store.read(key))).equals(content)).toBe(true);
  for (const [start, end] of [
    [0, 0],
    [size - 1, size - 1],
    [SEG - 1, SEG],
    [1, size - 2],
  ]) {
    if (start < 0 || end >= size || start > end) continue;
    expect((await readAll(await store.read(key, { start, end }))).equals(content.subarray(start, end + 1))).toBe(true);
  }
});

describe('altered blobs are refused', () => {
  const content = randomBytes(3 * SEG + 100);
  let original: Buffer;
  beforeAll(async () => {
    await store.put('unit/victim', bytesStream(content), { maxBytes: 1e9 });
    original = await readFile(fileOf('unit/victim'));
  });
  afterEach(() => writeFile(fileOf('unit/victim'), original));
  const seg = (i: number) => HEADER_BYTES + i * (SEG + SEGMENT_OVERHEAD);

  test('one flipped ciphertext bit', async () => {
    const bad = Buffer.from(original);
    bad[seg(2) + 40] ^= 0x04;
    await writeFile(fileOf('unit/victim'), bad);
    await expect(readAll(await store.read('unit/victim', { start: 2 * SEG, end: 2 * SEG + 10 }))).rejects.toThrow(
      /segment 2 failed authentication/,
    );
    // Segments before it still read.
    expect((await readAll(await store.read('unit/victim', { start: 0, end: SEG - 1 }))).equals(content.subarray(0, SEG))).toBe(true);
  });

  test('two segments swapped', async () => {
    const bad = Buffer.concat([
      original.subarray(0, seg(0)),
      original.subarray(seg(1), seg(2)),
      original.subarray(seg(0), seg(1)),
      original.subarray(seg(2)),
    ]);
    await writeFile(fileOf('unit/victim'), bad);
    await expect(readAll(await store.read('unit/victim', { start: 0, end: 10 }))).rejects.toThrow(/failed authentication/);
  });

  test('the last segment dropped (truncation at a segment boundary)', async () => {
    await writeFile(fileOf('unit/victim'), original.subarray(0, seg(3)));
    await expect(readAll(await store.read('unit/victim'))).rejects.toThrow(/failed authentication/);
  });

  test('an edited header', async () => {
    const bad = Buffer.from(original);
    bad[20] ^= 0x01; // inside the salt
    await writeFile(fileOf('unit/victim'), bad);
    await expect(readAll(await store.read('unit/victim', { start: 0, end: 0 }))).rejects.toThrow(/failed authentication/);
  });

  test('copied under another storage key', async () => {
    await writeFile(fileOf('unit/copy'), original);
    await expect(readAll(await store.read('unit/copy', { start: 0, end: 0 }))).rejects.toThrow(/failed authentication/);
  });

  test('read with another master key', async () => {
    const other = blobStore(localBackend(dir), () => randomBytes(32));
    await expect(other.read('unit/victim')).rejects.toThrow(/another key/);
  });
});

describe('size limits', () => {
  test('past maxBytes or not as long as declared: BlobSizeError and nothing stored', async () => {
    await expect(store.put('unit/limit-a', bytesStream(Buffer.alloc(11)), { maxBytes: 10 })).rejects.toMatchObject({ reason: 'too_large' });
    await expect(store.put('unit/limit-b', bytesStream(Buffer.alloc(11)), { maxBytes: 100, expectedBytes: 10 })).rejects.toBeInstanceOf(
      BlobSizeError,
    );
    await expect(store.put('unit/limit-c', bytesStream(Buffer.alloc(9)), { maxBytes: 100, expectedBytes: 10 })).rejects.toMatchObject({
      reason: 'shorter_than_declared',
    });
    const left = (await readdir(path.join(dir, 'unit'))).filter((f) => f.startsWith('limit'));
    expect(left).toEqual([]);
  });

  test('storage keys cannot leave the folder', async () => {
    await expect(store.put('../escape', bytesStream('x'), { maxBytes: 10 })).rejects.toThrow(/Invalid storage key/);
    await expect(store.put('/abs/path', bytesStream('x'), { maxBytes: 10 })).rejects.toThrow(/Invalid storage key/);
  });
});
