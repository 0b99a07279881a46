import { AuditLogSchema } from '../../../db/entities';
import { startTestApp } from '../../support/harness';
import {
  addUserWithKey,
  client,
  createWorkspace,
  http,
  signInCookie,
  useTestStack,
  type ApiError,
  type ApiKeyList,
  type CreatedApiKey,
  type RevokedApiKey,
} from '../../kit';

/** POST /api/api-keys; on a refusal `{ error }`. */
type CreatedKey = CreatedApiKey & Partial<ApiError>;

const stack = useTestStack({ worker: false, workspaceName: 'Keys workspace' });
let cookie: string;

beforeAll(async () => {
  cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
});

const create = (body: unknown, c = cookie, headers?: Record<string, string>) =>
  http<CreatedKey>(stack.app, 'POST', '/api/api-keys', { cookie: c, body, headers });

describe('session API key routes', () => {
  test('create answers 201 with the key and a token shown once; the token works at once', async () => {
    const res = await create({ name: 'CI key' });
    expect(res.status).toBe(201);
    expect(res.body.token).toMatch(/^hise_[A-Za-z0-9_-]{32}$/);
    expect(res.body.apiKey).toMatchObject({ name: 'CI key', scope: 'workspace', workspaceId: stack.ws.workspaceId, lastUsedAt: null });
    expect(res.body.apiKey.createdAt).toEqual(expect.any(String));
    expect(JSON.stringify(res.body.apiKey)).not.toContain(res.body.token);

    const used = await http(stack.app, 'GET', '/api/v1/workspaces', { token: res.body.token });
    expect(used.status).toBe(200);
    const list = await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie });
    const listed = list.body.apiKeys.find((k) => k.id === res.body.apiKey.id);
    expect(listed?.lastUsedAt).toEqual(expect.any(String));
    expect(list.text).not.toContain(res.body.token);
  });

  test('a duplicate name in the same scope (trimmed, case-insensitive) is a 400; another scope may reuse it', async () => {
    expect((await create({ name: 'Deploy bot' })).status).toBe(201);
    const dup = await create({ name: '  DEPLOY BOT ' });
    expect(dup.status).toBe(400);
    expect(dup.body.error).toMatch(/already exists/);
    expect((await create({ name: 'Deploy bot', scope: 'personal' })).status).toBe(201);
  });

  test('concurrent creates with one name produce exactly one key', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => create({ name: 'Race key' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400]);
  });

  test('a revoked name can be used again', async () => {
    const first = await create({ name: 'Rotating' });
    await http(stack.app, 'DELETE', `/api/api-keys/${first.body.apiKey.id}`, { cookie });
    expect((await create({ name: 'Rotating' })).status).toBe(201);
  });

  test.each([
    [{ name: 'x', scope: 'superuser' }, /scope/],
    [{ name: '' }, /name/],
    [{}, /name/],
    [{ name: 'x', surprise: true }, /surprise|Unrecognized/i],
    [{ name: 'x', scope: 'workspace', organization: { workspaceSelection: 'organization', permission: 'read' } }, /organization/],
    [{ name: 'x', allowedWorkflowIds: ['wf_1'] }, /allowedWorkflowIds/],
  ])('invalid create body %j is a 400', async (body, message) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
  });

  test("organization keys validate their selection against the creator's workspaces", async () => {
    const foreign = await createWorkspace(stack.app, 'Not mine');
    const bad = await create({
      name: 'Org bad',
      scope: 'organization',
      organization: { workspaceSelection: 'selected', workspaceIds: [foreign.workspaceId], permission: 'read' },
    });
    expect(bad.status).toBe(400);
    const empty = await create({
      name: 'Org empty',
      scope: 'organization',
      organization: { workspaceSelection: 'selected', workspaceIds: [], permission: 'read' },
    });
    expect(empty.status).toBe(400);
    const missing = await create({ name: 'Org missing', scope: 'organization' });
    expect(missing.status).toBe(400);
    const badPermission = await create({
      name: 'Org perm',
      scope: 'organization',
      organization: { workspaceSelection: 'organization', permission: 'admin' },
    });
    expect(badPermission.status).toBe(400);

    const ok = await create({
      name: 'Org ok',
      scope: 'organization',
      organization: { workspaceSelection: 'selected', workspaceIds: [stack.ws.workspaceId], permission: 'write' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.apiKey).toMatchObject({
      scope: 'organization',
      workspaceId: null,
      organization: { workspaceSelection: 'selected', workspaceIds: [stack.ws.workspaceId], permission: 'write' },
    });
    const all = await create({
      name: 'Org all',
      scope: 'organization',
      organization: { workspaceSelection: 'organization', permission: 'read' },
    });
    expect(all.body.apiKey.organization?.workspaceIds).toEqual([stack.ws.workspaceId]);
    // Admins of a workspace in the selection see and can revoke it.
    const list = await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie });
    expect(list.body.apiKeys.map((k) => k.id)).toContain(ok.body.apiKey.id);
  });

  test('end_user_gateway keys are refused while end users are disabled, and need allowedWorkflowIds of this workspace', async () => {
    const res = await create({ name: 'Gateway', scope: 'end_user_gateway', allowedWorkflowIds: ['wf_1'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/not enabled/);
    const enabled = await startTestApp({ endUsersEnabled: true });
    try {
      const c = await signInCookie(enabled, stack.ws.ownerEmail, stack.ws.ownerPassword);
      const none = await http<CreatedKey>(enabled, 'POST', '/api/api-keys', {
        cookie: c,
        body: { name: 'Gateway', scope: 'end_user_gateway' },
      });
      expect(none.status).toBe(400);
      expect(none.body.error).toMatch(/allowedWorkflowIds/);
      const unknown = await http<CreatedKey>(enabled, 'POST', '/api/api-keys', {
        cookie: c,
        body: { name: 'Gateway', scope: 'end_user_gateway', allowedWorkflowIds: ['wf_nope'] },
      });
      expect(unknown.status).toBe(400);
      const foreign = await createWorkspace(enabled, 'Foreign flows');
      const foreignFlow = await client(enabled, foreign.token).workflows.create({});
      const notOurs = await http<CreatedKey>(enabled, 'POST', '/api/api-keys', {
        cookie: c,
        body: { name: 'Gateway', scope: 'end_user_gateway', allowedWorkflowIds: [foreignFlow.body.workflow.id] },
      });
      expect(notOurs.status).toBe(400);
      const ours = await client(enabled, stack.ws.token).workflows.create({});
      const ok = await http<CreatedKey>(enabled, 'POST', '/api/api-keys', {
        cookie: c,
        body: { name: 'Gateway', scope: 'end_user_gateway', allowedWorkflowIds: [ours.body.workflow.id] },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.apiKey).toMatchObject({ scope: 'end_user_gateway', allowedWorkflowIds: [ours.body.workflow.id] });
      // Gateway keys are refused by the other v1 routes.
      expect((await http(enabled, 'GET', '/api/v1/workflows', { token: ok.body.token })).status).toBe(403);
    } finally {
      await enabled.close();
    }
  });

  test('members, viewers and signed-out callers cannot manage keys', async () => {
    for (const role of ['member', 'viewer'] as const) {
      const user = await addUserWithKey(stack.app, stack.ws, role);
      await stack.app.orm.em
        .fork()
        .getConnection()
        .execute(`update users set password_hash = (select password_hash from users where id = ?), status = 'active' where id = ?`, [
          stack.ws.ownerId,
          user.userId,
        ]);
      const c = await signInCookie(stack.app, user.email, stack.ws.ownerPassword);
      for (const res of [await http(stack.app, 'GET', '/api/api-keys', { cookie: c }), await create({ name: `${role} key` }, c)]) {
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: 'Admin or Owner role required.' });
      }
    }
    expect((await http(stack.app, 'GET', '/api/api-keys')).status).toBe(401);
    // A bearer key is not a session: key management needs sign-in.
    expect((await http(stack.app, 'GET', '/api/api-keys', { token: stack.ws.token })).status).toBe(401);
  });

  test('a cross-origin create is refused before anything is written', async () => {
    const res = await create({ name: 'CSRF key' }, cookie, { origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    const list = await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie });
    expect(list.body.apiKeys.map((k) => k.name)).not.toContain('CSRF key');
  });

  test('revocation is immediate and audited as api_key.revoke with severity critical', async () => {
    const created = await create({ name: 'Short lived' });
    const token = created.body.token;
    expect((await http(stack.app, 'GET', '/api/v1/workspaces', { token })).status).toBe(200);

    const res = await http<RevokedApiKey>(stack.app, 'DELETE', `/api/api-keys/${created.body.apiKey.id}`, { cookie });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ deleted: true, apiKey: { id: created.body.apiKey.id } });

    const next = await http(stack.app, 'GET', '/api/v1/workspaces', { token });
    expect(next.status).toBe(401);
    expect(next.body).toEqual({ error: 'Valid bearer API key is required' });

    const audit = await stack.app.orm.em.fork().find(AuditLogSchema, { action: 'api_key.revoke', targetId: created.body.apiKey.id });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ severity: 'critical', workspaceId: stack.ws.workspaceId, actorUserId: stack.ws.ownerId });

    const again = await http(stack.app, 'DELETE', `/api/api-keys/${created.body.apiKey.id}`, { cookie });
    expect(again.status).toBe(404);
  });

  test("an admin of another workspace cannot see or revoke this workspace's keys", async () => {
    const other = await createWorkspace(stack.app, 'Other keys');
    const otherCookie = await signInCookie(stack.app, other.ownerEmail, other.ownerPassword);
    const list = await http<ApiKeyList>(stack.app, 'GET', '/api/api-keys', { cookie: otherCookie });
    expect(list.body.apiKeys.map((k) => k.id)).not.toContain(stack.ws.keyId);
    const res = await http(stack.app, 'DELETE', `/api/api-keys/${stack.ws.keyId}`, { cookie: otherCookie });
    expect(res.status).toBe(404);
    expect((await http(stack.app, 'GET', '/api/v1/workspaces', { token: stack.ws.token })).status).toBe(200);
    // Nor create a key in it by naming its id.
    const foreign = await http<CreatedKey>(stack.app, 'POST', '/api/api-keys', {
      cookie: otherCookie,
      body: { name: 'sneaky', workspaceId: stack.ws.workspaceId },
    });
    expect(foreign.status).toBe(403);
  });
});
