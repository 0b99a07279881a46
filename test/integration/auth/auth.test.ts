import { ApiKeySchema, MembershipSchema, UserSchema } from '../../../db/entities';
import type { z } from 'zod';
import type { redactionSchema, workspaceSchema } from '../../../api/schemas';
import type { invitationSchema } from '../../../api/schemas/invitations';
import { addUserWithKey, authCacheSettled, http, useTestStack, type WorkspaceFixture } from '../../kit';

/** GET /api/v1/workspaces: the caller's workspace, with `redaction` on the safe projection. */
type WorkspaceAnswer = { workspace: z.infer<typeof workspaceSchema> & { redaction?: z.infer<typeof redactionSchema> } };
/** POST /api/v1/workspace-members. */
type InvitedAnswer = { invitation: z.infer<typeof invitationSchema>; invited: true };

const stack = useTestStack({ worker: false, workspaceName: 'Workspace A' });
let b: WorkspaceFixture;

beforeAll(async () => {
  b = await stack.workspace('Workspace B');
});

const BEARER_REQUIRED = { error: 'Valid bearer API key is required' };
const WORKSPACE_KEY_REQUIRED = { error: 'A workspace API key is required.' };

describe('bearer authentication', () => {
  test('a valid workspace key reads its own workspace', async () => {
    const res = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: stack.ws.token });
    expect(res.status).toBe(200);
    expect(res.body.workspace).toMatchObject({ id: stack.ws.workspaceId, name: 'Workspace A' });
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
    const real = stack.ws.token;
    const filled = Object.fromEntries(
      Object.entries(headers as Record<string, string>).map(([k, v]) => [
        k,
        v.replace('TOKEN_SHORT', real.slice(0, 20)).replace('TOKEN', real),
      ]),
    );
    const res = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { headers: filled });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BEARER_REQUIRED);
  });

  test.each(['bearer', 'BEARER'])('the scheme is case-insensitive (RFC 9110): %s is accepted', async (scheme) => {
    const res = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', {
      headers: { authorization: `${scheme} ${stack.ws.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.body.workspace).toMatchObject({ id: stack.ws.workspaceId });
  });

  test('successful verification updates lastUsedAt', async () => {
    const key = await addUserWithKey(stack.app, stack.ws, 'member');
    const before = await stack.app.orm.em.fork().findOneOrFail(ApiKeySchema, { id: key.keyId });
    expect(before.lastUsedAt).toBeNull();
    await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: key.token });
    const after = await stack.app.orm.em.fork().findOneOrFail(ApiKeySchema, { id: key.keyId });
    expect(after.lastUsedAt).toBeInstanceOf(Date);
  });

  test('only a hash of the token is stored', async () => {
    const rows: Array<Record<string, unknown>> = await stack.app.orm.em
      .fork()
      .getConnection()
      .execute('select * from api_keys where id = ?', [stack.ws.keyId]);
    expect(JSON.stringify(rows)).not.toContain(stack.ws.token);
    expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('a key whose user left the workspace gives 401', async () => {
    const key = await addUserWithKey(stack.app, stack.ws, 'member');
    expect((await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: key.token })).status).toBe(200);
    await stack.app.orm.em.fork().nativeDelete(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: key.userId });
    // A change made in SQL reaches the key cache by notification: wait for it rather than race it.
    await authCacheSettled(stack.app);
    const usedBefore = (await stack.app.orm.em.fork().findOneOrFail(ApiKeySchema, { id: key.keyId })).lastUsedAt;
    const res = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: key.token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BEARER_REQUIRED);
    // A failed verification is not a use.
    expect((await stack.app.orm.em.fork().findOneOrFail(ApiKeySchema, { id: key.keyId })).lastUsedAt).toEqual(usedBefore);
  });

  test('a key of a banned user gives 401', async () => {
    const key = await addUserWithKey(stack.app, stack.ws, 'admin');
    await stack.app.orm.em.fork().nativeUpdate(UserSchema, { id: key.userId }, { status: 'banned' });
    const res = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: key.token });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BEARER_REQUIRED);
  });

  test('a stored unknown scope fails authentication and is never upgraded to workspace', async () => {
    const key = await addUserWithKey(stack.app, stack.ws, 'owner');
    await stack.app.orm.em.fork().nativeUpdate(ApiKeySchema, { id: key.keyId }, { scope: 'superuser' });
    for (const [method, path] of [
      ['GET', '/api/v1/workspaces'],
      ['POST', '/api/v1/workspace-members'],
    ]) {
      const res = await http(stack.app, method, path, {
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
      const key = await addUserWithKey(stack.app, stack.ws, 'member', scope);
      const read = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: key.token });
      expect(read.status).toBe(200);
      expect(read.body.workspace).toMatchObject({ id: stack.ws.workspaceId });
      expect(read.body.workspace.redaction).toEqual({
        applied: true,
        projection: 'safe-content',
        contractVersion: 'workspace-safe.v1',
        restrictedFields: [],
      });
      const write = await http(stack.app, 'POST', '/api/v1/workspace-members', {
        token: key.token,
        body: { email: 'p@example.test', role: 'member' },
      });
      expect(write.status).toBe(403);
      expect(write.body).toEqual(WORKSPACE_KEY_REQUIRED);
    },
  );

  test.each(['organization', 'end_user_gateway'] as const)('REST v1 refuses %s keys with 403, even for reads', async (scope) => {
    const key = await addUserWithKey(stack.app, stack.ws, 'admin', scope);
    for (const [method, path] of [
      ['GET', '/api/v1/workspaces'],
      ['POST', '/api/v1/workspace-members'],
    ]) {
      const res = await http(stack.app, method, path, {
        token: key.token,
        body: method === 'POST' ? { email: 'o@example.test', role: 'member' } : undefined,
      });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(WORKSPACE_KEY_REQUIRED);
    }
  });

  test('an organization key stays valid (403, not 401) after its creator leaves the workspace', async () => {
    const key = await addUserWithKey(stack.app, stack.ws, 'admin', 'organization');
    await stack.app.orm.em.fork().nativeDelete(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: key.userId });
    const res = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: key.token });
    expect(res.status).toBe(403);
  });

  test('a viewer workspace key gets the safe projection; a member key the full one', async () => {
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    const member = await addUserWithKey(stack.app, stack.ws, 'member');
    const asViewer = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: viewer.token });
    expect(asViewer.body.workspace.redaction).toMatchObject({ applied: true, contractVersion: 'workspace-safe.v1' });
    const asMember = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: member.token });
    expect(asMember.body.workspace.redaction).toBeUndefined();
  });
});

describe('workspace isolation', () => {
  test("a key of workspace B never reads or writes workspace A's data", async () => {
    const res = await http<WorkspaceAnswer>(stack.app, 'GET', '/api/v1/workspaces', { token: b.token });
    expect(res.body.workspace.id).toBe(b.workspaceId);
    expect(res.text).not.toContain(stack.ws.workspaceId);

    const email = `isolation-${Date.now()}@example.test`;
    const added = await http<InvitedAnswer>(stack.app, 'POST', '/api/v1/workspace-members', {
      token: b.token,
      body: { email, role: 'member' },
    });
    expect(added.status).toBe(201);
    expect(added.body.invitation.workspaceId).toBe(b.workspaceId);
    const invitee = await stack.app.orm.em.fork().findOneOrFail(UserSchema, { email });
    const inA = await stack.app.orm.em.fork().count(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: invitee.id });
    expect(inA).toBe(0);
  });

  test('request bodies cannot switch workspace', async () => {
    const email = `switch-${Date.now()}@example.test`;
    const res = await http<InvitedAnswer>(stack.app, 'POST', '/api/v1/workspace-members', {
      token: b.token,
      body: { email, role: 'member', workspaceId: stack.ws.workspaceId },
    });
    expect(res.status).toBe(201);
    expect(res.body.invitation.workspaceId).toBe(b.workspaceId);
  });
});
