/**
 * The session mount `/api/files` runs the same handlers as `/api/v1/files` with a sign-in
 * cookie; and a deployment with file writes blocked (FILES_WRITES_DISABLED) answers new creates
 * 503 service_unavailable while a replay of a successful create still answers 201.
 */
import { loadConfig } from '../../../services/kernel/config';
import { UserSchema } from '../../../db/entities';
import { hashPassword } from '../../../services/kernel/passwords';
import { startTestApp } from '../../support/harness';
import { addUserWithKey, http, signInCookie, useTestStack, type TestApp } from '../../kit';
import type { z } from 'zod';
import type { fileListSchema } from '../../../api/schemas/files';
import { complete, createFile, download, filesConfig, getFile, key, putContent, remove, sha256, waitForFile, type Caller } from './support';

/** The file list in its `{ ok, data }` envelope. */
type FileList = { data: z.infer<typeof fileListSchema> };

let session: Caller;

const stack = useTestStack(async () => ({ config: await filesConfig(loadConfig({}), { purgeDelayMs: 100 }) }));
beforeAll(async () => {
  session = {
    cookie: await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword, stack.ws.workspaceId),
    mount: '/api/files',
  };
});

describe('session mount /api/files', () => {
  test('the whole life of a file with a session cookie', async () => {
    const content = Buffer.from('uploaded from the browser');
    const created = await createFile(stack.app, session, { name: 'browser.txt', mimeType: 'text/plain', sizeBytes: content.length });
    expect(created.status).toBe(201);
    const id = created.body.data.file.id;
    expect(created.body.data.uploadUrl).toBe(`${stack.app.url}/api/files/${id}/content`);
    expect(created.body.data.completeUrl).toBe(`${stack.app.url}/api/files/${id}/complete`);

    const put = await putContent(stack.app, session, id, content);
    expect(put.status).toBe(201);
    expect(put.body.data.blob.sha256).toBe(sha256(content));
    const done = await complete(stack.app, session, id);
    expect(done.body.data.file.status).toBe('ready');

    const list = await http<FileList>(stack.app, 'GET', '/api/files?limit=1', { cookie: session.cookie });
    expect(list.status).toBe(200);
    expect(list.body.data.files.map((f) => f.id)).toEqual([id]);
    const got = await download(stack.app, session, id, { range: 'bytes=0-7' });
    expect(got.status).toBe(206);
    expect(got.bytes.toString()).toBe('uploaded');

    // The same file through the v1 mount: one set of handlers, one store.
    expect((await getFile(stack.app, { token: stack.ws.token }, id)).body.data.file).toEqual(
      (await getFile(stack.app, session, id)).body.data.file,
    );

    const removed = await remove(stack.app, session, id);
    expect(removed.status).toBe(202);
    expect(removed.body.data.file.status).toBe('deletion_requested');
    await waitForFile(stack.app, session, id, (f) => f.status === 'deleted');
  });

  test('without a session: 401 authentication_required; a bearer key is not a session', async () => {
    const none = await http(stack.app, 'GET', '/api/files');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ ok: false, error: { code: 'authentication_required', message: 'Sign-in is required.' } });
    const bearer = await http(stack.app, 'GET', '/api/files', { token: stack.ws.token });
    expect(bearer.status).toBe(401);
  });

  test('cross-origin mutations are refused (403 authorization_failed); viewers may read but not write', async () => {
    const res = await http<{ error: { code: string } }>(stack.app, 'POST', '/api/files', {
      cookie: session.cookie,
      body: { name: 'x', mimeType: 'text/plain', sizeBytes: 1 },
      headers: { 'idempotency-key': key(), origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('authorization_failed');

    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    const password = 'viewer password for files';
    await stack.app.orm.em
      .fork()
      .nativeUpdate(UserSchema, { id: viewer.userId }, { passwordHash: await hashPassword(password), status: 'active' });
    const viewerSession: Caller = {
      cookie: await signInCookie(stack.app, viewer.email, password, stack.ws.workspaceId),
      mount: '/api/files',
    };
    expect((await http(stack.app, 'GET', '/api/files', { cookie: viewerSession.cookie })).status).toBe(200);
    const refused = await createFile(stack.app, viewerSession, { name: 'v', mimeType: 'text/plain', sizeBytes: 1 });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({ code: 'authorization_failed', message: 'Write permission is required.' });
  });
});

describe('file writes blocked by configuration', () => {
  let blocked: TestApp;
  beforeAll(async () => {
    // A second API process on the same database, configured with FILES_WRITES_DISABLED.
    blocked = await startTestApp(await filesConfig(loadConfig({}), { writesDisabled: true }));
  });
  afterAll(() => blocked?.close());

  test('a new create is 503 service_unavailable; the replay of a successful create still answers 201', async () => {
    const owner: Caller = { token: stack.ws.token };
    const k = key();
    const body = { name: 'before-the-block.txt', mimeType: 'text/plain', sizeBytes: 3 };
    const created = await createFile(stack.app, owner, body, k);
    expect(created.status).toBe(201);

    const replay = await createFile(blocked, owner, body, k);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(created.body);

    const refused = await createFile(blocked, owner, { ...body, name: 'after-the-block.txt' });
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({
      ok: false,
      error: { code: 'service_unavailable', message: 'File uploads are disabled on this deployment.' },
    });
    const list = await http<FileList>(blocked, 'GET', '/api/v1/files?limit=100', { token: stack.ws.token });
    expect(list.body.data.files.some((f) => f.name === 'after-the-block.txt')).toBe(false);

    // The session mount shares the handler and the block.
    const cookie = await signInCookie(blocked, stack.ws.ownerEmail, stack.ws.ownerPassword, stack.ws.workspaceId);
    expect((await createFile(blocked, { cookie, mount: '/api/files' }, body)).status).toBe(503);
  });
});
