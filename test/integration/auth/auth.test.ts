import { ApiKeySchema, MembershipSchema, UserSchema } from '../../../db/entities';
import { addUserWithKey, createWorkspace, http, startTestApp, type TestApp, type WorkspaceFixture } from '../../support/harness';

let app: TestApp;
let a: WorkspaceFixture;
let b: WorkspaceFixture;

beforeAll(async () => {
  app = await startTestApp();
  a = await createWorkspace(app, 'Workspace A');
  b = await createWorkspace(app, 'Workspace B');
});
afterAll(() => app.close());

const BEARER_REQUIRED = { error: 'Valid bearer API key is required' };
const WORKSPACE_KEY_REQUIRED = { error: 'A workspace API key is required.' };

describe('bearer authentication', () => {
  test('a valid workspace key reads its own workspace', async () => {
    const res = await http(app, 'GET', '/api/v1/workspaces', { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body.workspace).toMatchObject({ id: a.workspaceId, name: 'Workspace A' });
    expect(res.body.workspace.redaction).toBeUndefined();
  });

  test.each([
    ['no header', {}],
    ['X-API-Key header instead of Authorization', { 'x-api-key': 'TOKEN' }],
    ['Basic scheme', { authorization: 'Basic TOKEN' }],
    ['bare token without scheme', { authorization: 'TOKEN' }],
    ['token without the hise_ prefix', { authorization: 'Bearer abc_TOKENREST' }],
    ['unknown hise_ token', { authorization: `Bearer hise_${'A'.repeat(32)}` }],
    ['truncated token', { authorization: 'Bearer TOKEN_SHORT' }],
  ])('%s gives 401 with the exact message', async (_name, headers) => {
    const real = a.token;
    const filled = Object.fromEntries(
      Object.entries(headers as Record<string, string>).map(([k, v]) => [
        k,
        v.replace('TOKEN_SHORT', real.slice(0, 20)).replace('TOKEN', real),
      ]),
    );
    const res = await http(app, 'GET', '/api/v1/workspaces', { headers: filled });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BEARER_REQUIRED);
  });

  test.each(['bearer', 'BEARER'])('the scheme is case-insensitive (RFC 9110): %s is accepted', async (scheme) => {
    const res = await http(app, 'GET', '/api/v1/workspaces', { headers: { authorization: `${scheme} ${a.token}` } });
    expect(res.status).toBe(200);
    expect(res.body.workspace).toMatchObject({ id: a.workspaceId });
  });

  test('successful verification updates lastUsedAt', async () => {
    const key = await addUserWithKey(app, a, 'member');
    const before = await app.orm.em.fork().findOneOrFail(ApiKeySchema, { id: key.keyId });
    expect(before.lastUsedAt).toBeNull();
    await http(app, 'GET', '/api/v1/workspaces', { token: key.token });
    const after = await app.orm.em.fork().findOneOrFail(ApiKeySchema, { id: key.keyId });
    expect(after.lastUsedAt).toBeInstanceOf(Date);
  });

  test('only a hash of the token is stored', async () => {
    const rows: Array<Record<string, unknown>> = await app.orm.em
      .fork()
      .getConnection()
      .execute('select * from api_keys where id = ?', [a.keyId]);
    expect(JSON.stringify(rows)).not.toContain(a.token);
    expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a key whose user left the workspace gives 401', async () => {
    const key = await addUserWithKey(app, a, 'member');
    expect((await http(app, 'GET', '/api/v1/workspaces', { token: key.token })).status).toBe(200);
    await app.orm.em.fork().nativeDelete(MembershipSchema, { workspaceId: a.workspaceId, userId: key.userId });
    const usedBefore = (await app.orm.em.fork().findOneOrFail(ApiKeySchema, { id: key.keyId })).lastUsedAt;
    const res = await http(app, 'GET', '/api/v1/workspaces', { token: key.token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BEARER_REQUIRED);
    // A failed verification is not a use.
    expect((await app.orm.em.fork().findOneOrFail(ApiKeySchema, { id: key.keyId })).lastUsedAt).toEqual(usedBefore);
  });

  test('a key of a banned user gives 401', async () => {
    const key = await addUserWithKey(app, a, 'admin');
    await app.orm.em.fork().nativeUpdate(UserSchema, { id: key.userId }, { status: 'banned' });
    const res = await http(app, 'GET', '/api/v1/workspaces', { token: key.token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BEARER_REQUIRED);
  });

  test('a stored unknown scope fails authentication and is never upgraded to workspace', async () => {
    const key = await addUserWithKey(app, a, 'owner');
    await app.orm.em.fork().nativeUpdate(ApiKeySchema, { id: key.keyId }, { scope: 'superuser' });
    for (const [method, path] of [
      ['GET', '/api/v1/workspaces'],
      ['POST', '/api/v1/workspace-members'],
    ]) {
      const res = await http(app, method, path, {
        token: key.token,
        body: method === 'POST' ? { email: 'x@example.test', role: 'member' } : undefined,
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(BEARER_REQUIRED);
    }
  });
});

describe('scopes', () => {
  test.each(['personal', 'copilot'] as const)(
    'a %s key gets the workspace-safe.v1 projection on safe reads and 403 elsewhere',
    async (scope) => {
      const key = await addUserWithKey(app, a, 'member', scope);
      const read = await http(app, 'GET', '/api/v1/workspaces', { token: key.token });
      expect(read.status).toBe(200);
      expect(read.body.workspace).toMatchObject({ id: a.workspaceId });
      expect(read.body.workspace.redaction).toEqual({
        applied: true,
        projection: 'safe-content',
        contractVersion: 'workspace-safe.v1',
        restrictedFields: [],
      });
      const write = await http(app, 'POST', '/api/v1/workspace-members', {
        token: key.token,
        body: { email: 'p@example.test', role: 'member' },
      });
      expect(write.status).toBe(403);
      expect(write.body).toEqual(WORKSPACE_KEY_REQUIRED);
    },
  );

  test.each(['organization', 'end_user_gateway'] as const)('REST v1 refuses %s keys with 403, even for reads', async (scope) => {
    const key = await addUserWithKey(app, a, 'admin', scope);
    for (const [method, path] of [
      ['GET', '/api/v1/workspaces'],
      ['POST', '/api/v1/workspace-members'],
    ]) {
      const res = await http(app, method, path, {
        token: key.token,
        body: method === 'POST' ? { email: 'o@example.test', role: 'member' } : undefined,
      });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(WORKSPACE_KEY_REQUIRED);
    }
  });

  test('an organization key stays valid (403, not 401) after its creator leaves the workspace', async () => {
    const key = await addUserWithKey(app, a, 'admin', 'organization');
    await app.orm.em.fork().nativeDelete(MembershipSchema, { workspaceId: a.workspaceId, userId: key.userId });
    const res = await http(app, 'GET', '/api/v1/workspaces', { token: key.token });
    expect(res.status).toBe(403);
  });

  test('a viewer workspace key gets the safe projection; a member key the full one', async () => {
    const viewer = await addUserWithKey(app, a, 'viewer');
    const member = await addUserWithKey(app, a, 'member');
    const asViewer = await http(app, 'GET', '/api/v1/workspaces', { token: viewer.token });
    expect(asViewer.body.workspace.redaction).toMatchObject({ applied: true, contractVersion: 'workspace-safe.v1' });
    const asMember = await http(app, 'GET', '/api/v1/workspaces', { token: member.token });
    expect(asMember.body.workspace.redaction).toBeUndefined();
  });
});

describe('workspace isolation', () => {
  test("a key of workspace B never reads or writes workspace A's data", async () => {
    const res = await http(app, 'GET', '/api/v1/workspaces', { token: b.token });
    expect(res.body.workspace.id).toBe(b.workspaceId);
    expect(res.text).not.toContain(a.workspaceId);

    const email = `isolation-${Date.now()}@example.test`;
    const added = await http(app, 'POST', '/api/v1/workspace-members', { token: b.token, body: { email, role: 'member' } });
    expect(added.status).toBe(201);
    expect(added.body.invitation.workspaceId).toBe(b.workspaceId);
    const invitee = await app.orm.em.fork().findOneOrFail(UserSchema, { email });
    const inA = await app.orm.em.fork().count(MembershipSchema, { workspaceId: a.workspaceId, userId: invitee.id });
    expect(inA).toBe(0);
  });

  test('request bodies cannot switch workspace', async () => {
    const email = `switch-${Date.now()}@example.test`;
    const res = await http(app, 'POST', '/api/v1/workspace-members', {
      token: b.token,
      body: { email, role: 'member', workspaceId: a.workspaceId },
    });
    expect(res.status).toBe(201);
    expect(res.body.invitation.workspaceId).toBe(b.workspaceId);
  });
});
