import { SessionSchema } from '../../../db/entities';
import { grantMembership } from '../../../services/accounts/workspaces';
import { createWorkspace, http, signInCookie, startTestApp, type TestApp, type WorkspaceFixture } from '../../support/harness';

let app: TestApp;
let ws: WorkspaceFixture;

beforeAll(async () => {
  app = await startTestApp();
  ws = await createWorkspace(app, 'Session workspace');
});
afterAll(() => app.close());

describe('session sign-in', () => {
  test('sets an httpOnly SameSite=Lax cookie and returns the user and workspaces', async () => {
    const res = await http(app, 'POST', '/api/auth/sign-in', { body: { email: ws.ownerEmail.toUpperCase(), password: ws.ownerPassword } });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: ws.ownerId, email: ws.ownerEmail, status: 'active' });
    expect(res.body.user.passwordHash).toBeUndefined();
    expect(res.body.workspaces).toEqual([{ id: ws.workspaceId, name: 'Session workspace', role: 'owner' }]);
    expect(res.body.workspace.id).toBe(ws.workspaceId);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^svc_session=[A-Za-z0-9_-]{43};/);
    expect(cookie.toLowerCase()).toContain('httponly');
    expect(cookie.toLowerCase()).toContain('samesite=lax');
    expect(cookie.toLowerCase()).not.toContain('secure');
    expect(res.text).not.toContain(ws.ownerPassword);
  });

  test('the cookie is Secure behind TLS (X-Forwarded-Proto from a trusted proxy)', async () => {
    const proxied = await startTestApp({ trustProxy: true });
    try {
      const res = await http(proxied, 'POST', '/api/auth/sign-in', {
        body: { email: ws.ownerEmail, password: ws.ownerPassword },
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')!.toLowerCase()).toContain('secure');
    } finally {
      await proxied.close();
    }
  });

  test('wrong password and unknown email get the same 401', async () => {
    const wrong = await http(app, 'POST', '/api/auth/sign-in', { body: { email: ws.ownerEmail, password: 'nope' } });
    const unknown = await http(app, 'POST', '/api/auth/sign-in', { body: { email: 'nobody@example.test', password: 'nope' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.headers.get('set-cookie')).toBeNull();
  });

  test('a missing field is a 400, not a 500', async () => {
    const res = await http(app, 'POST', '/api/auth/sign-in', { body: { email: ws.ownerEmail } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/password/);
  });

  test('a cross-origin sign-in is refused', async () => {
    const res = await http(app, 'POST', '/api/auth/sign-in', {
      body: { email: ws.ownerEmail, password: ws.ownerPassword },
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  test('a same-origin Origin header is accepted', async () => {
    const res = await http(app, 'POST', '/api/auth/sign-in', {
      body: { email: ws.ownerEmail, password: ws.ownerPassword },
      headers: { origin: app.url.replace('localhost', '127.0.0.1') },
    });
    expect(res.status).toBe(200);
  });

  test('the session workspace is the default unless workspaceId names another membership', async () => {
    const other = await createWorkspace(app, 'Other workspace');
    // Make the first owner a member of the other workspace too.
    const otherOwner = {
      kind: 'session' as const,
      sessionId: 's',
      principalId: `user:${other.ownerId}`,
      userId: other.ownerId,
      workspaceId: other.workspaceId,
      role: 'owner' as const,
    };
    await grantMembership(app.orm.em.fork(), otherOwner, { email: ws.ownerEmail, role: 'viewer' });

    const byDefault = await http(app, 'POST', '/api/auth/sign-in', { body: { email: ws.ownerEmail, password: ws.ownerPassword } });
    expect(byDefault.body.workspace).toMatchObject({ id: ws.workspaceId, role: 'owner' });
    expect(byDefault.body.workspaces).toHaveLength(2);

    const chosen = await http(app, 'POST', '/api/auth/sign-in', {
      body: { email: ws.ownerEmail, password: ws.ownerPassword, workspaceId: other.workspaceId },
    });
    expect(chosen.body.workspace).toMatchObject({ id: other.workspaceId, role: 'viewer' });

    const stranger = await createWorkspace(app, 'Stranger workspace');
    const refused = await http(app, 'POST', '/api/auth/sign-in', {
      body: { email: ws.ownerEmail, password: ws.ownerPassword, workspaceId: stranger.workspaceId },
    });
    expect(refused.status).toBe(403);
  });

  test('sign-out ends the session: the cookie stops working at once', async () => {
    const cookie = await signInCookie(app, ws.ownerEmail, ws.ownerPassword);
    expect((await http(app, 'GET', '/api/auth/session', { cookie })).status).toBe(200);
    const out = await http(app, 'POST', '/api/auth/sign-out', { cookie });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ signedOut: true });
    expect((await http(app, 'GET', '/api/auth/session', { cookie })).status).toBe(401);
    expect((await http(app, 'GET', '/api/api-keys', { cookie })).status).toBe(401);
  });

  test('an expired session is refused', async () => {
    const cookie = await signInCookie(app, ws.ownerEmail, ws.ownerPassword);
    await app.orm.em.fork().nativeUpdate(SessionSchema, { userId: ws.ownerId }, { expiresAt: new Date(Date.now() - 1000) });
    expect((await http(app, 'GET', '/api/auth/session', { cookie })).status).toBe(401);
  });

  test('sign-out from another origin is refused', async () => {
    const cookie = await signInCookie(app, ws.ownerEmail, ws.ownerPassword);
    const res = await http(app, 'POST', '/api/auth/sign-out', { cookie, headers: { origin: 'https://evil.example' } });
    expect(res.status).toBe(403);
    expect((await http(app, 'GET', '/api/auth/session', { cookie })).status).toBe(200);
  });

  test('repeated failures for one email are rate limited with Retry-After', async () => {
    const email = `limited-${Date.now()}@example.test`;
    for (let i = 0; i < 10; i++) {
      expect((await http(app, 'POST', '/api/auth/sign-in', { body: { email, password: 'wrong' } })).status).toBe(401);
    }
    const limited = await http(app, 'POST', '/api/auth/sign-in', { body: { email, password: 'wrong' } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  test('the limit holds across API processes: failures on one instance count on the other', async () => {
    const second = await startTestApp(); // same database, its own limiter and pool
    try {
      const email = `shared-limit-${Date.now()}@example.test`;
      for (let i = 0; i < 10; i++) {
        const instance = i % 2 === 0 ? app : second;
        expect((await http(instance, 'POST', '/api/auth/sign-in', { body: { email, password: 'wrong' } })).status).toBe(401);
      }
      for (const instance of [app, second]) {
        const limited = await http(instance, 'POST', '/api/auth/sign-in', { body: { email, password: 'wrong' } });
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    } finally {
      await second.close();
    }
  });
});
