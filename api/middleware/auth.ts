import { requestOrigin } from '../http/urls';
import type { Next } from 'koa';
import type { AppContext } from '../context';
import { bearerToken, verifyApiKey } from '../../services/accounts/auth';
import { AUTH_MESSAGES, forbidden, unauthenticated } from '../../services/kernel/errors';
import { anchoredPrincipal, isAdminRole } from '../../services/kernel/principal';
import type { ApiKeyScope, MembershipRole } from '../../db/entities';
import { verifySession } from '../../services/accounts/sessions';
import { requireOperator } from '../../services/accounts/operators';

export const SESSION_COOKIE = 'svc_session';

/**
 * Who may call a route.
 * - `public`: no credentials (webhooks, health, sign-in). `sameOrigin` refuses cross-origin
 *   browser posts for routes that set cookies.
 * - `apiKey`: `Authorization: Bearer hise_…` only. `workspace` needs a workspace-scoped key;
 *   `safe-read` also admits personal and copilot keys (they get the workspace-safe.v1 projection);
 *   `workspace-or-gateway` also admits end-user gateway keys (execute only: the service then
 *   applies the gateway rules); `end-user-gateway` admits gateway keys only (the end-user run
 *   routes). Organization keys are refused by every REST v1 route, gateway keys by all others.
 *   Gateway keys are refused everywhere while the deployment has end users disabled.
 * - `session`: the session cookie; mutations refuse a cross-origin `Origin`.
 * - `apiKeyOrSession`: a workspace-scoped bearer key when an Authorization header is sent,
 *   otherwise the session cookie (routes that browsers and API clients both call).
 * - `operator`: the deployment's operators (services/accounts/operators.ts), not a workspace principal.
 * Every kind that yields a workspace principal must say which live role it needs (`roles`):
 * there is no default, so a copied or new route cannot silently admit viewers. This type and
 * `assertAccessDeclared` (run when the routes are mounted) are the authorization matrix; the
 * rendered table is docs/authorization.md.
 */
export type Access =
  | { kind: 'public'; sameOrigin?: boolean }
  | { kind: 'apiKey'; scopes: ApiKeyScopes; roles: RoleRequirement }
  | { kind: 'session'; roles: RoleRequirement }
  | { kind: 'apiKeyOrSession'; roles: RoleRequirement }
  | { kind: 'operator' };

/** `read`: any member, viewers included. `write`: any role above viewer. `admin`: Admin or Owner. */
export type RoleRequirement = 'read' | 'write' | 'admin';

export const ROLE_REQUIREMENTS: readonly RoleRequirement[] = ['read', 'write', 'admin'];

export type ApiKeyScopes = 'workspace' | 'safe-read' | 'workspace-or-gateway' | 'end-user-gateway';

export const ADMITTED_KEY_SCOPES: Record<ApiKeyScopes, ReadonlySet<ApiKeyScope>> = {
  workspace: new Set(['workspace']),
  'safe-read': new Set(['workspace', 'personal', 'copilot']),
  'workspace-or-gateway': new Set(['workspace', 'end_user_gateway']),
  'end-user-gateway': new Set(['end_user_gateway']),
};
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const ACCESS_KINDS = new Set<Access['kind']>(['public', 'apiKey', 'session', 'apiKeyOrSession', 'operator']);

/**
 * Throws unless `access` is a complete declaration: a known kind, and for the kinds that yield a
 * workspace principal an explicit role (and for keys an explicit scope set). The types already
 * require it; this catches routes built by spreading or casting (`as AnyRoute`), so a route
 * without a declaration fails app creation instead of mounting open.
 */
export function assertAccessDeclared(access: unknown, where: string): asserts access is Access {
  const a = access as Partial<Record<string, unknown>> | undefined;
  if (!a || typeof a !== 'object' || !ACCESS_KINDS.has(a.kind as Access['kind'])) throw new Error(`${where}: no access declaration (kind)`);
  if (a.kind === 'public' || a.kind === 'operator') return;
  if (!ROLE_REQUIREMENTS.includes(a.roles as RoleRequirement))
    throw new Error(`${where}: access.roles must be one of ${ROLE_REQUIREMENTS.join(', ')}`);
  if (a.kind === 'apiKey' && !Object.hasOwn(ADMITTED_KEY_SCOPES, String(a.scopes)))
    throw new Error(`${where}: access.scopes must be one of ${Object.keys(ADMITTED_KEY_SCOPES).join(', ')}`);
}

export function authenticate(access: Access) {
  return async function authMiddleware(ctx: AppContext, next: Next): Promise<void> {
    const kind = access.kind === 'apiKeyOrSession' ? (ctx.get('authorization') ? 'apiKey' : 'session') : access.kind;
    switch (kind) {
      case 'public':
        if (access.kind === 'public' && access.sameOrigin) requireSameOrigin(ctx);
        break;
      case 'operator': {
        const { operatorToken, operatorEmails } = ctx.deps.config;
        const bearer = bearerToken(ctx.get('authorization') || undefined) ?? undefined;
        await requireOperator(ctx.state.em, { operatorToken, operatorEmails }, { bearer, sessionToken: ctx.cookies.get(SESSION_COOKIE) });
        ctx.state.log = ctx.state.log.child({ operator: true });
        break;
      }
      case 'apiKey': {
        const token = bearerToken(ctx.get('authorization') || undefined);
        const verified = token ? await verifyApiKey(ctx.state.em, token, ctx.deps.services.auth.credentials) : null;
        if (!verified) throw unauthenticated(AUTH_MESSAGES.bearerRequired);
        const scopes = access.kind === 'apiKey' ? access.scopes : 'workspace';
        const allowed = ADMITTED_KEY_SCOPES[scopes].has(verified.scope);
        const principal = allowed ? anchoredPrincipal(verified) : null;
        if (!principal)
          throw forbidden(scopes === 'end-user-gateway' ? AUTH_MESSAGES.gatewayKeyRequired : AUTH_MESSAGES.workspaceKeyRequired);
        if (verified.scope === 'end_user_gateway' && !ctx.deps.config.endUsersEnabled) throw forbidden(AUTH_MESSAGES.endUsersDisabled);
        ctx.state.principal = principal;
        requireRole(access, principal.role);
        ctx.state.log = ctx.state.log.child({ apiKeyId: verified.apiKeyId, workspaceId: principal.workspaceId });
        break;
      }
      case 'session': {
        if (!SAFE_METHODS.has(ctx.method)) requireSameOrigin(ctx);
        const token = ctx.cookies.get(SESSION_COOKIE);
        const principal = token ? await verifySession(ctx.state.em, token, ctx.deps.services.auth.credentials.cache) : null;
        if (!principal) throw unauthenticated(AUTH_MESSAGES.sessionRequired);
        ctx.state.principal = principal;
        requireRole(access, principal.role);
        ctx.state.log = ctx.state.log.child({ userId: principal.userId, workspaceId: principal.workspaceId });
        break;
      }
    }
    await next();
  };
}

function requireRole(access: Access, role: MembershipRole | null): void {
  const required = 'roles' in access ? access.roles : undefined;
  if (required === 'admin' && !isAdminRole(role)) throw forbidden(AUTH_MESSAGES.adminRequired);
  if (required === 'write' && (role === null || role === 'viewer')) throw forbidden(AUTH_MESSAGES.writeRequired);
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
  if (origin !== requestOrigin(ctx)) throw forbidden(AUTH_MESSAGES.crossOrigin);
}
