/**
 * With CLAMD_ADDRESS set, completed files are also streamed to clamd (INSTREAM) and its verdict
 * counts, against a loopback clamd (test/fakes/clamd.ts). A clamd that cannot answer leaves
 * the file pending_scan, and a later complete scans it again; one scan at a time (lease).
 */
import { loadConfig } from '../../../services/kernel/config';
import { FileScanSchema } from '../../../db/entities';
import { bytesStream } from '../../../services/kernel/blobs';
import { clamdScanner } from '../../../services/files';
import { useTestStack } from '../../kit';
import { startFakeClamd, type FakeClamd } from '../../fakes/clamd';
import { EICAR, complete, createFile, download, filesConfig, putContent, uploadFile, type Caller } from './support';

let clamd: FakeClamd;
let owner: Caller;
const MARKER = Buffer.from('SVC-TEST-MALWARE-MARKER');

beforeAll(async () => {
  clamd = await startFakeClamd();
  clamd.signatures.set('Svc.Test.Marker', MARKER);
  clamd.signatures.set('Eicar-Test-Signature', EICAR);
});
const stack = useTestStack(async () => ({ config: await filesConfig(loadConfig({}), { clamdAddress: clamd.address }) }));
beforeAll(async () => {
  owner = { token: stack.ws.token };
});
afterAll(async () => {
  await clamd?.close();
});

const scansOf = async (fileId: string) =>
  (await stack.app.orm.em.fork().find(FileScanSchema, { fileId }, { orderBy: { createdAt: 'asc', scanner: 'asc' } })).map((s) => ({
    scanner: s.scanner,
    verdict: s.verdict,
    detail: s.detail,
  }));

test('clean content is streamed whole to clamd and the file becomes ready; both verdicts are recorded', async () => {
  const content = Buffer.alloc(1_000_000);
  for (let i = 0; i < content.length; i++) content[i] = i % 199;
  const before = clamd.scanned.length;
  const file = await uploadFile(stack.app, owner, content);
  expect(file.status).toBe('ready');
  expect(clamd.scanned.length).toBe(before + 1);
  expect(clamd.scanned[before].equals(content)).toBe(true);
  expect(await scansOf(file.id)).toEqual(
    expect.arrayContaining([
      { scanner: 'builtin', verdict: 'clean', detail: null },
      { scanner: 'clamd', verdict: 'clean', detail: null },
    ]),
  );
});

test("clamd's FOUND quarantines content the built-in scanner passes", async () => {
  const content = Buffer.concat([Buffer.from('an innocent looking text with '), MARKER, Buffer.from(' inside')]);
  const file = await uploadFile(stack.app, owner, content, { mimeType: 'text/plain' });
  expect(file.status).toBe('quarantined');
  expect(await scansOf(file.id)).toEqual(
    expect.arrayContaining([
      { scanner: 'builtin', verdict: 'clean', detail: null },
      { scanner: 'clamd', verdict: 'infected', detail: 'Svc.Test.Marker' },
    ]),
  );
  expect((await download(stack.app, owner, file.id)).status).toBe(423);
});

test('EICAR: both scanners find it', async () => {
  const file = await uploadFile(stack.app, owner, EICAR, { mimeType: 'text/plain' });
  expect(file.status).toBe('quarantined');
  expect(await scansOf(file.id)).toEqual(
    expect.arrayContaining([
      { scanner: 'builtin', verdict: 'infected', detail: 'Eicar-Test-Signature' },
      { scanner: 'clamd', verdict: 'infected', detail: 'Eicar-Test-Signature' },
    ]),
  );
});

test('a clamd error leaves the file pending_scan (202); complete scans again and reaches ready', async () => {
  const content = Buffer.alloc(5000, 0x41);
  const created = await createFile(stack.app, owner, { name: 'retry.txt', mimeType: 'text/plain', sizeBytes: content.length });
  const id = created.body.data.file.id;
  await putContent(stack.app, owner, id, content);
  clamd.streamMaxLength = 1000;
  let first;
  try {
    first = await complete(stack.app, owner, id);
  } finally {
    clamd.streamMaxLength = 25 * 1024 * 1024;
  }
  expect(first.status).toBe(202);
  expect(first.body.data.file).toMatchObject({ status: 'pending_scan', sha256: expect.not.stringMatching(/^0{64}$/) });
  expect(await scansOf(id)).toEqual(
    expect.arrayContaining([{ scanner: 'clamd', verdict: 'error', detail: expect.stringContaining('size limit exceeded') }]),
  );
  expect((await download(stack.app, owner, id)).status).toBe(423);
  // PUT content is for pending files only.
  expect((await putContent(stack.app, owner, id, content)).status).toBe(409);

  const second = await complete(stack.app, owner, id);
  expect(second.status).toBe(202);
  expect(second.body.data.file.status).toBe('ready');
  expect((await download(stack.app, owner, id)).bytes.equals(content)).toBe(true);
});

test('one scan at a time: a complete while another is scanning is 409 conflict', async () => {
  const content = Buffer.from('scanned slowly');
  const created = await createFile(stack.app, owner, { name: 'slow.txt', mimeType: 'text/plain', sizeBytes: content.length });
  const id = created.body.data.file.id;
  await putContent(stack.app, owner, id, content);
  const hold = clamd.hold();
  const first = complete(stack.app, owner, id);
  await hold.scanStarted;
  const second = await complete(stack.app, owner, id);
  expect(second.status).toBe(409);
  expect(second.body.error).toEqual({ code: 'conflict', message: 'A scan of this file is already in progress.' });
  hold.release();
  const done = await first;
  expect(done.status).toBe(202);
  expect(done.body.data.file.status).toBe('ready');
});

test('an unreachable clamd is an error, not a verdict', async () => {
  const closed = await startFakeClamd();
  const address = closed.address;
  await closed.close();
  const scanner = clamdScanner(address, 2_000);
  await expect(scanner.scan({ mimeType: 'text/plain', sizeBytes: 3, open: async () => bytesStream('abc') })).rejects.toThrow(
    /ECONNREFUSED/,
  );
});
