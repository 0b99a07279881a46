/** Shared steps of the knowledge tests: real HTTP calls, fixture files, polling. */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type AppConfig } from '../../../services/kernel/config';
import type { z } from 'zod';
import type {
  connectorEnvelope,
  knowledgeBaseSchema,
  knowledgeDocumentEnvelope,
  knowledgeDocumentSchema,
  searchResponseSchema,
  syncRunEnvelope,
} from '../../../api/schemas/knowledge';
import { http, type CredentialEnvelope, type Enveloped, type HttpResult, type Refusable, type TestApp } from '../../kit';

export type KnowledgeBase = z.infer<typeof knowledgeBaseSchema>;
export type KnowledgeDocument = z.infer<typeof knowledgeDocumentSchema>;
/** Upload and GET of a document: `{ document }`, or the refusal. */
export type DocumentAnswer = Refusable<z.infer<typeof knowledgeDocumentEnvelope>>;
export type SearchAnswer = Refusable<z.infer<typeof searchResponseSchema>>;
export type Connector = z.infer<typeof connectorEnvelope>['connector'];
export type SyncRun = z.infer<typeof syncRunEnvelope>['run'];
export type ConnectorAnswer = Enveloped<z.infer<typeof connectorEnvelope>>;
export type SyncRunAnswer = Enveloped<z.infer<typeof syncRunEnvelope>>;

export const key = () => `k-${randomBytes(8).toString('hex')}`;

/** Config overrides of a knowledge test app: blobs in a fresh folder; embeddings when a URL is given. */
export async function knowledgeConfig(
  over: { embeddingsUrl?: string; embeddingsKey?: string; leaseMs?: number; certified?: string[] } = {},
): Promise<Partial<AppConfig>> {
  const base = loadConfig({});
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-knowledge-test-'));
  return {
    blobs: { ...base.blobs, localDir: dir },
    knowledge: {
      ...base.knowledge,
      embeddings: {
        ...base.knowledge.embeddings,
        baseUrl: over.embeddingsUrl,
        apiKey: over.embeddingsKey,
        model: 'fake-embed-1',
        timeoutMs: 10_000,
        maxRetries: 3,
      },
      syncLeaseMs: over.leaseMs ?? base.knowledge.syncLeaseMs,
      certifiedProviders: over.certified ?? base.knowledge.certifiedProviders,
    },
  };
}

export async function createBase(app: { url: string }, token: string, body: Record<string, unknown> = {}): Promise<KnowledgeBase> {
  const res = await http<{ knowledgeBase: KnowledgeBase }>(app, 'POST', '/api/v1/knowledge-bases', {
    token,
    body: { name: `KB ${randomBytes(3).toString('hex')}`, ...body },
  });
  if (res.status !== 201) throw new Error(`create base failed: ${res.status} ${res.text}`);
  return res.body.knowledgeBase;
}

/** POST /documents as multipart with fetch's FormData. */
export async function upload(
  app: { url: string },
  token: string,
  fields: Record<string, string>,
  file?: { name: string; type: string; content: Buffer | string },
  headers: Record<string, string> = {},
): Promise<HttpResult<DocumentAnswer>> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file)
    form.append(
      'file',
      new Blob([typeof file.content === 'string' ? file.content : new Uint8Array(file.content)], { type: file.type }),
      file.name,
    );
  const res = await fetch(`${app.url}/api/v1/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...headers },
    body: form,
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: body as DocumentAnswer, headers: res.headers, text };
}

export async function uploadDocument(
  app: { url: string },
  token: string,
  knowledgeBaseId: string,
  file: { name: string; type: string; content: Buffer | string },
): Promise<KnowledgeDocument> {
  const res = await upload(app, token, { knowledgeBaseId }, file);
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  return res.body.document;
}

export async function getDocument(app: { url: string }, token: string, kbId: string, id: string): Promise<HttpResult<DocumentAnswer>> {
  return http<DocumentAnswer>(app, 'GET', `/api/v1/knowledge-bases/${kbId}/documents/${id}`, { token });
}

/** Polls a document until its indexing is ready or failed (or `done` holds). */
export async function waitForDocument(
  app: { url: string },
  token: string,
  kbId: string,
  id: string,
  done: (d: KnowledgeDocument) => boolean = (d) => d.indexingStatus === 'ready' || d.indexingStatus === 'failed',
  timeoutMs = 45_000,
): Promise<KnowledgeDocument> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const res = await getDocument(app, token, kbId, id);
    last = res.body;
    if (res.status === 200 && done(res.body.document)) return res.body.document;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`document ${id} did not reach the expected state: ${JSON.stringify(last)}`);
}

export async function search(app: { url: string }, token: string, body: Record<string, unknown>): Promise<HttpResult<SearchAnswer>> {
  return http<SearchAnswer>(app, 'POST', '/api/v1/knowledge-bases/search', { token, body });
}

/** A minimal valid PDF (one page, Helvetica) showing `lines`. */
export function makePdf(lines: string[]): Buffer {
  const esc = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);
  const content = `BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((l) => `(${esc(l)}) Tj T*`).join(' ')} ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(content)} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

export { filesUnder, killWorker, spawnWorker } from '../../support/workerProcess';

/** A workspace credential for connectors, through `POST /api/v1/credentials`. */
export async function createCredential(
  app: { url: string; orm: TestApp['orm'] },
  token: string,
  _workspaceId: string,
  type: string,
  value: Record<string, unknown>,
): Promise<string> {
  const res = await http<CredentialEnvelope>(app, 'POST', '/api/v1/credentials', {
    token,
    body: { name: `cred-${randomBytes(4).toString('hex')}`, type, value },
  });
  if (res.status !== 201) throw new Error(`credential create failed: ${res.status} ${res.text}`);
  return res.body.credential.id;
}

export const idem = () => ({ 'idempotency-key': key() });

export async function createConnector(
  app: { url: string },
  token: string,
  body: Record<string, unknown>,
  idemKey = key(),
): Promise<HttpResult<ConnectorAnswer>> {
  return http<ConnectorAnswer>(app, 'POST', '/api/v1/knowledge-connectors', { token, body, headers: { 'idempotency-key': idemKey } });
}

export async function startRun(
  app: { url: string },
  token: string,
  connectorId: string,
  body: unknown = { options: {} },
  idemKey = key(),
): Promise<HttpResult<SyncRunAnswer>> {
  return http<SyncRunAnswer>(app, 'POST', `/api/v1/knowledge-connectors/${connectorId}/runs`, {
    token,
    body,
    headers: { 'idempotency-key': idemKey },
  });
}

export async function getRun(app: { url: string }, token: string, connectorId: string, runId: string): Promise<SyncRun | undefined> {
  const res = await http<SyncRunAnswer>(app, 'GET', `/api/v1/knowledge-connectors/${connectorId}/runs/${runId}`, { token });
  return res.body?.data?.run;
}

export async function getConnector(app: { url: string }, token: string, connectorId: string): Promise<Connector | undefined> {
  return (await http<ConnectorAnswer>(app, 'GET', `/api/v1/knowledge-connectors/${connectorId}`, { token })).body?.data?.connector;
}

/** Polls until `check()` returns a truthy value; fails after `timeoutMs` with `what`. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The per-source state of the cursor a sync run ended at (opaque JSON in the contract; each provider keeps its own). */
export function cursorState(run: SyncRun | undefined): Record<string, Record<string, unknown>> {
  const cursor = run?.cursorAfter;
  if (typeof cursor !== 'object' || cursor === null || !('state' in cursor)) throw new Error(`no cursor state in ${JSON.stringify(run)}`);
  return (cursor as { state: Record<string, Record<string, unknown>> }).state;
}

/** `getRun` of a run that must exist: fails the test when the GET answers none. */
export async function requireRun(...args: Parameters<typeof getRun>): Promise<SyncRun> {
  const run = await getRun(...args);
  if (!run) throw new Error(`sync run ${args[3]} not found`);
  return run;
}
