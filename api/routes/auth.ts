import { z } from 'zod';
import { routeGroup, SESSION_READ } from '../http/route';
import { bareErrorSchema, roleSchema, userSchema, workspaceSchema } from '../schemas';
import { SESSION_COOKIE } from '../middleware/auth';
import { currentSession, signIn, signOut } from '../../services/accounts/sessions';
import type { SessionPrincipal } from '../../services/kernel/principal';
import type { AppContext } from '../context';

const membershipView = workspaceSchema.pick({ id: true, name: true }).extend({ role: roleSchema });

const signInBody = z.object({
  email: z.string().trim().min(1, 'email is required').max(320),
  password: z.string().min(1, 'password is required').max(1024),
  workspaceId: z.string().min(1).optional(),
});

/** The session's own routes: signing in is public (same-origin only), the rest need the session. */
const sessionRoute = routeGroup({
  tags: ['Session'],
  family: 'bare',
  access: SESSION_READ,
  errors: { 401: 'No session' },
  pathPrefix: '/api/auth',
});

export const signInRoute = sessionRoute({
  method: 'post',
  path: '/sign-in',
  operationId: 'signIn',
  summary: 'Sign in with email and password; sets the session cookie',
  access: { kind: 'public', sameOrigin: true },
  body: signInBody,
  responses: {
    200: {
      description: 'Signed in; `svc_session` cookie set (httpOnly, SameSite=Lax, Secure behind TLS)',
      schema: z.strictObject({ user: userSchema, workspace: membershipView, workspaces: z.array(membershipView) }),
    },
    400: 'Invalid body',
    401: 'Invalid email or password',
    403: 'Not a member of the requested workspace, or cross-origin',
    429: {
      description: 'Too many attempts for this email from this address, or for this email from everywhere; Retry-After',
      schema: bareErrorSchema,
    },
  },
  handler: async (ctx, { body, deps }) => {
    const result = await signIn(ctx.state.em, deps.services.auth.signInLimiter, body, deps.config.sessionTtlMs, ctx.ip);
    setSessionCookie(ctx, result.token, result.expiresAt);
    return { status: 200, body: { user: result.user, workspace: result.workspace, workspaces: result.workspaces } };
  },
});

export const signOutRoute = sessionRoute({
  method: 'post',
  path: '/sign-out',
  operationId: 'signOut',
  summary: 'End the current session',
  responses: {
    200: { description: 'Signed out; cookie cleared', schema: z.strictObject({ signedOut: z.literal(true) }) },
  },
  handler: async (ctx, { principal, deps }) => {
    await signOut(ctx.state.em, (principal as SessionPrincipal).sessionId, deps.services.auth.credentials.cache);
    setSessionCookie(ctx, null, new Date(0));
    return { status: 200, body: { signedOut: true } };
  },
});

export const currentSessionRoute = sessionRoute({
  method: 'get',
  path: '/session',
  operationId: 'getSession',
  summary: 'The signed-in user, current workspace and memberships',
  responses: {
    200: {
      description: 'Current session',
      schema: z.strictObject({ user: userSchema, workspace: membershipView, workspaces: z.array(membershipView) }),
    },
  },
  handler: async (ctx, { principal }) => ({ status: 200, body: await currentSession(ctx.state.em, principal as SessionPrincipal) }),
});

function setSessionCookie(ctx: AppContext, token: string | null, expires: Date): void {
  ctx.cookies.set(SESSION_COOKIE, token ?? '', {
    httpOnly: true,
    sameSite: 'lax',
    // ctx.secure honours X-Forwarded-Proto only when TRUST_PROXY is set.
    secure: ctx.secure,
    path: '/',
    expires,
    overwrite: true,
  });
}

export const authRoutes = [signInRoute, signOutRoute, currentSessionRoute];
