/**
 * The four provider clients against loopback servers speaking each API's shapes, through real
 * sync runs: drive (files.list, export, alt=media, trashed), wiki (Confluence v2 pages with
 * storage bodies, Basic auth, trashed), chat (Slack history cursors, compact records) and repo
 * (GitHub recursive trees and blobs, truncated trees, pathPrefixes), with their budget rules and
 * the cursor tied to the filters.
 */
import { startChatFake, type ChatFake } from '../../fakes/chat';
import { startDriveFake, type DriveFake } from '../../fakes/drive';
import { startRepoFake, type RepoFake } from '../../fakes/repo';
import { startWikiFake, type WikiFake } from '../../fakes/wiki';
import { useTestStack } from '../../kit';
import {
  createBase,
  createConnector,
  createCredential,
  getConnector,
  key,
  knowledgeConfig,
  cursorState,
  makePdf,
  startRun,
  type KnowledgeBase,
} from './support';

let drive: DriveFake;
let wiki: WikiFake;
let chat: ChatFake;
let repo: RepoFake;
let token: string;
let kb: KnowledgeBase;
const creds: Record<string, string> = {};

const stack = useTestStack(async () => {
  [drive, wiki, chat, repo] = await Promise.all([startDriveFake(), startWikiFake(), startChatFake(), startRepoFake()]);
  return { config: await knowledgeConfig() };
});
beforeAll(async () => {
  token = stack.ws.token;
  kb = await createBase(stack.app, token);
  const ws = stack.ws.workspaceId;
  creds.drive = await createCredential(stack.app, token, ws, 'drive', { token: 'ya29.fake-token', baseUrl: drive.url });
  creds.wiki = await createCredential(stack.app, token, ws, 'wiki', {
    token: 'atlassian-fake-token',
    username: 'bot@example.test',
    baseUrl: wiki.url,
  });
  creds.chat = await createCredential(stack.app, token, ws, 'chat', { token: 'xoxb-fake-token', baseUrl: chat.url });
  creds.repo = await createCredential(stack.app, token, ws, 'repo', { token: 'ghp_fake_token', baseUrl: repo.url });
});
afterAll(async () => {
  await Promise.all([drive, wiki, chat, repo].map((f) => f?.close()));
});

async function connector(providerId: string, config: Record<string, unknown>): Promise<string> {
  const res = await createConnector(stack.app, token, {
    knowledgeBaseId: kb.id,
    providerId,
    name: `${providerId} ${key()}`,
    config: { credentialId: creds[providerId], ...config },
  });
  return res.body.data.connector.id;
}

async function docs(connectorId: string): Promise<
  Array<{
    external_id: string;
    name: string;
    mime_type: string;
    enabled: boolean;
    trashed: boolean;
    content_text: string;
    metadata: Record<string, unknown>;
  }>
> {
  return stack.app.orm.em
    .fork()
    .getConnection()
    .execute(
      `select external_id, name, mime_type, enabled, trashed_at is not null as trashed, content_text, metadata from knowledge_documents where connector_id = ? order by external_id`,
      [connectorId],
    );
}

const run = (connectorId: string, options: Record<string, number> = {}) => startRun(stack.app, token, connectorId, { options });

describe('drive', () => {
  test('files.list in modifiedTime order: Docs exported, text and PDF downloaded, images skipped, trashed files tombstoned', async () => {
    drive.put({
      id: 'doc1',
      name: 'Handbook',
      mimeType: 'application/vnd.google-apps.document',
      content: 'Expense reports are due monthly.',
    });
    drive.put({ id: 'txt1', name: 'notes.txt', mimeType: 'text/plain', content: 'Plain notes about onboarding.' });
    drive.put({ id: 'pdf1', name: 'policy.pdf', mimeType: 'application/pdf', content: makePdf(['Security policy: rotate keys yearly.']) });
    drive.put({ id: 'img1', name: 'logo.png', mimeType: 'image/png', content: Buffer.from([0x89, 0x50]) });
    const id = await connector('drive', {});
    const first = await run(id);
    expect(first.status).toBe(201);
    expect(first.body.data.run).toMatchObject({ upsertedCount: 3, tombstonedCount: 0 });
    const stored = await docs(id);
    expect(stored.map((d) => d.external_id)).toEqual(['drive:doc1', 'drive:pdf1', 'drive:txt1']);
    expect(stored.find((d) => d.external_id === 'drive:doc1')).toMatchObject({
      mime_type: 'text/plain',
      content_text: 'Expense reports are due monthly.',
    });
    expect(stored.find((d) => d.external_id === 'drive:pdf1')!.content_text).toContain('rotate keys yearly');
    const exports = drive.requests.filter((r) => r.path.endsWith('/export'));
    expect(exports.map((r) => r.query.get('mimeType'))).toEqual(['text/plain']);

    // Only what changed since the cursor's time is listed again; a trashed file is a tombstone.
    drive.put({ id: 'txt1', name: 'notes.txt', mimeType: 'text/plain', content: 'Plain notes, revised.', trashed: true });
    const second = await run(id);
    expect(second.body.data.run).toMatchObject({ upsertedCount: 0, tombstonedCount: 1 });
    const lastList = drive.requests.filter((r) => r.path === '/drive/v3/files').pop()!;
    expect(lastList.query.get('q')).toMatch(/^modifiedTime > '2026-/);
    expect((await docs(id)).find((d) => d.external_id === 'drive:txt1')).toMatchObject({ enabled: false, trashed: true });
  });

  test('a page whose content does not fit maxBytes fails with a fetch-budget error instead of a partial page', async () => {
    drive.files.clear();
    drive.put({ id: 'a', name: 'a.txt', mimeType: 'text/plain', content: 'a'.repeat(800) });
    drive.put({ id: 'b', name: 'b.txt', mimeType: 'text/plain', content: 'b'.repeat(800) });
    const id = await connector('drive', {});
    const res = await run(id, { maxBytes: 1024 });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'validation_failed', message: expect.stringContaining('Fetch budget exceeded') });
    expect(await docs(id)).toEqual([]);
    expect((await getConnector(stack.app, token, id))?.status).toBe('failed');
  });

  test('fileIds: each file read with files.get; a missing one is a tombstone', async () => {
    drive.put({ id: 'keep', name: 'keep.md', mimeType: 'text/markdown', content: '# Keep\n\nThis file stays.' });
    const id = await connector('drive', { fileIds: ['keep', 'gone'] });
    const res = await run(id);
    expect(res.body.data.run).toMatchObject({ upsertedCount: 1, tombstonedCount: 1 });
    expect((await docs(id)).map((d) => d.external_id)).toEqual(['drive:keep']);
  });
});

describe('wiki', () => {
  test('pages of the listed spaces with storage bodies as text (Basic auth); trashed pages are tombstones; unchanged versions are skipped', async () => {
    wiki.putPage('100', { id: '1', title: 'Runbook', body: '<h1>Runbook</h1><p>Restart the <b>queue</b> first.</p>' });
    wiki.putPage('100', { id: '2', title: 'Old page', body: '<p>Obsolete.</p>', status: 'trashed' });
    for (let i = 3; i < 8; i++) wiki.putPage('100', { id: String(i), title: `Page ${i}`, body: `<p>Body ${i}</p>` });
    const id = await connector('wiki', { spaceIds: ['100'] });
    const res = await run(id);
    expect(res.body.data.run).toMatchObject({ upsertedCount: 6, tombstonedCount: 1 });
    const runbook = (await docs(id)).find((d) => d.external_id === 'wiki:1')!;
    expect(runbook.content_text).toBe('# Runbook\n\nRestart the queue first.');
    const pageRequest = wiki.requests.find((r) => r.path === '/wiki/api/v2/spaces/100/pages')!;
    expect(pageRequest.query.get('body-format')).toBe('storage');
    expect(pageRequest.query.getAll('status')).toEqual(['current', 'trashed']);

    wiki.putPage('100', { id: '3', title: 'Page 3', body: '<p>Body 3, edited</p>' });
    const again = await run(id);
    expect(again.body.data.run).toMatchObject({ upsertedCount: 1 });
  });

  test('cursor links across runs when maxPages runs out; a page of results larger than maxBytes fails the run', async () => {
    for (let i = 0; i < 30; i++) wiki.putPage('200', { id: String(1000 + i), title: `P${i}`, body: `<p>${'x'.repeat(40)}</p>` });
    const id = await connector('wiki', { spaceIds: ['200'] });
    const first = await run(id, { maxPages: 1, maxItems: 10 });
    expect(first.body.data.run.upsertedCount).toBe(10);
    expect(cursorState(first.body.data.run)).toMatchObject({ spaces: ['200'], index: 0, next: expect.stringContaining('cursor=') });
    const second = await run(id, { maxPages: 5, maxItems: 100 });
    expect(second.body.data.run.upsertedCount).toBe(20);
    expect((await docs(id)).length).toBe(30);

    wiki.putPage('300', { id: '5000', title: 'Big', body: `<p>${'y'.repeat(3000)}</p>` });
    const big = await connector('wiki', { spaceIds: ['300'] });
    const refused = await run(big, { maxBytes: 1024 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('Fetch budget exceeded');
  });

  test('the provider answering 401 fails the run with its message', async () => {
    const badCred = await createCredential(stack.app, token, stack.ws.workspaceId, 'wiki', {
      token: 'wrong',
      username: 'bot@example.test',
      baseUrl: wiki.url,
    });
    const res = await createConnector(stack.app, token, {
      knowledgeBaseId: kb.id,
      providerId: 'wiki',
      name: `wiki bad ${key()}`,
      config: { credentialId: badCred, spaceIds: ['100'] },
    });
    const failed = await run(res.body.data.connector.id);
    expect(failed.status).toBe(500);
    expect(failed.body.error.message).toContain('Provider wiki answered 401');
  });
});

describe('chat', () => {
  test('history is followed across runs with cursors; maxItems stops between messages', async () => {
    chat.post(
      'CHIST',
      Array.from({ length: 25 }, (_, i) => `message number ${i}`),
    );
    const id = await connector('chat', { channelIds: ['CHIST'] });
    const first = await run(id, { maxItems: 10 });
    expect(first.body.data.run.upsertedCount).toBe(10);
    const second = await run(id, { maxItems: 100 });
    expect(second.body.data.run.upsertedCount).toBe(15);
    expect((await docs(id)).length).toBe(25);
    chat.post('CHIST', ['one more']);
    expect((await run(id)).body.data.run.upsertedCount).toBe(1);
    expect((await run(id)).body.data.run.upsertedCount).toBe(0);
  });

  test('one message larger than maxBytes becomes a compact record with contentTruncated', async () => {
    chat.post('CBIG', ['x'.repeat(5000)]);
    const id = await connector('chat', { channelIds: ['CBIG'] });
    const res = await run(id, { maxBytes: 1024 });
    expect(res.status).toBe(201);
    expect(res.body.data.run.upsertedCount).toBe(1);
    const [doc] = await docs(id);
    expect(doc.metadata).toMatchObject({ contentTruncated: true, originalBytes: 5000 });
    expect(Buffer.byteLength(doc.content_text)).toBeLessThanOrEqual(1024);
  });

  test('a stored cursor tied to other filters is invalid (400) after the filters change; unknown channels and missing filters are 400', async () => {
    chat.post('CF1', ['filters one']);
    chat.post('CF2', ['filters two']);
    const id = await connector('chat', { channelIds: ['CF1'] });
    expect((await run(id)).status).toBe(201);
    await stack.api.patch(
      `/api/v1/knowledge-connectors/${id}`,
      { config: { credentialId: creds.chat, channelIds: ['CF1', 'CF2'] } },
      { headers: { 'idempotency-key': key() } },
    );
    const refused = await run(id);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({ code: 'validation_failed', message: expect.stringContaining('made for other filters') });

    const unknown = await run(await connector('chat', { channelIds: ['CNOPE'] }));
    expect([unknown.status, unknown.body.error.message]).toEqual([400, expect.stringContaining('channel_not_found')]);
    const none = await run(await connector('chat', {}));
    expect([none.status, none.body.error.message]).toEqual([400, expect.stringContaining('config.channelIds is required')]);
  });
});

describe('repo', () => {
  test('recursive tree and blobs under pathPrefixes; binaries skipped; removed files tombstoned; unchanged tree skipped', async () => {
    repo.setFiles('acme/docs', {
      'docs/intro.md': '# Intro\n\nWelcome.',
      'docs/setup.md': 'Install with npm.',
      'src/index.ts': 'export {}',
      'docs/logo.png': Buffer.from([0x89, 0, 0x47]),
    });
    const id = await connector('repo', { repositories: ['acme/docs'], pathPrefixes: ['docs/'] });
    const first = await run(id);
    expect(first.body.data.run).toMatchObject({ upsertedCount: 2, tombstonedCount: 0 });
    expect((await docs(id)).map((d) => d.external_id)).toEqual(['repo:acme/docs:docs/intro.md', 'repo:acme/docs:docs/setup.md']);
    const tree = repo.requests.find((r) => r.path === '/repos/acme/docs/git/trees/main')!;
    expect(tree.query.get('recursive')).toBe('1');
    expect(tree.headers.accept).toBe('application/vnd.github+json');

    const blobCalls = () => repo.requests.filter((r) => r.path.includes('/git/blobs/')).length;
    const before = blobCalls();
    expect((await run(id)).body.data.run).toMatchObject({ upsertedCount: 0, tombstonedCount: 0 });
    expect(blobCalls()).toBe(before);

    repo.setFiles('acme/docs', { 'docs/intro.md': '# Intro\n\nWelcome, again.', 'src/index.ts': 'export {}' });
    const third = await run(id);
    expect(third.body.data.run).toMatchObject({ upsertedCount: 1, tombstonedCount: 1 });
    expect((await docs(id)).find((d) => d.external_id.endsWith('setup.md'))).toMatchObject({ enabled: false, trashed: true });
  });

  test('a truncated tree fails the run (narrow pathPrefixes); more than 50 unique prefixes is 400', async () => {
    repo.setFiles('acme/huge', { 'a.md': 'a', 'b.md': 'b', 'c.md': 'c' });
    repo.truncated.add('acme/huge');
    const truncated = await run(await connector('repo', { repositories: ['acme/huge'] }));
    expect(truncated.status).toBe(400);
    expect(truncated.body.error.message).toContain('narrow config.pathPrefixes');
    const prefixes = Array.from({ length: 51 }, (_, i) => `dir${i}/`);
    const tooMany = await run(await connector('repo', { repositories: ['acme/docs'], pathPrefixes: prefixes }));
    expect([tooMany.status, tooMany.body.error.message]).toEqual([400, expect.stringContaining('at most 50')]);
    const fifty = await run(await connector('repo', { repositories: ['acme/docs'], pathPrefixes: [...prefixes.slice(0, 50), 'dir0/'] }));
    expect(fifty.status).toBe(201);
  });

  test('the first file larger than maxBytes fails the run; later ones stop it and the next run goes on', async () => {
    repo.setFiles('acme/big', { 'a.txt': 'z'.repeat(2000) });
    const big = await run(await connector('repo', { repositories: ['acme/big'] }), { maxBytes: 1024 });
    expect([big.status, big.body.error.message]).toEqual([400, expect.stringContaining('more than maxBytes')]);

    repo.setFiles('acme/many', Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`f${i}.txt`, 'q'.repeat(400)])));
    const id = await connector('repo', { repositories: ['acme/many'] });
    const first = await run(id, { maxBytes: 1024 });
    expect(first.body.data.run.upsertedCount).toBe(2);
    expect(cursorState(first.body.data.run)['acme/many']).toEqual({ treeSha: null, after: 'f1.txt' });
    const rest = await run(id, { maxBytes: 4096 });
    expect(rest.body.data.run.upsertedCount).toBe(4);
    expect((await docs(id)).length).toBe(6);
  });
});
