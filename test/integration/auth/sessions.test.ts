import { SessionSchema } from '../../../db/entities';
import { grantMembership } from '../../../services/accounts/workspaces';
import type { z } from 'zod';
import type { roleSchema, userSchema, workspaceSchema } from '../../../api/schemas';
import { startTestApp } from '../../support/harness';
import { createWorkspace, http, signInCookie, useTestStack } from '../../kit';

/** A membership in the sign-in and session answers. */
type Membership = Pick<z.infer<typeof workspaceSchema>, 'id' | 'name'> & { role: z.infer<typeof roleSchema> };
/** POST /api/auth/sign-in: the user, the session's workspace and every membership. */
type SignedIn = { user: z.infer<typeof userSchema>; workspace: Membership; workspaces: Membership[] };

const stack = useTestStack({ worker: false, workspaceName: 'Session workspace' });

describe('session sign-in', () => {
  test('sets an httpOnly SameSite=Lax cookie and returns the user and workspaces', async () => {
    const res = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', {
      body: { email: stack.ws.ownerEmail.toUpperCase(), password: stack.ws.ownerPassword },
    });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: stack.ws.ownerId, email: stack.ws.ownerEmail, status: 'active' });
    expect(res.body.user).not.toHaveProperty('passwordHash');
    expect(res.body.workspaces).toEqual([{ id: stack.ws.workspaceId, name: 'Session workspace', role: 'owner' }]);
    expect(res.body.workspace.id).toBe(stack.ws.workspaceId);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^svc_session=[A-Za-z0-9_-]{43};/);
    expect(cookie.toLowerCase()).toContain('httponly');
    expect(cookie.toLowerCase()).toContain('samesite=lax');
    expect(cookie.toLowerCase()).not.toContain('secure');
    expect(res.text).not.toContain(stack.ws.ownerPassword);
  });

  test('the cookie is Secure behind TLS (X-Forwarded-Proto from a trusted proxy)', async () => {
    const proxied = await startTestApp({ trustProxy: true });
    try {
      const res = await http<SignedIn>(proxied, 'POST', '/api/auth/sign-in', {
        body: { email: stack.ws.ownerEmail, password: stack.ws.ownerPassword },
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')!.toLowerCase()).toContain('secure');
    } finally {
      await proxied.close();
    }
  });

  test('wrong password and unknown email get the same 401', async () => {
    const wrong = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', { body: { email: stack.ws.ownerEmail, password: 'nope' } });
    const unknown = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', {
      body: { email: 'nobody@example.test', password: 'nope' },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.headers.get('set-cookie')).toBeNull();
  });

  test('a missing field is a 400, not a 500', async () => {
    const res = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', { body: { email: stack.ws.ownerEmail } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: expect.stringMatching(/password/) });
  });

  test('a cross-origin sign-in is refused', async () => {
    const res = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', {
      body: { email: stack.ws.ownerEmail, password: stack.ws.ownerPassword },
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  test('a same-origin Origin header is accepted', async () => {
    const res = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', {
      body: { email: stack.ws.ownerEmail, password: stack.ws.ownerPassword },
      headers: { origin: stack.app.url.replace('localhost', '127.0.0.1') },
    });
    expect(res.status).toBe(200);
  });

  test('the session workspace is the default unless workspaceId names another membership', async () => {
    const other = await createWorkspace(stack.app, 'Other workspace');
    // Make the first owner a member of the other workspace too.
    const otherOwner = {
      kind: 'session' as const,
      sessionId: 's',
      principalId: `user:${other.ownerId}`,
      userId: other.ownerId,
      workspaceId: other.workspaceId,
      role: 'owner' as const,
    };
    await grantMembership(stack.app.orm.em.fork(), otherOwner, { email: stack.ws.ownerEmail, role: 'viewer' });

    const byDefault = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', {
      body: { email: stack.ws.ownerEmail, password: stack.ws.ownerPassword },
    });
    expect(byDefault.body.workspace).toMatchObject({ id: stack.ws.workspaceId, role: 'owner' });
    expect(byDefault.body.workspaces).toHaveLength(2);

    const chosen = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', {
      body: { email: stack.ws.ownerEmail, password: stack.ws.ownerPassword, workspaceId: other.workspaceId },
    });
    expect(chosen.body.workspace).toMatchObject({ id: other.workspaceId, role: 'viewer' });

    const stranger = await createWorkspace(stack.app, 'Stranger workspace');
    const refused = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', {
      body: { email: stack.ws.ownerEmail, password: stack.ws.ownerPassword, workspaceId: stranger.workspaceId },
    });
    expect(refused.status).toBe(403);
  });

  test('sign-out ends the session: the cookie stops working at once', async () => {
    const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
    expect((await http(stack.app, 'GET', '/api/auth/session', { cookie })).status).toBe(200);
    const out = await http(stack.app, 'POST', '/api/auth/sign-out', { cookie });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ signedOut: true });
    expect((await http(stack.app, 'GET', '/api/auth/session', { cookie })).status).toBe(401);
    expect((await http(stack.app, 'GET', '/api/api-keys', { cookie })).status).toBe(401);
  });

  test('an expired session is refused', async () => {
    const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
    await stack.app.orm.em.fork().nativeUpdate(SessionSchema, { userId: stack.ws.ownerId }, { expiresAt: new Date(Date.now() - 1000) });
    expect((await http(stack.app, 'GET', '/api/auth/session', { cookie })).status).toBe(401);
  });

  test('sign-out from another origin is refused', async () => {
    const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
    const res = await http(stack.app, 'POST', '/api/auth/sign-out', { cookie, headers: { origin: 'https://evil.example' } });
    expect(res.status).toBe(403);
    expect((await http(stack.app, 'GET', '/api/auth/session', { cookie })).status).toBe(200);
  });

  test('repeated failures for one email are rate limited with Retry-After', async () => {
    const email = `limited-${Date.now()}@example.test`;
    for (let i = 0; i < 10; i++) {
      expect((await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', { body: { email, password: 'wrong' } })).status).toBe(401);
    }
    const limited = await http<SignedIn>(stack.app, 'POST', '/api/auth/sign-in', { body: { email, password: 'wrong' } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('the limit holds across API processes: failures on one instance count on the other', async () => {
    const second = await startTestApp(); // same database, its own limiter and pool
    try {
      const email = `shared-limit-${Date.now()}@example.test`;
      for (let i = 0; i < 10; i++) {
        const instance = i % 2 === 0 ? stack.app : second;
        expect((await http<SignedIn>(instance, 'POST', '/api/auth/sign-in', { body: { email, password: 'wrong' } })).status).toBe(401);
      }
      for (const instance of [stack.app, second]) {
        const limited = await http<SignedIn>(instance, 'POST', '/api/auth/sign-in', { body: { email, password: 'wrong' } });
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    } finally {
      await second.close();
    }
  });
});
