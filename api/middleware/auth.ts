import type { Next } from 'koa';
import type { AppContext } from '../context';
import { bearerToken, verifyApiKey } from '../../services/auth';
import { AUTH_MESSAGES, forbidden, unauthorized } from '../../services/errors';
import { isAdminRole } from '../../services/principal';
import { verifySession } from '../../services/sessions';

export const SESSION_COOKIE = 'svc_session';

/**
 * Who may call a route.
 * - `public`: no credentials (webhooks, health, sign-in). `sameOrigin` refuses cross-origin
 *   browser posts for routes that set cookies.
 * - `apiKey`: `Authorization: Bearer hise_…` only. `workspace` needs a workspace-scoped key;
 *   `safe-read` also admits personal and copilot keys (they get the workspace-safe.v1 projection).
 *   Organization and end-user gateway keys are refused by every REST v1 route.
 * - `session`: the session cookie; mutations refuse a cross-origin `Origin`.
 * `roles: 'admin'` additionally needs the caller's live role to be Admin or Owner.
 */
export type Access =
  | { kind: 'public'; sameOrigin?: boolean }
  | { kind: 'apiKey'; scopes: 'workspace' | 'safe-read'; roles?: 'admin' }
  | { kind: 'session'; roles?: 'admin' };

const SAFE_READ_SCOPES = new Set(['workspace', 'personal', 'copilot']);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function authenticate(access: Access) {
  return async function authMiddleware(ctx: AppContext, next: Next): Promise<void> {
    switch (access.kind) {
      case 'public':
        if (access.sameOrigin) requireSameOrigin(ctx);
        break;
      case 'apiKey': {
        const token = bearerToken(ctx.get('authorization') || undefined);
        const principal = token ? await verifyApiKey(ctx.state.em, token) : null;
        if (!principal) throw unauthorized(AUTH_MESSAGES.bearerRequired);
        ctx.state.principal = principal;
        const allowed = access.scopes === 'workspace' ? principal.scope === 'workspace' : SAFE_READ_SCOPES.has(principal.scope);
        if (!allowed) throw forbidden(AUTH_MESSAGES.workspaceKeyRequired);
        if (access.roles === 'admin' && !isAdminRole(principal.role)) throw forbidden(AUTH_MESSAGES.adminRequired);
        ctx.state.log = ctx.state.log.child({ apiKeyId: principal.apiKeyId, workspaceId: principal.workspaceId });
        break;
      }
      case 'session': {
        if (!SAFE_METHODS.has(ctx.method)) requireSameOrigin(ctx);
        const token = ctx.cookies.get(SESSION_COOKIE);
        const principal = token ? await verifySession(ctx.state.em, token) : null;
        if (!principal) throw unauthorized(AUTH_MESSAGES.sessionRequired);
        ctx.state.principal = principal;
        if (access.roles === 'admin' && !isAdminRole(principal.role)) throw forbidden(AUTH_MESSAGES.adminRequired);
        ctx.state.log = ctx.state.log.child({ userId: principal.userId, workspaceId: principal.workspaceId });
        break;
      }
    }
    await next();
  };
}

/**
 * Refuses browser requests sent from another origin. Requests without `Origin` (curl,
 * server-to-server) pass: they carry no ambient cookie risk that SameSite=Lax leaves open.
 */
export function requireSameOrigin(ctx: AppContext): void {
  const origin = ctx.get('origin');
  const fetchSite = ctx.get('sec-fetch-site');
  if (fetchSite === 'cross-site') throw forbidden(AUTH_MESSAGES.crossOrigin);
  if (!origin) return;
  if (origin !== `${ctx.protocol}://${ctx.host}`) throw forbidden(AUTH_MESSAGES.crossOrigin);
}
