/** Shared steps of the files tests: real HTTP calls for each step of a file's life. */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AppConfig } from '../../../services/kernel/config';
import type { z } from 'zod';
import type { createdFileSchema, fileEnvelopeSchema, fileSchema, storedBlobSchema } from '../../../api/schemas/files';
import { http, type Enveloped, type HttpResult } from '../../kit';

export type StoredFile = z.infer<typeof fileSchema>;
/** The answers of the files routes (envelope family). */
export type CreatedFileAnswer = Enveloped<z.infer<typeof createdFileSchema>>;
export type FileAnswer = Enveloped<z.infer<typeof fileEnvelopeSchema>>;
export type StoredBlobAnswer = Enveloped<z.infer<typeof storedBlobSchema>>;

export const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
export const key = () => `k-${randomBytes(8).toString('hex')}`;

/** Auth of one caller: a bearer key or a session cookie (with the mount it uses). */
export interface Caller {
  token?: string;
  cookie?: string;
  mount?: string;
}

const mountOf = (c: Caller) => c.mount ?? '/api/v1/files';
const auth = (c: Caller) => ({ ...(c.token ? { token: c.token } : {}), ...(c.cookie ? { cookie: c.cookie } : {}) });

/** Config overrides of a files test app: blobs in a fresh temp folder, a short purge delay. */
export async function filesConfig(
  base: AppConfig,
  over: { purgeDelayMs?: number; writesDisabled?: boolean; clamdAddress?: string } = {},
): Promise<Partial<AppConfig>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-files-test-'));
  return {
    blobs: { ...base.blobs, localDir: dir },
    files: {
      ...base.files,
      purgeDelayMs: over.purgeDelayMs ?? 300,
      writesDisabled: over.writesDisabled ?? false,
      clamdAddress: over.clamdAddress ?? undefined,
    },
  };
}

export async function createFile(
  app: { url: string },
  c: Caller,
  body: Record<string, unknown>,
  idemKey = key(),
): Promise<HttpResult<CreatedFileAnswer>> {
  return http<CreatedFileAnswer>(app, 'POST', mountOf(c), { ...auth(c), body, headers: { 'idempotency-key': idemKey } });
}

/** PUT raw bytes with fetch (it sends Content-Length for a Buffer body). */
export async function putContent(
  app: { url: string },
  c: Caller,
  id: string,
  content: Buffer,
  idemKey: string | null = key(),
  extra: Record<string, string> = {},
): Promise<HttpResult<StoredBlobAnswer>> {
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream', ...extra };
  if (idemKey !== null) headers['idempotency-key'] = idemKey;
  if (c.token) headers.authorization = `Bearer ${c.token}`;
  if (c.cookie) headers.cookie = c.cookie;
  const res = await fetch(`${app.url}${mountOf(c)}/${id}/content`, { method: 'PUT', headers, body: content });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: body as StoredBlobAnswer, headers: res.headers, text };
}

export async function complete(
  app: { url: string },
  c: Caller,
  id: string,
  body: Record<string, unknown> = {},
  idemKey = key(),
): Promise<HttpResult<FileAnswer>> {
  return http<FileAnswer>(app, 'POST', `${mountOf(c)}/${id}/complete`, { ...auth(c), body, headers: { 'idempotency-key': idemKey } });
}

export async function remove(app: { url: string }, c: Caller, id: string, idemKey = key()): Promise<HttpResult<FileAnswer>> {
  return http<FileAnswer>(app, 'DELETE', `${mountOf(c)}/${id}`, { ...auth(c), headers: { 'idempotency-key': idemKey } });
}

export async function getFile(app: { url: string }, c: Caller, id: string): Promise<HttpResult<FileAnswer>> {
  return http<FileAnswer>(app, 'GET', `${mountOf(c)}/${id}`, auth(c));
}

/** GET content, the body as bytes. */
export async function download(
  app: { url: string },
  c: Caller,
  id: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; bytes: Buffer; json: Partial<Enveloped<unknown>> | undefined }> {
  const h: Record<string, string> = { ...headers };
  if (c.token) h.authorization = `Bearer ${c.token}`;
  if (c.cookie) h.cookie = c.cookie;
  const res = await fetch(`${app.url}${mountOf(c)}/${id}/content`, { headers: h });
  const bytes = Buffer.from(await res.arrayBuffer());
  /** The answer when it is JSON: an error envelope on a refusal. */
  let json: Partial<Enveloped<unknown>> | undefined;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, json };
}

/** Create, upload and complete a file; returns the completed file. */
export async function uploadFile(
  app: { url: string },
  c: Caller,
  content: Buffer,
  meta: { name?: string; mimeType?: string } = {},
): Promise<StoredFile> {
  const created = await createFile(app, c, {
    name: meta.name ?? 'file.bin',
    mimeType: meta.mimeType ?? 'application/octet-stream',
    sizeBytes: content.length,
  });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
  const id = created.body.data.file.id;
  const put = await putContent(app, c, id, content);
  if (put.status !== 201) throw new Error(`put failed: ${put.status} ${put.text}`);
  const done = await complete(app, c, id);
  if (done.status !== 202) throw new Error(`complete failed: ${done.status} ${done.text}`);
  return done.body.data.file;
}

/** Polls GET until `done(file)`; fails with the last state after `timeoutMs`. */
export async function waitForFile(
  app: { url: string },
  c: Caller,
  id: string,
  done: (file: StoredFile) => boolean,
  timeoutMs = 30_000,
): Promise<StoredFile> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const res = await getFile(app, c, id);
    last = res.body;
    if (res.status === 200 && done(res.body.data.file)) return res.body.data.file;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`file ${id} did not reach the expected state: ${JSON.stringify(last)}`);
}

/** The EICAR test file, assembled so this source is not itself the signature. */
export const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$' + 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*', 'ascii');

/** The first bytes of a PE executable (what file-type calls application/x-msdownload). */
export const PE_HEAD = Buffer.concat([Buffer.from('MZ', 'ascii'), Buffer.alloc(200, 0x90)]);
/** A PNG signature and IHDR start. */
export const PNG_HEAD = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
  Buffer.alloc(64, 1),
]);
