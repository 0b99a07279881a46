/**
 * The S3 blob backend against a loopback S3-compatible server (test/fakes/s3.ts: path-style,
 * SigV4 verified): uploads stream in as one PutObject of encrypted bytes, downloads fetch only
 * the segments a range needs, the purge workflow deletes the object.
 */
import { loadConfig } from '../../../services/kernel/config';
import { createBlobStore, bytesStream, type BlobStore } from '../../../services/kernel/blobs';
import { useTestStack } from '../../kit';
import { startFakeS3, type FakeS3 } from '../../fakes/s3';
import { complete, createFile, download, filesConfig, putContent, remove, sha256, uploadFile, waitForFile, type Caller } from './support';

let s3: FakeS3;
let owner: Caller;

const s3Blobs = (fake: FakeS3, secretAccessKey = fake.secretAccessKey) => ({
  ...loadConfig({}).blobs,
  backend: 's3' as const,
  s3: {
    endpoint: fake.endpoint,
    region: 'eu-test-1',
    bucket: fake.bucket,
    accessKeyId: fake.accessKeyId,
    secretAccessKey,
    forcePathStyle: true,
  },
});

beforeAll(async () => {
  s3 = await startFakeS3();
});
const stack = useTestStack(async () => ({
  config: { ...(await filesConfig(loadConfig({}), { purgeDelayMs: 200 })), blobs: s3Blobs(s3) },
}));
beforeAll(async () => {
  owner = { token: stack.ws.token };
});
afterAll(async () => {
  await s3?.close();
});

const objectKeysOf = (fileId: string) => [...s3.objects.keys()].filter((k) => k.includes(fileId));

test('upload, complete and download through the S3 backend; the object holds ciphertext only', async () => {
  const content = Buffer.alloc(300_000);
  for (let i = 0; i < content.length; i++) content[i] = (i % 251) ^ 0x5a;
  const marker = Buffer.from('PLAINTEXT-MARKER-in-the-middle');
  marker.copy(content, 150_000);

  const created = await createFile(stack.app, owner, {
    name: 'data.bin',
    mimeType: 'application/octet-stream',
    sizeBytes: content.length,
    sha256: sha256(content),
  });
  const id = created.body.data.file.id;
  const put = await putContent(stack.app, owner, id, content);
  expect(put.status).toBe(201);
  const [objectKey] = objectKeysOf(id);
  expect(objectKey).toBe(`files/${stack.ws.workspaceId}/${id}/${put.body.data.blob.key}`);
  const stored = s3.objects.get(objectKey)!;
  expect(stored.subarray(0, 4).toString('ascii')).toBe('SVB1');
  expect(stored.includes(marker)).toBe(false);
  // Header + 5 segments of 64 KiB (the last shorter), each with a 12-byte nonce and 16-byte tag.
  expect(stored.length).toBe(33 + 5 * 28 + content.length);
  const putRequests = s3.requests.filter((r) => r.method === 'PUT' && r.key === objectKey);
  expect(putRequests).toEqual([expect.objectContaining({ status: 200, bytes: stored.length })]);

  const done = await complete(stack.app, owner, id);
  expect(done.status).toBe(202);
  expect(done.body.data.file.status).toBe('ready');

  const full = await download(stack.app, owner, id);
  expect(full.status).toBe(200);
  expect(full.bytes.equals(content)).toBe(true);

  // A range inside segment 2 reads the header and exactly that segment.
  s3.requests.length = 0;
  const part = await download(stack.app, owner, id, { range: 'bytes=150000-150029' });
  expect(part.status).toBe(206);
  expect(part.bytes.equals(marker)).toBe(true);
  const segment = 65536 + 28;
  expect(s3.requests.map((r) => [r.method, r.range, r.status])).toEqual([
    ['GET', 'bytes=0-32', 206],
    ['GET', `bytes=${33 + 2 * segment}-${33 + 3 * segment - 1}`, 206],
  ]);
});

test('a tampered object is refused', async () => {
  const content = Buffer.from('integrity matters '.repeat(10));
  const file = await uploadFile(stack.app, owner, content, { mimeType: 'text/plain' });
  const [objectKey] = objectKeysOf(file.id);
  const stored = Buffer.from(s3.objects.get(objectKey)!);
  stored[stored.length - 1] ^= 0xff; // the last byte of the final segment's tag
  s3.objects.set(objectKey, stored);
  const res = await download(stack.app, owner, file.id);
  expect(res.status).toBe(500);
  expect(res.json?.error?.code).toBe('internal_error');
});

test('deletion: the purge workflow deletes the object and marks the file deleted', async () => {
  const file = await uploadFile(stack.app, owner, Buffer.from('short-lived'), { mimeType: 'text/plain' });
  expect(objectKeysOf(file.id)).toHaveLength(1);
  expect((await remove(stack.app, owner, file.id)).status).toBe(202);
  await waitForFile(stack.app, owner, file.id, (f) => f.status === 'deleted');
  expect(objectKeysOf(file.id)).toHaveLength(0);
  expect(s3.requests.some((r) => r.method === 'DELETE' && r.key.includes(file.id) && r.status === 204)).toBe(true);
});

describe('the S3 blob store on its own', () => {
  let store: BlobStore;
  beforeAll(() => {
    store = createBlobStore(s3Blobs(s3), 'another-secret-key-0123456789-0123456789');
  });

  test('bodies of unknown length are spooled, then put with their length', async () => {
    const content = Buffer.alloc(100_000, 3);
    const stat = await store.put('misc/unknown-length', bytesStream(content), { maxBytes: 1_000_000 });
    expect(stat).toEqual({ key: 'misc/unknown-length', size: content.length, sha256: sha256(content) });
    expect(await store.size('misc/unknown-length')).toBe(content.length);
    const chunks: Buffer[] = [];
    for await (const c of await store.read('misc/unknown-length', { start: 99_990, end: 99_999 })) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(content.subarray(99_990))).toBe(true);
    await store.delete('misc/unknown-length');
    expect(s3.objects.has('misc/unknown-length')).toBe(false);
    await store.delete('misc/unknown-length'); // deleting a missing blob is fine
  });

  test('the keys configured sign the requests: a wrong secret is refused by the server', async () => {
    const wrong = createBlobStore(s3Blobs(s3, 'not-the-secret'), 'another-secret-key-0123456789-0123456789');
    await expect(wrong.put('misc/denied', bytesStream('x'), { maxBytes: 10, expectedBytes: 1 })).rejects.toThrow(/signature/i);
    expect(s3.objects.has('misc/denied')).toBe(false);
  });

  test('a blob written under one key cannot be read under another storage key or encryption key', async () => {
    await store.put('misc/original', bytesStream('secret bytes'), { maxBytes: 100 });
    s3.objects.set('misc/copy', s3.objects.get('misc/original')!);
    await expect(readAll(await store.read('misc/copy'))).rejects.toThrow(/authentication/);
    const otherKey = createBlobStore(s3Blobs(s3), 'a-different-secret-key-0123456789-abcdef');
    await expect(otherKey.read('misc/original')).rejects.toThrow(/another key/);
    expect((await readAll(await store.read('misc/original'))).toString()).toBe('secret bytes');
  });
});

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
