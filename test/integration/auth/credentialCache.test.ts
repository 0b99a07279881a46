/**
 * Verified keys and sessions are cached per API process (services/accounts/credentialCache.ts).
 * Two app instances on one database stand for two API processes: a change made through one is
 * refused by it on the very next request, and by the other once it has heard the change's
 * notification (`cache.sync()` waits for exactly that, no clock). Changes made by hand in SQL
 * reach both the same way, and a process whose notification connection is lost stops serving
 * from its cache.
 */
import { startTestApp, type TestApp } from '../../support/harness';
import { addUserWithKey, http, signInCookie, useTestStack } from '../../kit';

const stack = useTestStack({ worker: false });
let second: TestApp;

beforeAll(async () => {
  // A long TTL: in these tests only a notification can make the second process forget.
  second = await startTestApp({ authCacheTtlMs: 60_000 });
  await second.deps.services.auth.credentials.cache.ready();
  await stack.app.deps.services.auth.credentials.cache.ready();
}, 120_000);
afterAll(async () => {
  await second?.close();
});

const cacheOf = (app: TestApp) => app.deps.services.auth.credentials.cache;
/** How long `sync()` may wait for its notification: a hung bound (beside a benchmark it once took over 10 s). */
const SYNC_BOUND_MS = 120_000;
const sql = (text: string, params: unknown[]) => stack.app.orm.em.fork().getConnection().execute(text, params);
/** A route any workspace key may read. */
const read = (app: TestApp, token: string) => http(app, 'GET', '/api/v1/workspaces', { token });
/** A route that needs a workspace key with write: a malformed body is a 400 after authorization passed, a 403 before. */
const write = (app: TestApp, token: string) =>
  http(app, 'POST', '/api/v1/workflows', { token, rawBody: '{', headers: { 'content-type': 'application/json' } });

/** Uses `token` on both processes so that each has it cached. */
async function warm(token: string): Promise<void> {
  for (const app of [stack.app, second]) {
    expect((await read(app, token)).status).toBe(200);
    expect(cacheOf(app).active).toBe(true);
  }
}

test('a revoked key is refused on the very next request of the revoking process, and of another once it heard', async () => {
  const key = await addUserWithKey(stack.app, stack.ws, 'member');
  await warm(key.token);
  const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
  const revoked = await http(stack.app, 'DELETE', `/api/api-keys/${key.keyId}`, { cookie });
  expect(revoked.status).toBe(200);
  expect((await read(stack.app, key.token)).status).toBe(401);

  expect(await cacheOf(second).sync(SYNC_BOUND_MS)).toBe(true);
  expect((await read(second, key.token)).status).toBe(401);
});

test('a key scope downgraded in SQL is refused by every process', async () => {
  const key = await addUserWithKey(stack.app, stack.ws, 'member');
  await warm(key.token);
  expect((await write(second, key.token)).status).toBe(400);
  await sql(`update api_keys set scope = 'personal' where id = ?`, [key.keyId]);
  for (const app of [stack.app, second]) {
    expect(await cacheOf(app).sync(SYNC_BOUND_MS)).toBe(true);
    const refused = await write(app, key.token);
    expect(refused.status).toBe(403);
    // The safe projection for a personal key: the principal was read again.
    const safe = await read(app, key.token);
    expect(safe.status).toBe(200);
    expect((safe.body as { workspace: { redaction?: unknown } }).workspace.redaction).toBeDefined();
  }
});

test('a role downgrade, a removed member and a banned user take effect in every process', async () => {
  const demoted = await addUserWithKey(stack.app, stack.ws, 'member');
  const removed = await addUserWithKey(stack.app, stack.ws, 'member');
  const banned = await addUserWithKey(stack.app, stack.ws, 'member');
  for (const k of [demoted, removed, banned]) {
    await warm(k.token);
    expect((await write(second, k.token)).status).toBe(400);
  }
  await sql(`update memberships set role = 'viewer' where user_id = ?`, [demoted.userId]);
  await sql(`delete from memberships where user_id = ?`, [removed.userId]);
  await sql(`update users set status = 'banned' where id = ?`, [banned.userId]);
  for (const app of [stack.app, second]) {
    expect(await cacheOf(app).sync(SYNC_BOUND_MS)).toBe(true);
    expect((await write(app, demoted.token)).status).toBe(403);
    expect((await read(app, removed.token)).status).toBe(401);
    expect((await read(app, banned.token)).status).toBe(401);
  }
});

test('a signed-out session is refused on the very next request, and by another process once it heard', async () => {
  const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
  for (const app of [stack.app, second]) expect((await http(app, 'GET', '/api/auth/session', { cookie })).status).toBe(200);
  expect((await http(stack.app, 'POST', '/api/auth/sign-out', { cookie })).status).toBe(200);
  expect((await http(stack.app, 'GET', '/api/auth/session', { cookie })).status).toBe(401);
  expect(await cacheOf(second).sync(SYNC_BOUND_MS)).toBe(true);
  expect((await http(second, 'GET', '/api/auth/session', { cookie })).status).toBe(401);
});

test('a process whose notification connection is lost serves nothing from its cache until it listens again', async () => {
  const key = await addUserWithKey(stack.app, stack.ws, 'member');
  await warm(key.token);
  await sql(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ? and pid <> pg_backend_pid()`, [
    'svc-credential-cache',
  ]);
  // Every listener of the database went: both apps notice on their own (a "hung" bound only).
  for (const app of [stack.app, second]) await until(() => !cacheOf(app).active);
  // A change nobody could announce: both processes read it again anyway.
  await sql(`update api_keys set revoked_at = now() where id = ?`, [key.keyId]);
  for (const app of [stack.app, second]) expect((await read(app, key.token)).status).toBe(401);
  // And they listen again by themselves.
  for (const app of [stack.app, second]) await until(() => cacheOf(app).active);
});

test('lastUsedAt still follows uses served from the cache', async () => {
  const key = await addUserWithKey(stack.app, stack.ws, 'member');
  await warm(key.token);
  const usedAt = async () =>
    ((await sql('select last_used_at from api_keys where id = ?', [key.keyId])) as Array<{ last_used_at: string }>)[0].last_used_at;
  const first = new Date(await usedAt()).getTime();
  // A use more than the write window later is written before its request is answered.
  await new Promise((r) => setTimeout(r, 1_100));
  expect((await read(stack.app, key.token)).status).toBe(200);
  expect(new Date(await usedAt()).getTime()).toBeGreaterThan(first);
});

/** Polls `ok` every 20 ms; fails after 20 s ("hung", not "slow"). */
async function until(ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('condition not reached within 20 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}
