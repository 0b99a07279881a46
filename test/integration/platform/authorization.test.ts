/**
 * The authorization matrix, walked: every mounted route × every kind of caller (owner, admin,
 * member, viewer, each by key and by session; a removed member with the key and session they
 * had; personal, copilot, end-user gateway and organization keys; the owner of another
 * workspace; the deployment's operator; nobody). The expected answer is computed from the
 * route's own `access` declaration, so a route added tomorrow is covered by this file the day
 * it is added. Path ids are random and bodies invalid (`[]`), so an admitted request stops at
 * 400/404 and changes nothing; sign-out, the one route that acts on no input, runs last.
 *
 * The first block pins the escalations found by the attack run (issue 27): each failed before
 * the routes declared their role.
 */
import { allRoutes, createApp } from '../../../api/app';
import { koaPath, type AnyRoute } from '../../../api/http/route';
import type { Access, ApiKeyScopes } from '../../../api/middleware/auth';
import { MembershipSchema, UserSchema, type ApiKeyScope, type MembershipRole } from '../../../db/entities';
import { API_KEY_SCOPES, MEMBERSHIP_ROLES } from '../../../engine/statuses';
import { AUTH_MESSAGES } from '../../../services/kernel/errors';
import { randomToken } from '../../../services/kernel/ids';
import { hashPassword } from '../../../services/kernel/passwords';
import { addUserWithKey, authCacheSettled, http, signInCookie, useTestStack, type HttpResult } from '../../kit';

const OPERATOR_TOKEN = `op-${randomToken(24)}`;

interface Caller {
  name: string;
  token?: string;
  cookie?: string;
  /** The live role the caller has in the workspace under test (null: none). */
  role: MembershipRole | null;
  /** The key's scope, for key callers. */
  scope?: ApiKeyScope;
  /** Credentials that no longer authenticate (a removed member's). */
  revoked?: boolean;
  operator?: boolean;
  /** The caller belongs to another workspace: ids of this walk are never theirs either. */
  otherWorkspace?: boolean;
}

// Routes only: the walk sends requests that stop at validation, so the stack has no worker.
const stack = useTestStack({
  worker: false,
  workspaceName: 'Authorization walk',
  config: { endUsersEnabled: true, operatorToken: OPERATOR_TOKEN },
});
let callers: Caller[];

async function withSession(member: { userId: string; email: string }, workspaceId: string): Promise<string> {
  const password = `pw ${randomToken(8)}`;
  await stack.app.orm.em
    .fork()
    .nativeUpdate(UserSchema, { id: member.userId }, { passwordHash: await hashPassword(password), status: 'active' });
  return signInCookie(stack.app, member.email, password, workspaceId);
}

beforeAll(async () => {
  const ws = stack.ws;
  const other = await stack.workspace('Another tenant');
  const ownerCookie = await signInCookie(stack.app, ws.ownerEmail, ws.ownerPassword, ws.workspaceId);
  const member = async (role: 'admin' | 'member' | 'viewer') => {
    const m = await addUserWithKey(stack.app, ws, role);
    return { ...m, cookie: await withSession(m, ws.workspaceId) };
  };
  const [admin, writer, viewer, removed] = await Promise.all([member('admin'), member('member'), member('viewer'), member('member')]);
  const [personal, copilot, gateway, organization] = await Promise.all(
    (['personal', 'copilot', 'end_user_gateway', 'organization'] as const).map((scope) => addUserWithKey(stack.app, ws, 'member', scope)),
  );
  // Removed after their key and session were issued: both must stop working at once.
  await stack.app.orm.em.fork().nativeDelete(MembershipSchema, { workspaceId: ws.workspaceId, userId: removed.userId });
  // A change made in SQL reaches the key cache by notification: wait for it rather than race it.
  await authCacheSettled(stack.app);
  callers = [
    { name: 'owner key', token: ws.token, role: 'owner', scope: 'workspace' },
    { name: 'owner session', cookie: ownerCookie, role: 'owner' },
    { name: 'admin key', token: admin.token, role: 'admin', scope: 'workspace' },
    { name: 'admin session', cookie: admin.cookie, role: 'admin' },
    { name: 'writer key', token: writer.token, role: 'member', scope: 'workspace' },
    { name: 'writer session', cookie: writer.cookie, role: 'member' },
    { name: 'viewer key', token: viewer.token, role: 'viewer', scope: 'workspace' },
    { name: 'viewer session', cookie: viewer.cookie, role: 'viewer' },
    { name: 'removed member key', token: removed.token, role: null, scope: 'workspace', revoked: true },
    { name: 'removed member session', cookie: removed.cookie, role: null, revoked: true },
    { name: 'personal key', token: personal.token, role: 'member', scope: 'personal' },
    { name: 'copilot key', token: copilot.token, role: 'member', scope: 'copilot' },
    { name: 'end-user gateway key', token: gateway.token, role: 'member', scope: 'end_user_gateway' },
    { name: 'organization key', token: organization.token, role: 'member', scope: 'organization' },
    { name: 'other workspace key', token: other.token, role: 'owner', scope: 'workspace', otherWorkspace: true },
    {
      name: 'other workspace session',
      cookie: await signInCookie(stack.app, other.ownerEmail, other.ownerPassword, other.workspaceId),
      role: 'owner',
      otherWorkspace: true,
    },
    { name: 'operator', token: OPERATOR_TOKEN, role: null, operator: true },
    { name: 'anonymous', role: null },
  ];
});

const caller = (name: string): Caller => callers.find((c) => c.name === name)!;

/**
 * The key scopes each declared scope set admits, as the contract states them (written out here,
 * not imported, so the walk checks the middleware rather than repeating it). Organization keys
 * are admitted by none: they are not anchored to a workspace.
 */
const CONTRACT_KEY_SCOPES: Record<ApiKeyScopes, ApiKeyScope[]> = {
  workspace: ['workspace'],
  'safe-read': ['workspace', 'personal', 'copilot'],
  'workspace-or-gateway': ['workspace', 'end_user_gateway'],
  'end-user-gateway': ['end_user_gateway'],
};

/** What the matrix says a caller gets: admitted, or refused with a status and message. */
type Expected = { admitted: true } | { admitted: false; status: 401 | 403; message: string };

function expected(access: Access, c: Caller): Expected {
  const refuse = (status: 401 | 403, message: string): Expected => ({ admitted: false, status, message });
  switch (access.kind) {
    case 'public':
      return { admitted: true };
    case 'operator':
      return c.operator ? { admitted: true } : refuse(401, 'Operator credentials are required.');
    default: {
      const byKey = access.kind === 'apiKey' || (access.kind === 'apiKeyOrSession' && c.token !== undefined);
      if (byKey) {
        if (!c.token || c.revoked || c.operator) return refuse(401, AUTH_MESSAGES.bearerRequired);
        const scopes = access.kind === 'apiKey' ? access.scopes : 'workspace';
        if (!CONTRACT_KEY_SCOPES[scopes].includes(c.scope!)) {
          return refuse(403, scopes === 'end-user-gateway' ? AUTH_MESSAGES.gatewayKeyRequired : AUTH_MESSAGES.workspaceKeyRequired);
        }
      } else if (!c.cookie || c.revoked) {
        return refuse(401, AUTH_MESSAGES.sessionRequired);
      }
      if (access.roles === 'admin' && c.role !== 'owner' && c.role !== 'admin') return refuse(403, AUTH_MESSAGES.adminRequired);
      if (access.roles === 'write' && c.role === 'viewer') return refuse(403, AUTH_MESSAGES.writeRequired);
      return { admitted: true };
    }
  }
}

/** The route's path with every `{param}` replaced by a random id no workspace has. */
const probePath = (route: AnyRoute): string => route.path.replace(/\{(\w+)\}/g, () => `authz${randomToken(10)}`);

async function call(route: AnyRoute, c: Caller): Promise<HttpResult> {
  const method = route.method.toUpperCase();
  return http(stack.app, method, probePath(route), {
    token: c.token,
    cookie: c.cookie,
    // An array is no route's body: an admitted request is refused at validation and changes nothing.
    ...(method === 'GET' ? {} : { rawBody: '[]', headers: { 'content-type': 'application/json' } }),
  });
}

/** A failure message for one cell of the walk, or null when the answer matches the matrix. */
function check(route: AnyRoute, c: Caller, res: HttpResult): string | null {
  const cell = `${route.method.toUpperCase()} ${route.path} as ${c.name}: ${res.status} ${res.text.slice(0, 200)}`;
  // /readyz answers 503 by design while no worker runs (this file starts none).
  if (res.status >= 500 && !(route.path === '/readyz' && res.status === 503)) return `${cell} (5xx)`;
  const want = expected(route.access, c);
  if (want.admitted) {
    if (route.access.kind === 'public') return null;
    if (res.status === 401 || res.status === 403) return `${cell} (expected admitted)`;
    // Random ids and an invalid body: nothing the walk sends may succeed (or reach another tenant's row).
    if (route.path.includes('{') && res.status < 300) return `${cell} (expected 4xx for random ids)`;
    return null;
  }
  if (res.status !== want.status) return `${cell} (expected ${want.status} ${want.message})`;
  const body = res.body as { error?: string | { code?: string; message?: string } };
  const message = typeof body?.error === 'object' ? body.error.message : body?.error;
  if (message !== want.message) return `${cell} (expected message ${want.message})`;
  if (route.family === 'envelope') {
    const code = typeof body?.error === 'object' ? body.error.code : undefined;
    const wantCode = want.status === 401 ? 'authentication_required' : 'authorization_failed';
    if (code !== wantCode) return `${cell} (expected envelope code ${wantCode})`;
  }
  return null;
}

/** Runs `cells` a few at a time, so the walk is quick without flooding the pool. */
async function walk(cells: Array<[AnyRoute, Caller]>, batch = 24): Promise<string[]> {
  const failures: string[] = [];
  for (let i = 0; i < cells.length; i += batch) {
    const slice = cells.slice(i, i + batch);
    const results = await Promise.all(slice.map(([route, c]) => call(route, c)));
    slice.forEach(([route, c], j) => {
      const failure = check(route, c, results[j]);
      if (failure) failures.push(failure);
    });
  }
  return failures;
}

// Routes that act without any input on the caller's own credentials: walked after all others.
const ACTS_WITHOUT_INPUT = new Set(['POST /api/auth/sign-out']);
const routeKey = (r: AnyRoute) => `${r.method.toUpperCase()} ${r.path}`;

describe('the findings of the attack run (issue 27 items 1 and 4)', () => {
  const cases: Array<[string, string, string]> = [
    ['POST', '/api/workers/extflow/import-bundle', 'viewer session'],
    ['POST', '/api/workers/extflow/smoke-test', 'viewer session'],
    ['POST', '/api/workers/extflow/credentials/bootstrap-from-env', 'viewer session'],
    ['POST', '/api/workers/extflow/subflows/import-originals', 'viewer session'],
    ['POST', '/api/workers/legacyalias/smoke-test', 'viewer session'],
    ['POST', '/api/workers/legacyalias/credentials/bootstrap-from-env', 'viewer session'],
    ['POST', '/api/workers/legacyalias/subflows/import-originals', 'viewer session'],
    ['POST', '/api/mailer/inbound', 'viewer session'],
    ['POST', '/api/v1/mailer/inbound', 'viewer key'],
    ['POST', '/api/v1/workers/smoke-test', 'viewer key'],
    ['POST', '/api/workers/smoke-test', 'viewer session'],
    ['POST', '/api/v1/workers/local-ai-cli/session', 'viewer key'],
    ['POST', '/api/workers/local-ai-cli/session', 'viewer session'],
    // Connection tests send the stored secret to its service: write role (docs/api/credentials.md).
    ['POST', `/api/v1/credentials/authzcred0001/test`, 'viewer key'],
    ['POST', `/api/v1/workflows/authzwf0001/credentials/test`, 'viewer key'],
  ];
  test.each(cases)('%s %s as a %s: 403 Write permission is required.', async (method, path, who) => {
    const c = caller(who);
    const res = await http(stack.app, method, path, {
      token: c.token,
      cookie: c.cookie,
      body: path.endsWith('/local-ai-cli/session') ? { action: 'disconnect' } : [],
    });
    expect({ status: res.status, body: res.body }).toEqual({ status: 403, body: { error: AUTH_MESSAGES.writeRequired } });
  });

  test('a writer still passes the role check on the session twins and the connection tests', async () => {
    for (const path of [`/api/v1/credentials/cred${randomToken(8)}/test`, `/api/v1/workflows/wf${randomToken(8)}/credentials/test`]) {
      const res = await http(stack.app, 'POST', path, { token: caller('writer key').token, body: [] });
      expect([path, res.status === 401 || res.status === 403]).toEqual([path, false]);
    }
    const res = await http(stack.app, 'POST', '/api/workers/extflow/import-bundle', { cookie: caller('writer session').cookie, body: [] });
    expect(res.status).toBe(400);
  });
});

/**
 * Mounted beside the declared routes, outside the matrix: the OpenAPI document (public), the
 * metrics scrape (its own guard: loopback, METRICS_TOKEN or METRICS_PORT; test/integration/platform)
 * and the codec's CORS preflight (answers headers only).
 */
const OUTSIDE_MATRIX = [
  'GET /api/v1/openapi.json',
  'GET /metrics',
  'OPTIONS /api/temporal-codec/decode',
  'OPTIONS /api/temporal-codec/encode',
];

test("the walk's routes are the router's: every mounted layer is a declared route, and every declared route is mounted", () => {
  const koa = createApp(stack.app.deps);
  const dispatch = koa.middleware.find((m) => 'router' in m) as unknown as {
    router: { stack: Array<{ methods: string[]; path: string | RegExp }> };
  };
  const mounted = new Set(
    dispatch.router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path)}`)),
  );
  const declared = new Set(allRoutes.map((r) => `${r.method.toUpperCase()} ${koaPath(r.path)}`));
  expect([...mounted].filter((k) => !declared.has(k)).sort()).toEqual([...OUTSIDE_MATRIX].sort());
  expect([...declared].filter((k) => !mounted.has(k))).toEqual([]);
  expect(declared.size).toBe(allRoutes.length);
});

test('every principal of issue 27 item 2 is a caller of the walk', () => {
  const live = callers.filter((c) => !c.revoked && !c.otherWorkspace && !c.operator);
  // Owner, admin, writer and viewer, each by a workspace key and by a session.
  expect(new Set(live.filter((c) => c.scope === 'workspace').map((c) => c.role))).toEqual(new Set(MEMBERSHIP_ROLES));
  expect(new Set(live.filter((c) => c.cookie).map((c) => c.role))).toEqual(new Set(MEMBERSHIP_ROLES));
  // A key of every scope: personal, copilot, end-user gateway, organization (and workspace).
  expect(new Set(live.filter((c) => c.token).map((c) => c.scope))).toEqual(new Set(API_KEY_SCOPES));
  // A removed member and another workspace's owner, by key and by session; the operator; nobody.
  const kinds = (cs: Caller[]) => cs.map((c) => (c.token ? 'key' : 'session')).sort();
  expect(kinds(callers.filter((c) => c.revoked))).toEqual(['key', 'session']);
  expect(kinds(callers.filter((c) => c.otherWorkspace))).toEqual(['key', 'session']);
  expect(callers.filter((c) => c.operator)).toHaveLength(1);
  expect(callers.filter((c) => !c.token && !c.cookie)).toHaveLength(1);
});

test('every mounted route declares a role for every workspace principal', () => {
  for (const route of allRoutes) {
    if (route.access.kind === 'public' || route.access.kind === 'operator') continue;
    expect([routeKey(route), route.access.roles]).toEqual([routeKey(route), expect.stringMatching(/^(read|write|admin)$/)]);
  }
});

/**
 * The non-GET routes a viewer may call: each reads, validates or ends the caller's own session.
 * Any other POST, PUT, PATCH or DELETE must need `write` or `admin`: adding one as `read`
 * fails here until it is reviewed and listed.
 */
const VIEWER_POSTS = new Set([
  'POST /api/auth/sign-out',
  'POST /api/invitations/{id}/accept',
  'POST /api/invitations/{id}/decline',
  'POST /api/v1/workflows/import-preview',
  'POST /api/v1/workflows/validate-artifact',
  'POST /api/v1/workflows/{id}/validate',
  'POST /api/v1/databases/query',
  'POST /api/v1/knowledge-bases/search',
  'POST /api/v1/skills/load',
]);

test('every mutation needs write or admin, but for the reviewed list', () => {
  const readMutations = allRoutes
    .filter((r) => r.method !== 'get' && r.access.kind !== 'public' && r.access.kind !== 'operator' && r.access.roles === 'read')
    .map(routeKey);
  expect(readMutations.sort()).toEqual([...VIEWER_POSTS].sort());
});

test('every route × every caller is answered as the matrix says', async () => {
  const first = allRoutes.filter((r) => !ACTS_WITHOUT_INPUT.has(routeKey(r)));
  const last = allRoutes.filter((r) => ACTS_WITHOUT_INPUT.has(routeKey(r)));
  // A public route reads no credential of the walk: two callers are enough to show that.
  const callersOf = (route: AnyRoute) =>
    route.access.kind === 'public' ? callers.filter((c) => c.name === 'anonymous' || c.name === 'owner key') : callers;
  const cells = (routes: AnyRoute[]) => routes.flatMap((route) => callersOf(route).map((c): [AnyRoute, Caller] => [route, c]));
  const failures = [...(await walk(cells(first))), ...(await walk(cells(last)))];
  expect(failures).toEqual([]);
  // Some 2,000 requests: 120 s ran out beside a benchmark at load average 18. A bound for "hung".
}, 900_000);
