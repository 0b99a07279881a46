/**
 * Issue 27, item 6: uploads that lie about their size, and file names that lie about
 * themselves. Workspace A attacks; workspace B's upload, made meanwhile and after, is served.
 * Content longer than the size declared at create is refused before a byte is stored (no blob
 * on disk, no blob on the row); stored names lose control, bidirectional and zero-width
 * characters, and a name with nothing else is a 400. A multipart document over its limit fails
 * its write as the limit is crossed: the blob store never receives it.
 */
import { KnowledgeDocumentSchema, StoredFileSchema } from '../../db/entities';
import { MAX_DOCUMENT_BYTES } from '../../services/knowledge/documents';
import { startFakeS3, type FakeS3 } from '../fakes/s3';
import { createBase, upload } from '../integration/knowledge/support';
import { loadConfig } from '../../services/kernel/config';
import { createWorkspace, startTestApp, type TestApp, type WorkspaceFixture } from '../support/harness';
import { filesUnder } from '../support/workerProcess';
import { createFile, filesConfig, putContent, uploadFile, type Caller } from '../integration/files/support';

let app: TestApp;
let a: WorkspaceFixture;
let b: WorkspaceFixture;
let blobDir: string;

beforeAll(async () => {
  const config = await filesConfig(loadConfig({}));
  blobDir = config.blobs!.localDir;
  app = await startTestApp(config);
  a = await createWorkspace(app, 'Attacker A');
  b = await createWorkspace(app, 'Bystander B');
});
afterAll(() => app?.close());

const asA: Caller = { token: '' };
const asB: Caller = { token: '' };
beforeAll(() => {
  asA.token = a.token;
  asB.token = b.token;
});

/** B's ordinary upload: created, stored, completed, ready. */
async function bIsServed() {
  const file = await uploadFile(app, asB, Buffer.from('bystander content'), { name: 'b.txt', mimeType: 'text/plain' });
  expect(file.status).toBe('ready');
}

const row = (id: string) => app.orm.em.fork().findOneOrFail(StoredFileSchema, { id });
const blobsOf = async (workspaceId: string, fileId: string) =>
  (await filesUnder(blobDir)).filter((f) => f.includes(workspaceId) && f.includes(fileId));

describe('content larger than declared', () => {
  test.each([
    ['one byte more', 10, 11],
    ['a thousand times more', 10, 10_000],
    ['a megabyte for an empty file', 0, 1024 * 1024],
  ])('%s: 413 before storing, nothing on disk or on the row; B is served meanwhile', async (_label, declared, actual) => {
    const created = await createFile(app, asA, { name: 'small.bin', mimeType: 'application/octet-stream', sizeBytes: declared });
    expect(created.status).toBe(201);
    const id = created.body.data.file.id;
    const [put] = await Promise.all([putContent(app, asA, id, Buffer.alloc(actual, 0x41)), bIsServed()]);
    expect(put.status).toBe(413);
    expect(put.body).toMatchObject({
      ok: false,
      error: { code: 'validation_failed', message: expect.stringContaining(`larger than the ${declared} bytes declared`) },
    });
    expect((await row(id)).blobKey).toBeNull();
    expect(await blobsOf(a.workspaceId, id)).toEqual([]);
    // The declared size still works afterwards.
    const ok = await putContent(app, asA, id, Buffer.alloc(declared, 0x41));
    expect(ok.status).toBe(201);
    await bIsServed();
  });
});

describe('file names', () => {
  test.each([
    ['right-to-left override', 'invoice\u202Efdp.exe', 'invoicefdp.exe'],
    ['isolates and marks', '\u2067report\u2069\u200E\u200F\u061C.pdf', 'report.pdf'],
    ['embeddings and pops', '\u202Aa\u202Bb\u202Cc\u202Dd.txt', 'abcd.txt'],
    ['C1 controls', 'na\u0085me\u009B31m.txt', 'name31m.txt'],
    ['C0 controls and DEL', 'a\u0001b\u0007c\u001B[31m\td\n\re\u007F.txt', 'abc[31mde.txt'],
    ['zero-width space, word joiner and BOM', '\uFEFFpay\u200Broll\u2060.csv', 'payroll.csv'],
    [
      'joiners in emoji and Persian are kept',
      'family \u{1F468}\u200D\u{1F469}\u200D\u{1F467} می\u200Cخواهم.txt',
      'family \u{1F468}\u200D\u{1F469}\u200D\u{1F467} می\u200Cخواهم.txt',
    ],
    ['surrounding space left by a stripped character', '\u202E  notes.md  \u202C', 'notes.md'],
  ])('%s: stored and shown without them', async (_label, sent, stored) => {
    const created = await createFile(app, asA, { name: sent, mimeType: 'text/plain', sizeBytes: 1 });
    expect(created.status).toBe(201);
    expect(created.body.data.file.name).toBe(stored);
    expect((await row(created.body.data.file.id)).name).toBe(stored);
  });

  test.each([
    ['only bidi controls', '\u202E\u202D\u2066'],
    ['only controls and spaces', ' \u0001\u0085 \u007F '],
    ['only zero-width', '\u200B\uFEFF'],
  ])('a name of %s is a 400 and nothing is created; B is served', async (_label, sent) => {
    const before = await app.orm.em.fork().count(StoredFileSchema, { workspaceId: a.workspaceId });
    const res = await createFile(app, asA, { name: sent, mimeType: 'text/plain', sizeBytes: 1 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      ok: false,
      error: { code: 'validation_failed', message: expect.stringContaining('name must not be empty') },
    });
    expect(await app.orm.em.fork().count(StoredFileSchema, { workspaceId: a.workspaceId })).toBe(before);
    await bIsServed();
  });
});

describe('a multipart document over the limit', () => {
  // The blob store is a loopback S3 that records every request: "nothing stored" means it never received the object.
  let s3: FakeS3;
  let s3App: TestApp;
  let a3: WorkspaceFixture;
  let b3: WorkspaceFixture;
  beforeAll(async () => {
    s3 = await startFakeS3();
    const base = loadConfig({});
    s3App = await startTestApp({
      blobs: {
        ...base.blobs,
        backend: 's3',
        s3: {
          endpoint: s3.endpoint,
          region: 'eu-test-1',
          bucket: s3.bucket,
          accessKeyId: s3.accessKeyId,
          secretAccessKey: s3.secretAccessKey,
          forcePathStyle: true,
        },
      },
    });
    a3 = await createWorkspace(s3App, 'Attacker A (S3)');
    b3 = await createWorkspace(s3App, 'Bystander B (S3)');
  });
  afterAll(async () => {
    await s3App?.close();
    await s3?.close();
  });

  test('is refused 413 as it crosses the limit: the store never receives it, no document row; B uploads meanwhile', async () => {
    const kbA = await createBase(s3App, a3.token);
    const kbB = await createBase(s3App, b3.token);
    const docsOf = (workspaceId: string) => s3App.orm.em.fork().count(KnowledgeDocumentSchema, { workspaceId });
    const [big, small] = await Promise.all([
      upload(
        s3App,
        a3.token,
        { knowledgeBaseId: kbA.id },
        { name: 'huge.txt', type: 'text/plain', content: Buffer.alloc(MAX_DOCUMENT_BYTES + 1, 0x61) },
      ),
      upload(s3App, b3.token, { knowledgeBaseId: kbB.id }, { name: 'b.txt', type: 'text/plain', content: 'bystander notes' }),
    ]);
    expect(big.status).toBe(413);
    expect(small.status).toBe(201);
    expect(await docsOf(a3.workspaceId)).toBe(0);
    expect(s3.requests.filter((r) => r.method === 'PUT' && r.key.includes(a3.workspaceId))).toEqual([]);
    expect(s3.requests.filter((r) => r.method === 'PUT' && r.key.includes(b3.workspaceId))).toHaveLength(1);
    // Exactly at the limit is still taken (the limit is inclusive).
    const edge = await upload(
      s3App,
      a3.token,
      { knowledgeBaseId: kbA.id },
      { name: 'edge.txt', type: 'text/plain', content: Buffer.alloc(MAX_DOCUMENT_BYTES, 0x61) },
    );
    expect(edge.status).toBe(201);
  });
});
