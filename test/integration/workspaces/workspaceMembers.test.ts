import { MembershipSchema, UserSchema } from '../../../db/entities';
import { addUserWithKey, createWorkspace, http, startTestApp, type TestApp, type WorkspaceFixture } from '../../support/harness';

let app: TestApp;
let ws: WorkspaceFixture;

beforeAll(async () => {
  app = await startTestApp();
  ws = await createWorkspace(app, 'Members workspace');
});
afterAll(() => app.close());

const uniqueEmail = (tag: string) => `${tag}-${Math.random().toString(36).slice(2)}@example.test`;
const add = (body: unknown, token = ws.token, headers?: Record<string, string>) =>
  http(app, 'POST', '/api/v1/workspace-members', { token, body, headers });

describe('POST /api/v1/workspace-members', () => {
  test('an unknown email creates an invited user and its membership', async () => {
    const email = uniqueEmail('invitee');
    const res = await add({ email: `  ${email.toUpperCase()} `, role: 'viewer' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ invited: true, member: { workspaceId: ws.workspaceId, role: 'viewer', user: { email, status: 'invited' } } });
    const user = await app.orm.em.fork().findOneOrFail(UserSchema, { email });
    expect(user.passwordHash).toBeNull();
  });

  test('an existing user is added without being re-invited; adding them twice is a 409', async () => {
    const other = await createWorkspace(app, 'Elsewhere');
    const res = await add({ email: other.ownerEmail, role: 'admin' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ invited: false, member: { userId: other.ownerId, role: 'admin', user: { status: 'active' } } });
    const again = await add({ email: other.ownerEmail, role: 'member' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already a member/);
  });

  test.each([
    [{ email: 'x@example.test', role: 'owner' }, /role/],
    [{ email: 'x@example.test', role: 'superadmin' }, /role/],
    [{ role: 'member' }, /email/],
    [{ email: '', role: 'member' }, /email/],
    [{ email: 'not-an-email', role: 'member' }, /email/],
    [{ email: 'x@example.test' }, /role/],
  ])('%j is a 400 and writes nothing', async (body, message) => {
    const before = await app.orm.em.fork().count(MembershipSchema, { workspaceId: ws.workspaceId });
    const res = await add(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
    expect(await app.orm.em.fork().count(MembershipSchema, { workspaceId: ws.workspaceId })).toBe(before);
  });

  test('needs an Admin or Owner behind a workspace key', async () => {
    for (const role of ['member', 'viewer'] as const) {
      const key = await addUserWithKey(app, ws, role);
      const res = await add({ email: uniqueEmail(role), role: 'member' }, key.token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Admin or Owner role required.' });
    }
    const admin = await addUserWithKey(app, ws, 'admin');
    expect((await add({ email: uniqueEmail('by-admin'), role: 'member' }, admin.token)).status).toBe(201);
  });
});

describe('Idempotency-Key', () => {
  test('a replay returns the stored status and body with Idempotency-Replayed: true, and does the work once', async () => {
    const email = uniqueEmail('idem');
    const headers = { 'idempotency-key': `key-${email}` };
    const first = await add({ email, role: 'member' }, ws.token, headers);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();

    const replay = await add({ role: 'member', email }, ws.token, headers); // same body, keys in another order
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(await app.orm.em.fork().count(UserSchema, { email })).toBe(1);
  });

  test('the same key with a different body is a 409', async () => {
    const headers = { 'idempotency-key': `key-${uniqueEmail('diff')}` };
    expect((await add({ email: uniqueEmail('one'), role: 'member' }, ws.token, headers)).status).toBe(201);
    const other = await add({ email: uniqueEmail('two'), role: 'member' }, ws.token, headers);
    expect(other.status).toBe(409);
    expect(other.body.error).toMatch(/different request/);
  });

  test('the key is bound to the principal: another key of the workspace gets 409', async () => {
    const admin = await addUserWithKey(app, ws, 'admin');
    const email = uniqueEmail('bound');
    const headers = { 'idempotency-key': `key-${email}` };
    expect((await add({ email, role: 'member' }, ws.token, headers)).status).toBe(201);
    const res = await add({ email, role: 'member' }, admin.token, headers);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/another principal/);
  });

  test('keys are per workspace: the same key in another workspace is independent', async () => {
    const other = await createWorkspace(app, 'Idem other');
    const key = `shared-${uniqueEmail('k')}`;
    expect((await add({ email: uniqueEmail('a'), role: 'member' }, ws.token, { 'idempotency-key': key })).status).toBe(201);
    const res = await add({ email: uniqueEmail('b'), role: 'member' }, other.token, { 'idempotency-key': key });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotency-replayed')).toBeNull();
  });

  test('a failed request is not stored: the key can be retried after fixing the cause', async () => {
    const other = await createWorkspace(app, 'Conflict source');
    const headers = { 'idempotency-key': `retry-${uniqueEmail('r')}` };
    expect((await add({ email: other.ownerEmail, role: 'member' }, ws.token)).status).toBe(201);
    const conflictRes = await add({ email: other.ownerEmail, role: 'member' }, ws.token, headers);
    expect(conflictRes.status).toBe(409);
    // Remove the cause, retry with the same key and body: it runs for real this time.
    await app.orm.em.fork().nativeDelete(MembershipSchema, { workspaceId: ws.workspaceId, userId: other.ownerId });
    const retry = await add({ email: other.ownerEmail, role: 'member' }, ws.token, headers);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotency-replayed')).toBeNull();
  });

  test('records expire after 24 hours', async () => {
    const email = uniqueEmail('expire');
    const key = `exp-${email}`;
    expect((await add({ email, role: 'member' }, ws.token, { 'idempotency-key': key })).status).toBe(201);
    await app.orm.em.fork().getConnection().execute(
      `update idempotency_records set expires_at = now() - interval '1 second' where key = ?`,
      [key],
    );
    const res = await add({ email: uniqueEmail('fresh'), role: 'member' }, ws.token, { 'idempotency-key': key });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotency-replayed')).toBeNull();
  });

  test('concurrent requests with one key run the work once', async () => {
    const email = uniqueEmail('concurrent');
    const headers = { 'idempotency-key': `conc-${email}` };
    const results = await Promise.all(Array.from({ length: 6 }, () => add({ email, role: 'member' }, ws.token, headers)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(results.filter((r) => r.status === 201 && r.headers.get('idempotency-replayed') === null)).toHaveLength(1);
    expect(await app.orm.em.fork().count(UserSchema, { email })).toBe(1);
  });

  test('a malformed key is a 400', async () => {
    const res = await add({ email: uniqueEmail('bad'), role: 'member' }, ws.token, { 'idempotency-key': 'x'.repeat(300) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/Idempotency-Key/);
  });
});
