import { MembershipSchema, UserSchema } from '../../../db/entities';
import { grantMembership } from '../../../services/accounts/workspaces';
import type { z } from 'zod';
import type { apiKeySchema } from '../../../api/schemas';
import type { invitationSchema, receivedInvitationSchema } from '../../../api/schemas/invitations';
import { addUserWithKey, createWorkspace, signInCookie, useTestStack } from '../../kit';

type Invitation = z.infer<typeof invitationSchema>;
type ApiKey = z.infer<typeof apiKeySchema>;
/** POST /workspace-members: an invitation (or the error of a refused one). */
type Invited = { invitation: Invitation; invited: true } & { error?: string };
/** POST /invitations/{id}/accept|decline. */
type Decided = { invitation: Invitation } & { error?: string };

const stack = useTestStack({ worker: false, workspaceName: 'Members workspace' });

const uniqueEmail = (tag: string) => `${tag}-${Math.random().toString(36).slice(2)}@example.test`;
const add = (body: unknown, token = stack.ws.token, headers?: Record<string, string>) =>
  stack.as(token).post<Invited>('/api/v1/workspace-members', body, { headers });

describe('POST /api/v1/workspace-members', () => {
  test('an unknown email gets an invitation (and an invited user), not a membership', async () => {
    const email = uniqueEmail('invitee');
    const res = await add({ email: `  ${email.toUpperCase()} `, role: 'viewer' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      invited: true,
      invitation: {
        id: expect.stringMatching(/^inv_/),
        workspaceId: stack.ws.workspaceId,
        email,
        role: 'viewer',
        status: 'pending',
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
      },
    });
    const user = await stack.app.orm.em.fork().findOneOrFail(UserSchema, { email });
    expect(user.passwordHash).toBeNull();
    expect(await stack.app.orm.em.fork().count(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: user.id })).toBe(0);
  });

  test('a registered user is invited, not added: same answer shape as for an unknown email, nothing about their account', async () => {
    const other = await createWorkspace(stack.app, 'Elsewhere');
    const res = await add({ email: other.ownerEmail, role: 'admin' });
    expect(res.status).toBe(201);
    const unknown = await add({ email: uniqueEmail('nobody'), role: 'admin' });
    const shape = (body: Record<string, unknown>) =>
      JSON.stringify(Object.keys(body).sort()) + JSON.stringify(Object.keys(body.invitation as object).sort());
    expect(shape(res.body)).toBe(shape(unknown.body));
    expect(res.body).toMatchObject({ invited: true, invitation: { status: 'pending', role: 'admin', email: other.ownerEmail } });
    expect(res.text).not.toContain(other.ownerId);
    expect(await stack.app.orm.em.fork().count(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: other.ownerId })).toBe(0);
    // Inviting again renews the pending invitation instead of adding a second one.
    const again = await add({ email: other.ownerEmail, role: 'member' });
    expect(again.status).toBe(201);
    expect(again.body.invitation).toMatchObject({ id: res.body.invitation.id, role: 'member' });
  });

  test('a current member is a 409', async () => {
    const member = await addUserWithKey(stack.app, stack.ws, 'member');
    const res = await add({ email: member.email, role: 'viewer' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/already a member/);
  });

  test.each([
    [{ email: 'x@example.test', role: 'owner' }, /role/],
    [{ email: 'x@example.test', role: 'superadmin' }, /role/],
    [{ role: 'member' }, /email/],
    [{ email: '', role: 'member' }, /email/],
    [{ email: 'not-an-email', role: 'member' }, /email/],
    [{ email: 'x@example.test' }, /role/],
  ])('%j is a 400 and writes nothing', async (body, message) => {
    const before = await stack.app.orm.em.fork().count(MembershipSchema, { workspaceId: stack.ws.workspaceId });
    const res = await add(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
    expect(await stack.app.orm.em.fork().count(MembershipSchema, { workspaceId: stack.ws.workspaceId })).toBe(before);
  });

  test('needs an Admin or Owner behind a workspace key', async () => {
    for (const role of ['member', 'viewer'] as const) {
      const key = await addUserWithKey(stack.app, stack.ws, role);
      const res = await add({ email: uniqueEmail(role), role: 'member' }, key.token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Admin or Owner role required.' });
    }
    const admin = await addUserWithKey(stack.app, stack.ws, 'admin');
    expect((await add({ email: uniqueEmail('by-admin'), role: 'member' }, admin.token)).status).toBe(201);
  });
});

describe('Idempotency-Key', () => {
  test('a replay returns the stored status and body with Idempotency-Replayed: true, and does the work once', async () => {
    const email = uniqueEmail('idem');
    const headers = { 'idempotency-key': `key-${email}` };
    const first = await add({ email, role: 'member' }, stack.ws.token, headers);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();

    const replay = await add({ role: 'member', email }, stack.ws.token, headers); // same body, keys in another order
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(await stack.app.orm.em.fork().count(UserSchema, { email })).toBe(1);
  });

  test('the same key with a different body is a 409', async () => {
    const headers = { 'idempotency-key': `key-${uniqueEmail('diff')}` };
    expect((await add({ email: uniqueEmail('one'), role: 'member' }, stack.ws.token, headers)).status).toBe(201);
    const other = await add({ email: uniqueEmail('two'), role: 'member' }, stack.ws.token, headers);
    expect(other.status).toBe(409);
    expect(other.body.error).toMatch(/different request/);
  });

  test('the key is bound to the principal: another key of the workspace gets 409', async () => {
    const admin = await addUserWithKey(stack.app, stack.ws, 'admin');
    const email = uniqueEmail('bound');
    const headers = { 'idempotency-key': `key-${email}` };
    expect((await add({ email, role: 'member' }, stack.ws.token, headers)).status).toBe(201);
    const res = await add({ email, role: 'member' }, admin.token, headers);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/another principal/);
  });

  test('keys are per workspace: the same key in another workspace is independent', async () => {
    const other = await createWorkspace(stack.app, 'Idem other');
    const key = `shared-${uniqueEmail('k')}`;
    expect((await add({ email: uniqueEmail('a'), role: 'member' }, stack.ws.token, { 'idempotency-key': key })).status).toBe(201);
    const res = await add({ email: uniqueEmail('b'), role: 'member' }, other.token, { 'idempotency-key': key });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotency-replayed')).toBeNull();
  });

  test('a failed request is not stored: the key can be retried after fixing the cause', async () => {
    const other = await createWorkspace(stack.app, 'Conflict source');
    const headers = { 'idempotency-key': `retry-${uniqueEmail('r')}` };
    const owner = {
      kind: 'session' as const,
      sessionId: 'fixture',
      principalId: `user:${stack.ws.ownerId}`,
      userId: stack.ws.ownerId,
      workspaceId: stack.ws.workspaceId,
      role: 'owner' as const,
    };
    await grantMembership(stack.app.orm.em.fork(), owner, { email: other.ownerEmail, role: 'member' });
    const conflictRes = await add({ email: other.ownerEmail, role: 'member' }, stack.ws.token, headers);
    expect(conflictRes.status).toBe(409);
    // Remove the cause, retry with the same key and body: it runs for real this time.
    await stack.app.orm.em.fork().nativeDelete(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: other.ownerId });
    const retry = await add({ email: other.ownerEmail, role: 'member' }, stack.ws.token, headers);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotency-replayed')).toBeNull();
  });

  test('records expire after 24 hours', async () => {
    const email = uniqueEmail('expire');
    const key = `exp-${email}`;
    expect((await add({ email, role: 'member' }, stack.ws.token, { 'idempotency-key': key })).status).toBe(201);
    await stack.app.orm.em
      .fork()
      .getConnection()
      .execute(`update idempotency_records set expires_at = now() - interval '1 second' where key = ?`, [key]);
    const res = await add({ email: uniqueEmail('fresh'), role: 'member' }, stack.ws.token, { 'idempotency-key': key });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotency-replayed')).toBeNull();
  });

  test('concurrent requests with one key run the work once', async () => {
    const email = uniqueEmail('concurrent');
    const headers = { 'idempotency-key': `conc-${email}` };
    const results = await Promise.all(Array.from({ length: 6 }, () => add({ email, role: 'member' }, stack.ws.token, headers)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(results.filter((r) => r.status === 201 && r.headers.get('idempotency-replayed') === null)).toHaveLength(1);
    expect(await stack.app.orm.em.fork().count(UserSchema, { email })).toBe(1);
  });

  test('a malformed key is a 400', async () => {
    const res = await add({ email: uniqueEmail('bad'), role: 'member' }, stack.ws.token, { 'idempotency-key': 'x'.repeat(300) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/Idempotency-Key/);
  });
});

describe("invitations: membership needs the invitee's consent", () => {
  const invitations = (cookie: string) =>
    stack.as().get<{ invitations: Array<z.infer<typeof receivedInvitationSchema>> }>('/api/invitations', { cookie });
  const decide = (cookie: string, id: string, decision: 'accept' | 'decline') =>
    stack.as().post<Decided>(`/api/invitations/${id}/${decision}`, undefined, { cookie });

  test('the invitee sees the invitation in their own session and becomes a member only by accepting', async () => {
    const invitee = await createWorkspace(stack.app, 'Invitee home');
    const sent = await add({ email: invitee.ownerEmail, role: 'member' });
    const cookie = await signInCookie(stack.app, invitee.ownerEmail, invitee.ownerPassword);

    const listed = await invitations(cookie);
    expect(listed.status).toBe(200);
    expect(listed.body.invitations).toEqual([
      expect.objectContaining({
        id: sent.body.invitation.id,
        workspace: { id: stack.ws.workspaceId, name: 'Members workspace' },
        role: 'member',
        status: 'pending',
      }),
    ]);
    // Not a member yet: signing in to the inviting workspace is refused.
    const early = await stack.as().post('/api/auth/sign-in', {
      email: invitee.ownerEmail,
      password: invitee.ownerPassword,
      workspaceId: stack.ws.workspaceId,
    });
    expect(early.status).toBe(403);

    const accepted = await decide(cookie, sent.body.invitation.id, 'accept');
    expect(accepted.status).toBe(200);
    expect(accepted.body.invitation).toMatchObject({ status: 'accepted' });
    const membership = await stack.app.orm.em
      .fork()
      .findOneOrFail(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: invitee.ownerId });
    expect(membership.role).toBe('member');
    const later = await stack.as().post('/api/auth/sign-in', {
      email: invitee.ownerEmail,
      password: invitee.ownerPassword,
      workspaceId: stack.ws.workspaceId,
    });
    expect(later.status).toBe(200);
    // Decided once: a second decision is a 409 and changes nothing.
    expect((await decide(cookie, sent.body.invitation.id, 'decline')).status).toBe(409);
    expect((await invitations(cookie)).body.invitations).toEqual([]);
  });

  test('declining leaves no membership; expired invitations cannot be accepted', async () => {
    const invitee = await createWorkspace(stack.app, 'Decliner');
    const cookie = await signInCookie(stack.app, invitee.ownerEmail, invitee.ownerPassword);
    const first = await add({ email: invitee.ownerEmail, role: 'viewer' });
    expect((await decide(cookie, first.body.invitation.id, 'decline')).body.invitation.status).toBe('declined');
    expect(await stack.app.orm.em.fork().count(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: invitee.ownerId })).toBe(0);

    const second = await add({ email: invitee.ownerEmail, role: 'viewer' });
    expect(second.body.invitation.id).not.toBe(first.body.invitation.id);
    await stack.app.orm.em
      .fork()
      .getConnection()
      .execute(`update workspace_invitations set expires_at = now() - interval '1 second' where id = ?`, [second.body.invitation.id]);
    const late = await decide(cookie, second.body.invitation.id, 'accept');
    expect(late.status).toBe(409);
    expect(late.body.error).toMatch(/expired/);
    expect(await stack.app.orm.em.fork().count(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: invitee.ownerId })).toBe(0);
  });

  test("someone else's invitation is a 404 to every other session, and API keys cannot accept", async () => {
    const invitee = await createWorkspace(stack.app, 'Target');
    const intruder = await createWorkspace(stack.app, 'Intruder');
    const sent = await add({ email: invitee.ownerEmail, role: 'admin' });
    const intruderCookie = await signInCookie(stack.app, intruder.ownerEmail, intruder.ownerPassword);
    const inviterCookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
    for (const cookie of [intruderCookie, inviterCookie])
      expect((await decide(cookie, sent.body.invitation.id, 'accept')).status).toBe(404);
    expect((await stack.as(invitee.token).post(`/api/invitations/${sent.body.invitation.id}/accept`)).status).toBe(401);
    expect((await invitations(intruderCookie)).body.invitations).toEqual([]);
    expect(
      await stack.app.orm.em
        .fork()
        .count(MembershipSchema, { workspaceId: stack.ws.workspaceId, userId: { $in: [invitee.ownerId, intruder.ownerId] } }),
    ).toBe(0);
  });

  test("an invitation gives the inviting workspace no hold on the invitee's organization keys until accepted", async () => {
    const invitee = await createWorkspace(stack.app, 'Org key owner');
    const sent = await add({ email: invitee.ownerEmail, role: 'admin' });
    const inviteeCookie = await signInCookie(stack.app, invitee.ownerEmail, invitee.ownerPassword);
    const orgKey = await stack
      .as()
      .post<{ apiKey: ApiKey; token: string }>(
        '/api/api-keys',
        { name: 'everything', scope: 'organization', organization: { workspaceSelection: 'organization', permission: 'read' } },
        { cookie: inviteeCookie, headers: { origin: stack.app.url } },
      );
    expect(orgKey.status).toBe(201);
    expect(orgKey.body.apiKey.organization?.workspaceIds).toEqual([invitee.workspaceId]);
    // The inviting workspace's admins neither see nor revoke it.
    const inviterCookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
    const listed = await stack.as().get<{ apiKeys: ApiKey[] }>('/api/api-keys', { cookie: inviterCookie });
    expect(listed.body.apiKeys.map((k) => k.id)).not.toContain(orgKey.body.apiKey.id);
    expect(
      (await stack.as().delete(`/api/api-keys/${orgKey.body.apiKey.id}`, { cookie: inviterCookie, headers: { origin: stack.app.url } }))
        .status,
    ).toBe(404);
    expect(sent.status).toBe(201);
  });
});
