/**
 * The file state table over real HTTP, PostgreSQL and Temporal: create → pending, PUT content
 * → pending with a blob, complete → pending_scan → ready | quarantined, DELETE →
 * deletion_requested → (purge workflow) deleted; idempotency of every mutation, the envelope
 * error codes, limits and list pagination.
 */
import { loadConfig } from '../../../services/kernel/config';
import { FileScanSchema, StoredFileSchema } from '../../../db/entities';
import { filePurgeWorkflowId } from '../../../temporal/shared';
import type { z } from 'zod';
import type { fileListSchema } from '../../../api/schemas/files';
import { addUserWithKey, http, useTestStack, type Enveloped, type HttpResult } from '../../kit';
import { request } from 'node:http';
import { filesUnder } from '../../support/workerProcess';
import {
  EICAR,
  PE_HEAD,
  PNG_HEAD,
  complete,
  createFile,
  download,
  filesConfig,
  getFile,
  key,
  putContent,
  remove,
  sha256,
  uploadFile,
  waitForFile,
  type Caller,
  type FileAnswer,
  type StoredFile,
} from './support';

type FileList = Enveloped<z.infer<typeof fileListSchema>>;
let owner: Caller;
let blobDir: string;
const META = { contractVersion: 'api-contracts.v1' };
const ZEROS = '0'.repeat(64);

const stack = useTestStack(async () => {
  const config = await filesConfig(loadConfig({}), { purgeDelayMs: 300 });
  blobDir = config.blobs!.localDir;
  return { config };
});
beforeAll(() => {
  owner = { token: stack.ws.token };
});

const filesOnDisk = () => filesUnder(blobDir);

async function fileRow(id: string) {
  return stack.app.orm.em.fork().findOneOrFail(StoredFileSchema, { id });
}

describe('create', () => {
  test('201 with a pending file, 64-zero sha256 and the upload and complete URLs', async () => {
    const res = await createFile(stack.app, owner, {
      name: '  report.pdf ',
      mimeType: 'application/pdf',
      sizeBytes: 12,
      sha256: 'AB'.repeat(32),
    });
    expect(res.status).toBe(201);
    expect(res.body.ok).toBe(true);
    expect(res.body.meta).toEqual(META);
    const { file, uploadUrl, completeUrl } = res.body.data;
    expect(file).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: 'report.pdf',
      mimeType: 'application/pdf',
      sizeBytes: 12,
      sha256: ZEROS,
      status: 'pending',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(uploadUrl).toBe(`${stack.app.url}/api/v1/files/${file.id}/content`);
    expect(completeUrl).toBe(`${stack.app.url}/api/v1/files/${file.id}/complete`);
    // The declared digest is kept (lowercase) for complete to verify, not shown before then.
    expect((await fileRow(file.id)).declaredSha256).toBe('ab'.repeat(32));
  });

  test.each([
    ['name empty after trim', { name: '   ', mimeType: 'text/plain', sizeBytes: 1 }],
    ['name over 255', { name: 'n'.repeat(256), mimeType: 'text/plain', sizeBytes: 1 }],
    ['mimeType over 255', { name: 'a', mimeType: `text/${'x'.repeat(251)}`, sizeBytes: 1 }],
    ['mimeType not a media type', { name: 'a', mimeType: 'plain text', sizeBytes: 1 }],
    ['sizeBytes over 100 MiB', { name: 'a', mimeType: 'text/plain', sizeBytes: 104857601 }],
    ['sizeBytes negative', { name: 'a', mimeType: 'text/plain', sizeBytes: -1 }],
    ['sizeBytes not an integer', { name: 'a', mimeType: 'text/plain', sizeBytes: 1.5 }],
    ['sha256 not 64 hex', { name: 'a', mimeType: 'text/plain', sizeBytes: 1, sha256: 'abc' }],
    ['unknown field', { name: 'a', mimeType: 'text/plain', sizeBytes: 1, storageKey: 'x' }],
  ])('400 validation_failed: %s', async (_what, body) => {
    const res = await createFile(stack.app, owner, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ ok: false, error: { code: 'validation_failed', message: expect.any(String) } });
  });

  test('limits are inclusive: 255-character name and mimeType, sizes 0 and 104857600', async () => {
    for (const sizeBytes of [0, 104857600]) {
      const res = await createFile(stack.app, owner, { name: 'n'.repeat(255), mimeType: `text/${'x'.repeat(250)}`, sizeBytes });
      expect(res.status).toBe(201);
    }
  });

  test('Idempotency-Key: missing 400, replay returns the stored answer, another body 409', async () => {
    const missing = await http<FileAnswer>(stack.app, 'POST', '/api/v1/files', {
      token: owner.token,
      body: { name: 'a', mimeType: 'text/plain', sizeBytes: 1 },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('idempotency_key_invalid');

    const k = key();
    const first = await createFile(stack.app, owner, { name: 'once.txt', mimeType: 'text/plain', sizeBytes: 1 }, k);
    const again = await createFile(stack.app, owner, { name: 'once.txt', mimeType: 'text/plain', sizeBytes: 1 }, k);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const other = await createFile(stack.app, owner, { name: 'twice.txt', mimeType: 'text/plain', sizeBytes: 1 }, k);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_replay_mismatch');
    const count = await stack.app.orm.em
      .fork()
      .count(StoredFileSchema, { workspaceId: stack.ws.workspaceId, name: { $in: ['once.txt', 'twice.txt'] } });
    expect(count).toBe(1);
  });

  test('401 authentication_required without a bearer; 403 authorization_failed for a personal key or a viewer', async () => {
    const none = await http<FileList>(stack.app, 'GET', '/api/v1/files');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ ok: false, error: { code: 'authentication_required', message: 'Valid bearer API key is required' } });
    const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
    const refused = await http<FileList>(stack.app, 'GET', '/api/v1/files', { token: personal.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('authorization_failed');
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    const write = await createFile(stack.app, { token: viewer.token }, { name: 'a', mimeType: 'text/plain', sizeBytes: 1 });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('authorization_failed');
    expect((await http<FileList>(stack.app, 'GET', '/api/v1/files', { token: viewer.token })).status).toBe(200);
  });
});

describe('PUT content', () => {
  test('pending → pending with a blob: 201 { blob: key, size, sha256 }; a second PUT replaces the blob', async () => {
    const created = await createFile(stack.app, owner, { name: 'a.txt', mimeType: 'text/plain', sizeBytes: 5 });
    const id = created.body.data.file.id;
    const put = await putContent(stack.app, owner, id, Buffer.from('hello'));
    expect(put.status).toBe(201);
    expect(put.body).toEqual({
      ok: true,
      data: { blob: { key: expect.stringMatching(/^blob_[0-9a-f]{32}$/), size: 5, sha256: sha256('hello') } },
      meta: META,
    });
    expect((await getFile(stack.app, owner, id)).body.data.file).toMatchObject({ status: 'pending', sha256: ZEROS });
    const row = await fileRow(id);
    expect(row.blobKey).toContain(put.body.data.blob.key);
    const stored = (await filesOnDisk()).filter((f) => f.includes(id));
    expect(stored).toHaveLength(1);

    const second = await putContent(stack.app, owner, id, Buffer.from('world'));
    expect(second.status).toBe(201);
    expect(second.body.data.blob.key).not.toBe(put.body.data.blob.key);
    const after = (await filesOnDisk()).filter((f) => f.includes(id));
    expect(after).toHaveLength(1);
    expect(after[0]).toContain(second.body.data.blob.key);
  });

  test('the stored blob is encrypted: the plaintext does not appear on disk', async () => {
    const content = Buffer.from('a very recognizable plaintext '.repeat(100));
    const created = await createFile(stack.app, owner, { name: 'p.txt', mimeType: 'text/plain', sizeBytes: content.length });
    const id = created.body.data.file.id;
    expect((await putContent(stack.app, owner, id, content)).status).toBe(201);
    const [file] = (await filesOnDisk()).filter((f) => f.includes(id));
    const { readFile } = await import('node:fs/promises');
    const raw = await readFile(file);
    expect(raw.includes(Buffer.from('recognizable'))).toBe(false);
    expect(raw.subarray(0, 4).toString('ascii')).toBe('SVB1');
    expect(raw.length).toBeGreaterThan(content.length);
  });

  test('idempotency: missing key 400 before the body is read; replay answers the stored blob; another body 409', async () => {
    const created = await createFile(stack.app, owner, { name: 'b.txt', mimeType: 'text/plain', sizeBytes: 3 });
    const id = created.body.data.file.id;
    const missing = await putContent(stack.app, owner, id, Buffer.from('abc'), null);
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('idempotency_key_invalid');
    expect((await fileRow(id)).blobKey).toBeNull();

    const k = key();
    const first = await putContent(stack.app, owner, id, Buffer.from('abc'), k);
    expect(first.status).toBe(201);
    const blobKey = (await fileRow(id)).blobKey;
    const replay = await putContent(stack.app, owner, id, Buffer.from('abc'), k);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await fileRow(id)).blobKey).toBe(blobKey);
    const mismatch = await putContent(stack.app, owner, id, Buffer.from('abd'), k);
    expect(mismatch.status).toBe(409);
    expect(mismatch.body.error.code).toBe('idempotency_replay_mismatch');
    expect((await fileRow(id)).blobKey).toBe(blobKey);
    expect((await filesOnDisk()).filter((f) => f.includes(id))).toHaveLength(1);
  });

  test('Content-Length over 100 MiB: 413 validation_failed before the body is read', async () => {
    const created = await createFile(stack.app, owner, { name: 'big.bin', mimeType: 'application/octet-stream', sizeBytes: 104857600 });
    const id = created.body.data.file.id;
    // Only the headers and a few bytes are sent: the answer cannot wait for a 100 MiB body.
    const res = await rawHttpHeadersOnly(`/api/v1/files/${id}/content`, { 'content-length': '104857601', 'idempotency-key': key() });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toEqual({ ok: false, error: { code: 'validation_failed', message: expect.stringContaining('100 MiB') } });
    expect((await fileRow(id)).blobKey).toBeNull();
  });

  test('a body without Content-Length is 400 request_malformed; a body shorter than declared is not kept', async () => {
    const created = await createFile(stack.app, owner, { name: 'c.bin', mimeType: 'application/octet-stream', sizeBytes: 1000 });
    const id = created.body.data.file.id;
    const chunked = await fetch(`${stack.app.url}/api/v1/files/${id}/content`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${owner.token}`, 'idempotency-key': key() },
      body: new ReadableStream({
        start(c) {
          c.enqueue(new Uint8Array([1, 2, 3]));
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(400);
    expect(await chunked.json()).toMatchObject({ error: { code: 'request_malformed' } });

    // Declares 1000 bytes, sends 10, and once the server is streaming them to storage, hangs up:
    // the upload fails and leaves nothing behind.
    const partial = startPartialUpload(
      `/api/v1/files/${id}/content`,
      { 'content-length': '1000', 'idempotency-key': key() },
      Buffer.alloc(10, 7),
    );
    await waitForDisk(id, (files) => files.some((f) => f.includes('.tmp-')));
    partial.abort();
    await waitForDisk(id, (files) => files.length === 0);
    expect((await fileRow(id)).blobKey).toBeNull();
  });

  test('only pending files take content: 409 conflict otherwise; unknown id 404', async () => {
    const done = await uploadFile(stack.app, owner, Buffer.from('final'), { mimeType: 'text/plain' });
    const res = await putContent(stack.app, owner, done.id, Buffer.from('again'));
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    const missing = await putContent(stack.app, owner, '00000000-0000-4000-8000-000000000000', Buffer.from('x'));
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('resource_not_found');
  });
});

/** Sends only headers (and optionally a short body) and reads the answer. */
function rawHttpHeadersOnly(pathName: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const url = new URL(stack.app.url);
  return new Promise((resolve) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'PUT',
        path: pathName,
        headers: { authorization: `Bearer ${owner.token}`, ...headers },
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', () => resolve({ status: 0, text: '' }));
    req.flushHeaders();
  });
}

/** Starts a PUT that sends `body` (less than its Content-Length) and waits; `abort` hangs up. */
function startPartialUpload(pathName: string, headers: Record<string, string>, body: Buffer): { abort(): void } {
  const url = new URL(stack.app.url);
  const req = request({
    host: url.hostname,
    port: url.port,
    method: 'PUT',
    path: pathName,
    headers: { authorization: `Bearer ${owner.token}`, ...headers },
    agent: false,
  });
  req.on('error', () => undefined);
  req.write(body);
  return { abort: () => req.destroy() };
}

async function waitForDisk(id: string, done: (files: string[]) => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  let files: string[] = [];
  while (Date.now() < deadline) {
    files = (await filesOnDisk()).filter((f) => f.includes(id));
    if (done(files)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`files of ${id} on disk never reached the expected state: ${files.join(', ')}`);
}

describe('complete and scan', () => {
  test('pending → pending_scan → ready in one call; sha256 becomes the content digest; a clean scan row is recorded', async () => {
    const content = Buffer.from('clean content');
    const created = await createFile(stack.app, owner, {
      name: 'ok.txt',
      mimeType: 'text/plain',
      sizeBytes: content.length,
      sha256: sha256(content),
    });
    const id = created.body.data.file.id;
    await putContent(stack.app, owner, id, content);
    const res = await complete(stack.app, owner, id);
    expect(res.status).toBe(202);
    expect(res.body.data.file).toMatchObject({ id, status: 'ready', sha256: sha256(content), sizeBytes: content.length });
    const scans = await stack.app.orm.em.fork().find(FileScanSchema, { fileId: id });
    expect(scans.map((s) => [s.scanner, s.verdict])).toEqual([['builtin', 'clean']]);
  });

  test('no content yet: 409 conflict, still pending', async () => {
    const created = await createFile(stack.app, owner, { name: 'empty.txt', mimeType: 'text/plain', sizeBytes: 1 });
    const res = await complete(stack.app, owner, created.body.data.file.id);
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({ code: 'conflict', message: 'No content was uploaded for this file.' });
    expect((await getFile(stack.app, owner, created.body.data.file.id)).body.data.file.status).toBe('pending');
  });

  test('size or checksum mismatch (declared at create or at complete): 409 conflict, still pending, fixable by a new PUT', async () => {
    const created = await createFile(stack.app, owner, { name: 'm.txt', mimeType: 'text/plain', sizeBytes: 4, sha256: sha256('good') });
    const id = created.body.data.file.id;
    // Longer than declared is refused by the PUT itself (nothing stored); shorter is stored, and refused by complete.
    const longer = await putContent(stack.app, owner, id, Buffer.from('bad!!'));
    expect(longer.status).toBe(413);
    expect((await fileRow(id)).blobKey).toBeNull();
    await putContent(stack.app, owner, id, Buffer.from('bad'));
    const size = await complete(stack.app, owner, id);
    expect(size.status).toBe(409);
    expect(size.body.error.code).toBe('conflict');
    expect(size.body.error.message).toMatch(/Size mismatch/);
    await putContent(stack.app, owner, id, Buffer.from('badd'));
    const digest = await complete(stack.app, owner, id);
    expect(digest.status).toBe(409);
    expect(digest.body.error.message).toMatch(/Checksum mismatch/);
    await putContent(stack.app, owner, id, Buffer.from('good'));
    const wrongAtComplete = await complete(stack.app, owner, id, { sizeBytes: 5 });
    expect(wrongAtComplete.status).toBe(409);
    const wrongShaAtComplete = await complete(stack.app, owner, id, { sha256: sha256('other') });
    expect(wrongShaAtComplete.status).toBe(409);
    expect((await getFile(stack.app, owner, id)).body.data.file).toMatchObject({ status: 'pending', sha256: ZEROS });
    const ok = await complete(stack.app, owner, id, { sizeBytes: 4, sha256: sha256('good').toUpperCase() });
    expect(ok.status).toBe(202);
    expect(ok.body.data.file.status).toBe('ready');
  });

  test('complete is idempotent: replay answers the stored file; a new key on a ready file is 409', async () => {
    const created = await createFile(stack.app, owner, { name: 'i.txt', mimeType: 'text/plain', sizeBytes: 2 });
    const id = created.body.data.file.id;
    await putContent(stack.app, owner, id, Buffer.from('hi'));
    const missing = await http<FileAnswer>(stack.app, 'POST', `/api/v1/files/${id}/complete`, { token: owner.token, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('idempotency_key_invalid');
    const k = key();
    const first = await complete(stack.app, owner, id, {}, k);
    const replay = await complete(stack.app, owner, id, {}, k);
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const mismatch = await complete(stack.app, owner, id, { sizeBytes: 2 }, k);
    expect(mismatch.status).toBe(409);
    expect(mismatch.body.error.code).toBe('idempotency_replay_mismatch');
    const again = await complete(stack.app, owner, id);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    const badBody = await complete(stack.app, owner, id, { sizeBytes: 'two' });
    expect(badBody.status).toBe(400);
    expect(badBody.body.error.code).toBe('validation_failed');
  });

  test.each([
    ['the EICAR test file', EICAR, 'text/plain', 'quarantined', 'Eicar-Test-Signature'],
    [
      'the EICAR test file with trailing whitespace',
      Buffer.concat([EICAR, Buffer.from('\r\n  ')]),
      'application/octet-stream',
      'quarantined',
      'Eicar-Test-Signature',
    ],
    ['an executable declared as image/png', PE_HEAD, 'image/png', 'quarantined', 'mime-mismatch'],
    [
      'an ELF executable declared as application/pdf',
      Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]), Buffer.alloc(100)]),
      'application/pdf',
      'quarantined',
      'mime-mismatch',
    ],
    ['a PNG declared as text/plain', PNG_HEAD, 'text/plain', 'quarantined', 'mime-mismatch'],
    ['a PNG declared as image/png', PNG_HEAD, 'image/png', 'ready', null],
    ['an executable declared as application/octet-stream', PE_HEAD, 'application/octet-stream', 'ready', null],
    ['plain text declared as image/png (type not recognizable)', Buffer.from('just text'), 'image/png', 'ready', null],
    ['an empty file', Buffer.alloc(0), 'text/plain', 'ready', null],
  ])('scan: %s', async (_what, content, mimeType, status, detail) => {
    const file = await uploadFile(stack.app, owner, content, { mimeType });
    expect(file.status).toBe(status);
    const scans = await stack.app.orm.em.fork().find(FileScanSchema, { fileId: file.id });
    expect(scans).toHaveLength(1);
    expect(scans[0]).toMatchObject({ scanner: 'builtin', verdict: status === 'ready' ? 'clean' : 'infected', blobSha256: sha256(content) });
    if (detail) expect(scans[0].detail).toContain(detail);
    else expect(scans[0].detail).toBeNull();
  });
});

describe('download', () => {
  let file: StoredFile;
  const content = Buffer.alloc(200_000);
  beforeAll(async () => {
    for (let i = 0; i < content.length; i++) content[i] = (i * 7 + (i >> 8)) & 0xff;
    file = await uploadFile(stack.app, owner, content, { name: 'Übersicht – 2026 “final”.bin' });
  });

  test('200 with the whole content and its headers', async () => {
    const res = await download(stack.app, owner, file.id);
    expect(res.status).toBe(200);
    expect(res.bytes.equals(content)).toBe(true);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-length')).toBe(String(content.length));
    expect(res.headers.get('etag')).toBe(`"sha256-${sha256(content)}"`);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="?bersicht ? 2026 ?final?.bin"; filename*=UTF-8''%C3%9Cbersicht%20%E2%80%93%202026%20%E2%80%9Cfinal%E2%80%9D.bin`,
    );
  });

  test('206 for bytes=a-b and bytes=a-, across segment boundaries, with content-range', async () => {
    for (const [range, start, end] of [
      ['bytes=0-9', 0, 9],
      ['bytes=65530-65545', 65530, 65545],
      ['bytes=131072-131072', 131072, 131072],
      ['bytes=150000-', 150000, content.length - 1],
      ['bytes=199990-999999', 199990, content.length - 1],
    ] as const) {
      const res = await download(stack.app, owner, file.id, { range });
      expect(res.status).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${content.length}`);
      expect(res.headers.get('content-length')).toBe(String(end - start + 1));
      expect(res.bytes.equals(content.subarray(start, end + 1))).toBe(true);
    }
  });

  test('another Range syntax is 400 request_malformed; an unsatisfiable one 416 validation_failed', async () => {
    for (const range of ['bytes=-500', 'bytes=0-1,5-6', 'items=0-1', 'bytes=a-b', 'bytes 0-1']) {
      const res = await download(stack.app, owner, file.id, { range });
      expect([range, res.status, res.json?.error?.code]).toEqual([range, 400, 'request_malformed']);
    }
    for (const range of ['bytes=200000-', 'bytes=300000-300001', 'bytes=10-5']) {
      const res = await download(stack.app, owner, file.id, { range });
      expect([range, res.status, res.json?.error?.code]).toEqual([range, 416, 'validation_failed']);
      expect(res.headers.get('content-range')).toBe(`bytes */${content.length}`);
    }
  });

  test('If-None-Match with the etag is 304 without a body', async () => {
    const res = await download(stack.app, owner, file.id, { 'if-none-match': `"sha256-${sha256(content)}"` });
    expect(res.status).toBe(304);
    expect(res.bytes.length).toBe(0);
    expect(res.headers.get('etag')).toBe(`"sha256-${sha256(content)}"`);
    expect((await download(stack.app, owner, file.id, { 'if-none-match': '"sha256-other"' })).status).toBe(200);
  });

  test('files that are not ready are 423 conflict (pending, quarantined)', async () => {
    const pending = await createFile(stack.app, owner, { name: 'p', mimeType: 'text/plain', sizeBytes: 1 });
    const res = await download(stack.app, owner, pending.body.data.file.id);
    expect(res.status).toBe(423);
    expect(res.json).toEqual({ ok: false, error: { code: 'conflict', message: 'File is pending; only ready files can be downloaded.' } });
    const quarantined = await uploadFile(stack.app, owner, EICAR, { mimeType: 'text/plain' });
    expect((await download(stack.app, owner, quarantined.id)).status).toBe(423);
  });

  test('a tampered blob segment is refused: at the first segment an error answer, later the stream breaks; untouched segments still read', async () => {
    const target = await uploadFile(stack.app, owner, content, { name: 'tamper.bin' });
    const row = await fileRow(target.id);
    const [onDisk] = (await filesOnDisk()).filter((f) => f.includes(target.id));
    const { open } = await import('node:fs/promises');
    // Flip one ciphertext byte inside segment 1 (the second 64 KiB of plaintext).
    const handle = await open(onDisk, 'r+');
    const at = 33 + (65536 + 28) + 12 + 100;
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, at);
    byte[0] ^= 0x01;
    await handle.write(byte, 0, 1, at);
    await handle.close();
    expect(row.blobKey).toBeTruthy();

    const inside = await download(stack.app, owner, target.id, { range: 'bytes=70000-70010' });
    expect(inside.status).toBe(500);
    expect(inside.json?.error?.code).toBe('internal_error');
    // Starting before it: the answer has begun when segment 1 fails, so the body is cut off.
    await expect(download(stack.app, owner, target.id)).rejects.toThrow();
    const before = await download(stack.app, owner, target.id, { range: 'bytes=0-65535' });
    expect(before.status).toBe(206);
    expect(before.bytes.equals(content.subarray(0, 65536))).toBe(true);
    const after = await download(stack.app, owner, target.id, { range: 'bytes=131072-' });
    expect(after.status).toBe(206);
    expect(after.bytes.equals(content.subarray(131072))).toBe(true);
  });
});

describe('list', () => {
  test('newest first by createdAt then id, cursor pages, limit default 50, bounds 1 to 100', async () => {
    const other = await addUserWithKey(stack.app, stack.ws, 'member');
    const all = (await http<FileList>(stack.app, 'GET', '/api/v1/files?limit=100', { token: other.token })).body.data.files;
    expect(all.length).toBeGreaterThan(20);
    const sorted = [...all].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
    expect(all.map((f) => f.id)).toEqual(sorted.map((f) => f.id));

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: HttpResult<FileList> = await http<FileList>(
        stack.app,
        'GET',
        `/api/v1/files?limit=7${cursor ? `&cursor=${cursor}` : ''}`,
        { token: owner.token },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.files.map((f) => f.id));
      cursor = res.body.data.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((f) => f.id));

    const byDefault = await http<FileList>(stack.app, 'GET', '/api/v1/files', { token: owner.token });
    expect(byDefault.body.data.files.length).toBe(Math.min(50, all.length));
    for (const limit of ['0', '101', 'abc', '1.5']) {
      const res = await http<FileList>(stack.app, 'GET', `/api/v1/files?limit=${limit}`, { token: owner.token });
      expect([limit, res.status, res.body.error?.code]).toEqual([limit, 400, 'request_malformed']);
    }
    for (const bad of ['not-a-cursor', Buffer.from('["x","y"]').toString('base64url')]) {
      const res = await http<FileList>(stack.app, 'GET', `/api/v1/files?cursor=${bad}`, { token: owner.token });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });
});

describe('delete', () => {
  test('any → deletion_requested (202); repeated: unchanged; the purge workflow removes the blob and moves it to deleted', async () => {
    const file = await uploadFile(stack.app, owner, Buffer.from('to be deleted'), { name: 'minutes.txt', mimeType: 'text/plain' });
    expect((await filesOnDisk()).filter((f) => f.includes(file.id))).toHaveLength(1);
    const missingKey = await http<FileAnswer>(stack.app, 'DELETE', `/api/v1/files/${file.id}`, { token: owner.token });
    expect(missingKey.status).toBe(400);
    expect(missingKey.body.error.code).toBe('idempotency_key_invalid');

    const k = key();
    const res = await remove(stack.app, owner, file.id, k);
    expect(res.status).toBe(202);
    expect(res.body.data.file).toMatchObject({ id: file.id, status: 'deletion_requested' });
    const replay = await remove(stack.app, owner, file.id, k);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(res.body);
    expect((await download(stack.app, owner, file.id)).status).toBe(423);

    const deleted = await waitForFile(stack.app, owner, file.id, (f) => f.status === 'deleted');
    expect(deleted.sha256).toBe(file.sha256);
    expect((await filesOnDisk()).filter((f) => f.includes(file.id))).toHaveLength(0);
    // The row says `deleted` as soon as the purge activity commits; the workflow closes just after.
    const purge = stack.app.deps.temporal.client.workflow.getHandle(filePurgeWorkflowId(file.id));
    await purge.result();
    const execution = await purge.describe();
    expect(execution.type).toBe('filePurgeWorkflow');
    expect(execution.status.name).toBe('COMPLETED');
    expect(execution.searchAttributes).toMatchObject({
      WorkspaceId: [stack.ws.workspaceId],
      SvcTrigger: ['file.purge'],
      SvcName: ['minutes.txt'],
    });
    const history = await stack.app.deps.temporal.client.workflow.getHandle(filePurgeWorkflowId(file.id)).fetchHistory();
    expect(history.events?.some((e) => e.timerStartedEventAttributes)).toBe(true);

    const again = await remove(stack.app, owner, file.id);
    expect(again.status).toBe(202);
    expect(again.body.data.file).toEqual(deleted);
    expect((await download(stack.app, owner, file.id)).status).toBe(423);
  });

  test('each status can be deleted: pending, pending with a blob, quarantined', async () => {
    const pending = (await createFile(stack.app, owner, { name: 'p', mimeType: 'text/plain', sizeBytes: 1 })).body.data.file;
    const withBlob = (await createFile(stack.app, owner, { name: 'b', mimeType: 'text/plain', sizeBytes: 1 })).body.data.file;
    await putContent(stack.app, owner, withBlob.id, Buffer.from('b'));
    const quarantined = await uploadFile(stack.app, owner, EICAR, { mimeType: 'text/plain' });
    for (const id of [pending.id, withBlob.id, quarantined.id]) {
      const res = await remove(stack.app, owner, id);
      expect(res.status).toBe(202);
      expect(res.body.data.file.status).toBe('deletion_requested');
      const repeated = await remove(stack.app, owner, id);
      expect(repeated.body.data.file.status).toMatch(/^(deletion_requested|deleted)$/);
    }
    for (const id of [pending.id, withBlob.id, quarantined.id]) await waitForFile(stack.app, owner, id, (f) => f.status === 'deleted');
    expect((await filesOnDisk()).filter((f) => f.includes(withBlob.id) || f.includes(quarantined.id))).toHaveLength(0);
    // A deleted file takes no content and cannot be completed.
    expect((await putContent(stack.app, owner, pending.id, Buffer.from('x'))).status).toBe(409);
    expect((await complete(stack.app, owner, pending.id)).status).toBe(409);
  });
});

describe('other workspaces', () => {
  test('every route with an id answers 404 resource_not_found, and nothing changes', async () => {
    const { createWorkspace } = await import('../../support/harness');
    const stranger = await createWorkspace(stack.app, 'Other workspace');
    const other: Caller = { token: stranger.token };
    const pending = (await createFile(stack.app, owner, { name: 'mine', mimeType: 'text/plain', sizeBytes: 4 })).body.data.file;
    await putContent(stack.app, owner, pending.id, Buffer.from('mine'));
    const ready = await uploadFile(stack.app, owner, Buffer.from('mine too'), { mimeType: 'text/plain' });
    const before = [await fileRow(pending.id), await fileRow(ready.id)];

    const attempts = [
      await getFile(stack.app, other, ready.id),
      await download(stack.app, other, ready.id).then((r) => ({ status: r.status, body: r.json })),
      await putContent(stack.app, other, pending.id, Buffer.from('evil')),
      await complete(stack.app, other, pending.id),
      await remove(stack.app, other, ready.id),
      await remove(stack.app, other, pending.id),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(404);
      expect(res.body?.error?.code).toBe('resource_not_found');
    }
    expect([await fileRow(pending.id), await fileRow(ready.id)]).toEqual(before);
    const theirs = await http<FileList>(stack.app, 'GET', '/api/v1/files', { token: other.token });
    expect(theirs.body.data.files).toEqual([]);
  });
});
