/**
 * Knowledge bases and documents over real HTTP, PostgreSQL and Temporal: base CRUD with chunking
 * settings and trash, multipart uploads of each supported format indexed by a Temporal workflow
 * (pending → processing → ready, or failed), list/get/delete, limits, and another workspace's ids.
 */
import type { z } from 'zod';
import type {
  knowledgeBaseEnvelope,
  knowledgeBaseList,
  knowledgeDocumentDeleted,
  knowledgeDocumentList,
} from '../../../api/schemas/knowledge';
import { createWorkspace, useTestStack, type Refusable, type WorkspaceFixture } from '../../kit';
import { knowledgeIndexDocumentWorkflowId } from '../../../temporal/shared';
import { createBase, filesUnder, getDocument, knowledgeConfig, makePdf, upload, uploadDocument, waitForDocument } from './support';

type KbAnswer = Refusable<z.infer<typeof knowledgeBaseEnvelope>>;
type KbList = z.infer<typeof knowledgeBaseList>;
type DocumentList = Refusable<z.infer<typeof knowledgeDocumentList>>;
type DocumentDeleted = z.infer<typeof knowledgeDocumentDeleted>;

let other: WorkspaceFixture;
let blobDir: string;
let token: string;

const stack = useTestStack(async () => {
  const config = await knowledgeConfig();
  blobDir = config.blobs!.localDir;
  return { config };
});
beforeAll(async () => {
  token = stack.ws.token;
  other = await createWorkspace(stack.app, 'Other');
});

async function chunksOf(
  documentId: string,
): Promise<Array<{ ordinal: number; content: string; heading: string | null; token_count: number; char_start: number; char_end: number }>> {
  return stack.app.orm.em
    .fork()
    .getConnection()
    .execute(
      `select ordinal, content, heading, token_count, char_start, char_end from knowledge_chunks where document_id = ? order by ordinal`,
      [documentId],
    );
}

const blobFiles = () => filesUnder(blobDir);

describe('knowledge bases', () => {
  test('create with defaults, list, get; chunking validated', async () => {
    const res = await stack.api.post<KbAnswer>('/api/v1/knowledge-bases', { name: '  Handbook ', description: 'HR' });
    expect(res.status).toBe(201);
    expect(res.body.knowledgeBase).toEqual({
      id: expect.stringMatching(/^kb_[0-9a-f]{32}$/),
      name: 'Handbook',
      description: 'HR',
      chunking: { minChunkSizeChars: 100, maxChunkSizeTokens: 1024, overlapTokens: 200 },
      trashed: false,
      trashedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const custom = await stack.api.post<KbAnswer>('/api/v1/knowledge-bases', {
      name: 'Small',
      chunking: { maxChunkSizeTokens: 256, overlapTokens: 32 },
    });
    expect(custom.body.knowledgeBase.chunking).toEqual({ minChunkSizeChars: 100, maxChunkSizeTokens: 256, overlapTokens: 32 });

    const list = await stack.api.get<KbList>('/api/v1/knowledge-bases');
    expect(list.status).toBe(200);
    expect(list.body.knowledgeBases.map((k) => k.id)).toEqual(
      expect.arrayContaining([res.body.knowledgeBase.id, custom.body.knowledgeBase.id]),
    );
    const one = await stack.api.get<KbAnswer>(`/api/v1/knowledge-bases/${res.body.knowledgeBase.id}`);
    expect(one.body.knowledgeBase).toEqual(res.body.knowledgeBase);
  });

  test.each([
    ['missing name', {}],
    ['blank name', { name: '   ' }],
    ['overlap over half of the maximum', { name: 'x', chunking: { maxChunkSizeTokens: 100, overlapTokens: 51 } }],
    ['maximum below 32 tokens', { name: 'x', chunking: { maxChunkSizeTokens: 16, overlapTokens: 0 } }],
    ['negative minimum', { name: 'x', chunking: { minChunkSizeChars: -1 } }],
    ['non-integer tokens', { name: 'x', chunking: { maxChunkSizeTokens: 100.5 } }],
    ['unknown chunking key', { name: 'x', chunking: { separator: '\n' } }],
    ['unknown field', { name: 'x', embeddingModel: 'y' }],
  ])('400 on %s, nothing created', async (_what, body) => {
    const before = await stack.api.get<KbList>('/api/v1/knowledge-bases');
    const res = await stack.api.post<KbAnswer>('/api/v1/knowledge-bases', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(expect.any(String));
    const after = await stack.api.get<KbList>('/api/v1/knowledge-bases');
    expect(after.body.knowledgeBases.length).toBe(before.body.knowledgeBases.length);
  });

  test('PATCH { trashed } trashes and restores; other bodies are refused', async () => {
    const kb = await createBase(stack.app, token);
    const trashed = await stack.api.patch<KbAnswer>(`/api/v1/knowledge-bases/${kb.id}`, { trashed: true });
    expect(trashed.status).toBe(200);
    expect(trashed.body.knowledgeBase).toMatchObject({ id: kb.id, trashed: true, trashedAt: expect.any(String) });
    const restored = await stack.api.patch<KbAnswer>(`/api/v1/knowledge-bases/${kb.id}`, { trashed: false });
    expect(restored.body.knowledgeBase).toMatchObject({ trashed: false, trashedAt: null });
    expect((await stack.api.patch<KbAnswer>(`/api/v1/knowledge-bases/${kb.id}`, { trashed: 'yes' })).status).toBe(400);
    expect((await stack.api.patch<KbAnswer>(`/api/v1/knowledge-bases/${kb.id}`, { name: 'renamed' })).status).toBe(400);
  });

  test("another workspace's base is 404 and stays unchanged", async () => {
    const kb = await createBase(stack.app, token);
    expect((await stack.as(other.token).get<KbAnswer>(`/api/v1/knowledge-bases/${kb.id}`)).status).toBe(404);
    const patch = await stack.as(other.token).patch<KbAnswer>(`/api/v1/knowledge-bases/${kb.id}`, { trashed: true });
    expect(patch.status).toBe(404);
    expect((await stack.api.get<KbAnswer>(`/api/v1/knowledge-bases/${kb.id}`)).body.knowledgeBase.trashed).toBe(false);
    const list = await stack.as(other.token).get<KbList>('/api/v1/knowledge-bases');
    expect(list.body.knowledgeBases.map((k) => k.id)).not.toContain(kb.id);
    expect((await stack.as(other.token).get<DocumentList>(`/api/v1/knowledge-bases/${kb.id}/documents`)).status).toBe(404);
  });

  test('401 without a key', async () => {
    const res = await stack.as().get<KbList>('/api/v1/knowledge-bases');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Valid bearer API key is required' });
  });
});

describe('documents', () => {
  const markdown = [
    '# Travel policy',
    '',
    'Employees book travel through the portal at least two weeks ahead.',
    '',
    '## Hotels',
    '',
    'Hotel stays are reimbursed up to the city rate. Keep every receipt for the expense report.',
    '',
    '## Meals',
    '',
    'Meals are covered by the daily allowance.',
  ].join('\n');

  test('each format is extracted, chunked and indexed: pending → ready', async () => {
    const kb = await createBase(stack.app, token, { chunking: { minChunkSizeChars: 20, maxChunkSizeTokens: 64, overlapTokens: 8 } });
    const files = [
      {
        name: 'notes.txt',
        type: 'text/plain',
        content: 'Plain text about the quarterly budget review.',
        expect: 'quarterly budget review',
      },
      { name: 'policy.md', type: 'text/markdown', content: markdown, expect: 'reimbursed up to the city rate' },
      {
        name: 'page.html',
        type: 'text/html',
        content:
          '<html><head><style>p{}</style><script>var x=1</script></head><body><h1>Onboarding</h1><p>Laptops are issued on <b>day one</b>.</p></body></html>',
        expect: 'Laptops are issued on day one',
      },
      {
        name: 'report.pdf',
        type: 'application/pdf',
        content: makePdf(['Annual safety report', 'Zero incidents were recorded in the warehouse.']),
        expect: 'Zero incidents were recorded',
      },
      {
        name: 'data.json',
        type: 'application/json',
        content: JSON.stringify({ product: 'Widget', warranty: { years: 3 } }),
        expect: '"warranty"',
      },
    ];
    for (const f of files) {
      const doc = await uploadDocument(stack.app, token, kb.id, f);
      expect(doc).toMatchObject({
        knowledgeBaseId: kb.id,
        name: f.name,
        mimeType: f.type,
        source: 'upload',
        indexingStatus: 'pending',
        chunkCount: 0,
        connectorId: null,
      });
      expect(doc.sizeBytes).toBe(Buffer.byteLength(f.content));
      const ready = await waitForDocument(stack.app, token, kb.id, doc.id);
      expect(ready).toMatchObject({ indexingStatus: 'ready', indexingError: null, indexedAt: expect.any(String) });
      const chunks = await chunksOf(doc.id);
      expect(chunks.length).toBe(ready.chunkCount);
      expect(chunks.map((c) => c.content).join('\n')).toContain(f.expect);
    }
  });

  test('HTML loses scripts and styles and keeps headings; Markdown chunks carry their heading path', async () => {
    const kb = await createBase(stack.app, token, { chunking: { minChunkSizeChars: 10, maxChunkSizeTokens: 40, overlapTokens: 0 } });
    const html = await uploadDocument(stack.app, token, kb.id, {
      name: 'p.html',
      type: 'text/html',
      content: '<script>alert(1)</script><h2>Security</h2><p>Rotate keys yearly.</p>',
    });
    await waitForDocument(stack.app, token, kb.id, html.id);
    const htmlChunks = await chunksOf(html.id);
    expect(htmlChunks.map((c) => c.content).join(' ')).not.toContain('alert');
    expect(htmlChunks[0]).toMatchObject({ heading: 'Security' });

    const md = await uploadDocument(stack.app, token, kb.id, { name: 'policy.md', type: 'text/markdown', content: markdown });
    await waitForDocument(stack.app, token, kb.id, md.id);
    const headings = (await chunksOf(md.id)).map((c) => c.heading);
    expect(headings).toContain('Travel policy > Hotels');
    expect(headings.every((h) => h?.startsWith('Travel policy'))).toBe(true);
  });

  test('chunks respect the maximum, overlap inside a section, and point back into the text', async () => {
    const kb = await createBase(stack.app, token, { chunking: { minChunkSizeChars: 50, maxChunkSizeTokens: 60, overlapTokens: 15 } });
    const sentences = Array.from({ length: 40 }, (_, i) => `Sentence ${i} explains step ${i} of the migration plan.`);
    const doc = await uploadDocument(stack.app, token, kb.id, { name: 'plan.txt', type: 'text/plain', content: sentences.join(' ') });
    await waitForDocument(stack.app, token, kb.id, doc.id);
    const chunks = await chunksOf(doc.id);
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(c.token_count).toBeLessThanOrEqual(60);
    // Split at sentences, never inside one: every chunk starts with "Sentence".
    for (const c of chunks) expect(c.content.startsWith('Sentence')).toBe(true);
    // Consecutive chunks overlap: each later chunk starts before the previous one ends.
    for (let i = 1; i < chunks.length; i++) expect(chunks[i].char_start).toBeLessThan(chunks[i - 1].char_end);
  });

  test('a UTF-8 file name comes back as sent: "résumé – 東京.txt" (busboy reads names as latin1 unless told)', async () => {
    const kb = await createBase(stack.app, token);
    const name = 'résumé – 東京.txt';
    const doc = await uploadDocument(stack.app, token, kb.id, { name, type: 'text/plain', content: 'Curriculum vitae.' });
    expect(doc.name).toBe(name);
    expect((await getDocument(stack.app, token, kb.id, doc.id)).body.document.name).toBe(name);
  });

  test('list with cursor, get, delete (chunks and stored bytes go too)', async () => {
    const kb = await createBase(stack.app, token);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await uploadDocument(stack.app, token, kb.id, { name: `d${i}.txt`, type: 'text/plain', content: `Document number ${i}` })).id,
      );
    const page1 = await stack.api.get<DocumentList>(`/api/v1/knowledge-bases/${kb.id}/documents?limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.documents.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    const page2 = await stack.api.get<DocumentList>(`/api/v1/knowledge-bases/${kb.id}/documents?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body).toEqual({ documents: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    expect((await stack.api.get<DocumentList>(`/api/v1/knowledge-bases/${kb.id}/documents?cursor=nope!`)).status).toBe(400);
    expect((await stack.api.get<DocumentList>(`/api/v1/knowledge-bases/${kb.id}/documents?limit=101`)).status).toBe(400);

    await waitForDocument(stack.app, token, kb.id, ids[0]);
    const blobsBefore = (await blobFiles()).filter((f) => f.includes(ids[0]));
    expect(blobsBefore.length).toBe(1);
    const removed = await stack.api.delete<Refusable<DocumentDeleted>>(`/api/v1/knowledge-bases/${kb.id}/documents/${ids[0]}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ deleted: true, documentId: ids[0] });
    expect((await getDocument(stack.app, token, kb.id, ids[0])).status).toBe(404);
    expect(await chunksOf(ids[0])).toEqual([]);
    expect((await blobFiles()).filter((f) => f.includes(ids[0]))).toEqual([]);
  });

  test('another workspace cannot read, delete or upload into a base: 404, nothing changed', async () => {
    const kb = await createBase(stack.app, token);
    const doc = await uploadDocument(stack.app, token, kb.id, {
      name: 'secret.txt',
      type: 'text/plain',
      content: 'The launch code is 1234.',
    });
    expect((await getDocument(stack.app, other.token, kb.id, doc.id)).status).toBe(404);
    expect(
      (await stack.as(other.token).delete<Refusable<DocumentDeleted>>(`/api/v1/knowledge-bases/${kb.id}/documents/${doc.id}`)).status,
    ).toBe(404);
    const foreign = await upload(
      stack.app,
      other.token,
      { knowledgeBaseId: kb.id },
      { name: 'x.txt', type: 'text/plain', content: 'intruder' },
    );
    expect(foreign.status).toBe(404);
    expect((await getDocument(stack.app, token, kb.id, doc.id)).status).toBe(200);
    const list = await stack.api.get<DocumentList>(`/api/v1/knowledge-bases/${kb.id}/documents`);
    expect(list.body.documents.map((d) => d.name)).toEqual(['secret.txt']);
  });

  test('Idempotency-Key: a replay answers the same document without a second upload; another body with the key is 409', async () => {
    const kb = await createBase(stack.app, token);
    const idem = { 'idempotency-key': `doc-${Date.now()}` };
    const file = { name: 'once.txt', type: 'text/plain', content: 'Uploaded exactly once.' };
    const first = await upload(stack.app, token, { knowledgeBaseId: kb.id }, file, idem);
    expect(first.status).toBe(201);
    const blobsAfterFirst = (await blobFiles()).length;
    const replay = await upload(stack.app, token, { knowledgeBaseId: kb.id }, file, idem);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.document.id).toBe(first.body.document.id);
    expect((await blobFiles()).length).toBe(blobsAfterFirst);

    const otherContent = await upload(stack.app, token, { knowledgeBaseId: kb.id }, { ...file, content: 'Something else.' }, idem);
    expect(otherContent.status).toBe(409);
    expect(otherContent.body).toEqual({
      error: 'Idempotency-Key was already used with a different request body.',
      code: 'idempotency_replay_mismatch',
    });
    const otherName = await upload(stack.app, token, { knowledgeBaseId: kb.id, name: 'Renamed' }, file, idem);
    expect(otherName.status).toBe(409);
    expect((await upload(stack.app, token, { knowledgeBaseId: kb.id }, file, { 'idempotency-key': 'bad key with spaces' })).status).toBe(
      400,
    );
    expect((await blobFiles()).length).toBe(blobsAfterFirst);
    const list = await stack.api.get<DocumentList>(`/api/v1/knowledge-bases/${kb.id}/documents`);
    expect(list.body.documents.map((d) => d.id)).toEqual([first.body.document.id]);

    // The key is the workspace's: another workspace may use the same key for its own upload, and sees nothing of this one.
    const otherKb = await createBase(stack.app, other.token);
    const foreign = await upload(stack.app, other.token, { knowledgeBaseId: otherKb.id }, file, idem);
    expect(foreign.status).toBe(201);
    expect(foreign.headers.get('idempotency-replayed')).toBeNull();
    expect(foreign.body.document.id).not.toBe(first.body.document.id);
    // Replaying another workspace's key into this base is still a 404 for the foreign key holder.
    expect((await upload(stack.app, other.token, { knowledgeBaseId: kb.id }, file, { 'idempotency-key': `x-${Date.now()}` })).status).toBe(
      404,
    );
  });

  test('refused uploads leave nothing stored', async () => {
    const kb = await createBase(stack.app, token);
    const trashedKb = await createBase(stack.app, token);
    await stack.api.patch<KbAnswer>(`/api/v1/knowledge-bases/${trashedKb.id}`, { trashed: true });
    const before = (await blobFiles()).length;
    const cases: Array<[number, Record<string, string>, Parameters<typeof upload>[3]]> = [
      [400, { knowledgeBaseId: kb.id }, undefined],
      [400, {}, { name: 'a.txt', type: 'text/plain', content: 'x' }],
      [400, { knowledgeBaseId: kb.id }, { name: 'image.png', type: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]) }],
      [400, { knowledgeBaseId: kb.id, extra: '1' }, { name: 'a.txt', type: 'text/plain', content: 'x' }],
      [400, { knowledgeBaseId: kb.id, name: '   ' }, { name: 'a.txt', type: 'text/plain', content: 'x' }],
      [404, { knowledgeBaseId: 'kb_missing' }, { name: 'a.txt', type: 'text/plain', content: 'x' }],
      [409, { knowledgeBaseId: trashedKb.id }, { name: 'a.txt', type: 'text/plain', content: 'x' }],
    ];
    for (const [status, fields, file] of cases) {
      const res = await upload(stack.app, token, fields, file);
      expect([status, res.body]).toEqual([status, { error: expect.any(String) }]);
    }
    const json = await stack.api.post('/api/v1/documents', { knowledgeBaseId: kb.id });
    expect(json.status).toBe(400);
    expect((await blobFiles()).length).toBe(before);
    expect((await stack.api.get<DocumentList>(`/api/v1/knowledge-bases/${kb.id}/documents`)).body.documents).toEqual([]);
  });

  test('a file over 50 MiB is 413 and nothing is kept', async () => {
    const kb = await createBase(stack.app, token);
    const before = (await blobFiles()).length;
    const res = await upload(
      stack.app,
      token,
      { knowledgeBaseId: kb.id },
      { name: 'big.txt', type: 'text/plain', content: Buffer.alloc(52_428_801, 0x61) },
    );
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: expect.stringContaining('52428800') });
    expect((await blobFiles()).length).toBe(before);
  });

  test('octet-stream with a known extension is accepted; unreadable content fails indexing with a reason', async () => {
    const kb = await createBase(stack.app, token);
    const md = await uploadDocument(stack.app, token, kb.id, {
      name: 'readme.md',
      type: 'application/octet-stream',
      content: '# Readme\n\nHello.',
    });
    expect(md.mimeType).toBe('text/markdown');
    expect((await waitForDocument(stack.app, token, kb.id, md.id)).indexingStatus).toBe('ready');

    const badJson = await uploadDocument(stack.app, token, kb.id, { name: 'broken.json', type: 'application/json', content: '{"a": ' });
    const failed = await waitForDocument(stack.app, token, kb.id, badJson.id);
    expect(failed).toMatchObject({ indexingStatus: 'failed', indexingError: expect.stringContaining('not valid JSON'), chunkCount: 0 });
    const badPdf = await uploadDocument(stack.app, token, kb.id, {
      name: 'broken.pdf',
      type: 'application/pdf',
      content: '%PDF-1.4 garbage',
    });
    expect(await waitForDocument(stack.app, token, kb.id, badPdf.id)).toMatchObject({
      indexingStatus: 'failed',
      indexingError: expect.stringContaining('PDF'),
    });
  });

  test('indexing is a Temporal execution per document version, searchable by workspace', async () => {
    const kb = await createBase(stack.app, token);
    const doc = await uploadDocument(stack.app, token, kb.id, { name: 'a.txt', type: 'text/plain', content: 'Temporal indexing' });
    await waitForDocument(stack.app, token, kb.id, doc.id);
    const handle = stack.app.deps.temporal.client.workflow.getHandle(knowledgeIndexDocumentWorkflowId(doc.id, 1));
    // The document turns ready in the workflow's last activity; the execution closes just after.
    await handle.result();
    const description = await handle.describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.searchAttributes.WorkspaceId).toEqual([stack.ws.workspaceId]);
  });
});
