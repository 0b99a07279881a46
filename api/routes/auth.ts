import { z } from 'zod';
import { defineRoute } from '../http/route';
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

export const signInRoute = defineRoute({
  method: 'post',
  path: '/api/auth/sign-in',
  operationId: 'signIn',
  summary: 'Sign in with email and password; sets the session cookie',
  tags: ['Session'],
  family: 'bare',
  access: { kind: 'public', sameOrigin: true },
  body: signInBody,
  responses: {
    200: {
      description: 'Signed in; `svc_session` cookie set (httpOnly, SameSite=Lax, Secure behind TLS)',
      schema: z.strictObject({ user: userSchema, workspace: membershipView, workspaces: z.array(membershipView) }),
    },
    400: { description: 'Invalid body', schema: bareErrorSchema },
    401: { description: 'Invalid email or password', schema: bareErrorSchema },
    403: { description: 'Not a member of the requested workspace, or cross-origin', schema: bareErrorSchema },
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

export const signOutRoute = defineRoute({
  method: 'post',
  path: '/api/auth/sign-out',
  operationId: 'signOut',
  summary: 'End the current session',
  tags: ['Session'],
  family: 'bare',
  access: { kind: 'session', roles: 'read' },
  responses: {
    200: { description: 'Signed out; cookie cleared', schema: z.strictObject({ signedOut: z.literal(true) }) },
    401: { description: 'No session', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal }) => {
    await signOut(ctx.state.em, (principal as SessionPrincipal).sessionId);
    setSessionCookie(ctx, null, new Date(0));
    return { status: 200, body: { signedOut: true } };
  },
});

export const currentSessionRoute = defineRoute({
  method: 'get',
  path: '/api/auth/session',
  operationId: 'getSession',
  summary: 'The signed-in user, current workspace and memberships',
  tags: ['Session'],
  family: 'bare',
  access: { kind: 'session', roles: 'read' },
  responses: {
    200: {
      description: 'Current session',
      schema: z.strictObject({ user: userSchema, workspace: membershipView, workspaces: z.array(membershipView) }),
    },
    401: { description: 'No session', schema: bareErrorSchema },
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
