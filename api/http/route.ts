import type { Router } from '@koa/router';
import type { Next } from 'koa';
import { z, type ZodType } from 'zod';
import type { AppContext } from '../context';
import { type Family, envelopeOk } from './families';
import { describeZodError } from './validation';
import { checkResponseContract, contractViolationBody, type ResponseDoc, type RouteResponses } from './responseContract';
import { bareAuthErrors, bareErrorSchema, envelopeErrorSchema } from '../schemas';
import { envelopeAuthErrors } from './envelopeErrors';
import { assertAccessDeclared, authenticate, type Access } from '../middleware/auth';
import { withIdempotency } from '../middleware/idempotency';
import { invalidInput } from '../../services/kernel/errors';
import { findUnstorableText } from '../../services/kernel/storableText';
import type { WorkspacePrincipal } from '../../services/kernel/principal';
import type { AppDeps } from '../deps';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What a handler answers; the route writes it in its family's shape. */
export interface RouteResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Send `body` as it is (a download stream), without the envelope. */
  raw?: boolean;
}

type Infer<S> = S extends ZodType ? z.output<S> : undefined;

export interface RouteInput<P, Q, B, A extends Access> {
  params: Infer<P>;
  query: Infer<Q>;
  body: Infer<B>;
  principal: A extends { kind: 'public' } | { kind: 'operator' } ? undefined : WorkspacePrincipal;
  deps: AppDeps;
}

/**
 * One route: its path, auth, request schemas, responses and handler. The same definition
 * mounts the Koa route (validation runs before the handler, so bad input is a 400 and the
 * handler only sees parsed values) and feeds the OpenAPI document.
 */
export interface RouteDef<P = undefined, Q = undefined, B = undefined, A extends Access = Access> {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/api/v1/workflows/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  family: Family;
  access: A;
  params?: P;
  query?: Q;
  body?: B;
  /** Code used in the envelope family when the query or params fail validation. */
  queryErrorCode?: string;
  idempotency?: 'optional' | 'required';
  /**
   * The request body is raw bytes the handler streams itself (`ctx.req`): it is never parsed or
   * buffered. Such a route handles its Idempotency-Key itself with `withStreamedIdempotency`
   * (api/middleware/idempotency.ts); `idempotency` then only documents the header.
   */
  rawBody?: { contentType: string; description: string };
  /** Every status the handler answers with, and the error statuses clients should expect. */
  responses: RouteResponses;
  handler: (ctx: AppContext, input: RouteInput<P, Q, B, A>) => Promise<RouteResult>;
}

// Erased form used by collections of routes of different shapes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDef<any, any, any, any>;

/** Identity function that gives a route definition its types. */
export function defineRoute<
  P extends ZodType | undefined = undefined,
  Q extends ZodType | undefined = undefined,
  B extends ZodType | undefined = undefined,
  A extends Access = Access,
>(def: RouteDef<P, Q, B, A>): RouteDef<P, Q, B, A> {
  return def;
}

/**
 * A route's responses as a route group takes them: a status with a text is an error answered in
 * the group's family shape (`bareErrorSchema` or `envelopeErrorSchema`), so an area's error
 * statuses read as what they mean; a full `ResponseDoc` for every other answer.
 */
export type GroupResponses = { [status: number]: ResponseDoc | string } & { default?: ResponseDoc };

/**
 * The access declarations most routes make, by name. Each is a complete declaration (kind, key
 * scopes, role), so a route that names one still declares its access in full.
 */
/** A workspace key, any member (viewers included). */
export const WORKSPACE_READ = { kind: 'apiKey', scopes: 'workspace', roles: 'read' } as const;
/** A workspace key of a role above viewer. */
export const WORKSPACE_WRITE = { kind: 'apiKey', scopes: 'workspace', roles: 'write' } as const;
/** A workspace key, Admin or Owner. */
export const WORKSPACE_ADMIN = { kind: 'apiKey', scopes: 'workspace', roles: 'admin' } as const;
/** Any key a safe read admits (workspace, personal, copilot), any member. */
export const ANY_KEY_READ = { kind: 'apiKey', scopes: 'safe-read', roles: 'read' } as const;
/** Any key a safe read admits, of a role above viewer. */
export const ANY_KEY_WRITE = { kind: 'apiKey', scopes: 'safe-read', roles: 'write' } as const;
/** The session cookie, any member. */
export const SESSION_READ = { kind: 'session', roles: 'read' } as const;
/** The session cookie, a role above viewer. */
export const SESSION_WRITE = { kind: 'session', roles: 'write' } as const;
/** The session cookie, Admin or Owner. */
export const SESSION_ADMIN = { kind: 'session', roles: 'admin' } as const;
/** No credential: the handler checks what the request carries (a token, a signature). */
export const PUBLIC = { kind: 'public' } as const;

/** What every route of an area (or of one mount of it) shares. */
export interface RouteGroup<A extends Access> {
  tags: string[];
  family: Family;
  /** The access of the group's routes; a route declares its own when it needs another role or kind. */
  access: A;
  /**
   * Error responses every route of the group can answer; a route's own response for a status wins.
   * Left out in a group of key routes, they are the family's key errors (`bareAuthErrors` or
   * `envelopeAuthErrors`); left out in any other group, there are none.
   */
  errors?: GroupResponses;
  /** Put before each route's path: `path: '/{id}'` under `/api/v1/skills` is `/api/v1/skills/{id}`. */
  pathPrefix?: string;
}

/** A route of a group: what a `RouteDef` declares, less what the group gives it. */
export type GroupRouteDef<P, Q, B, A extends Access> = Omit<RouteDef<P, Q, B, A>, 'tags' | 'family' | 'access' | 'responses'> & {
  access?: A;
  responses: GroupResponses;
};

/**
 * `defineRoute` with an area's shared parts declared once: tags, family, access, the error
 * responses and the path prefix. The result is a plain `RouteDef`, so every route still carries
 * a complete access declaration (`assertRoutesDeclared` checks it when the app is built).
 */
export function routeGroup<GA extends Access>(group: RouteGroup<GA>) {
  const errorSchema = group.family === 'envelope' ? envelopeErrorSchema : bareErrorSchema;
  const resolve = (responses: GroupResponses | undefined): RouteResponses =>
    Object.fromEntries(
      Object.entries(responses ?? {}).map(([status, r]) => [status, typeof r === 'string' ? { description: r, schema: errorSchema } : r]),
    );
  const errors = group.errors ?? (group.access.kind === 'apiKey' ? keyAuthErrors[group.family] : undefined);
  return function groupRoute<
    P extends ZodType | undefined = undefined,
    Q extends ZodType | undefined = undefined,
    B extends ZodType | undefined = undefined,
    A extends Access = GA,
  >(def: GroupRouteDef<P, Q, B, A>): RouteDef<P, Q, B, A> {
    return {
      ...def,
      path: `${group.pathPrefix ?? ''}${def.path}`,
      tags: group.tags,
      family: group.family,
      access: def.access ?? (group.access as unknown as A),
      responses: { ...resolve(errors), ...resolve(def.responses) },
    };
  };
}

/** The error responses of a key route in each family, when its group names none. */
const keyAuthErrors: Record<Family, GroupResponses> = { bare: bareAuthErrors, envelope: envelopeAuthErrors };

/**
 * The access of a route's session-cookie twin (same handler under a browser path): the cookie
 * instead of a key, and the original's role, so a copy cannot lose the rule.
 */
export function sessionTwinAccess(access: Access): Access {
  if (access.kind === 'public' || access.kind === 'operator') throw new Error(`a ${access.kind} route has no session twin`);
  return { kind: 'session', roles: access.roles };
}

/** A twin of a key route under another path: same handler, the cookie instead of a key, the same role. */
export function sessionTwin(route: AnyRoute, path: string, operationId: string): AnyRoute {
  return { ...route, path, operationId, access: sessionTwinAccess(route.access) };
}

/** The access of a route declared in both response styles: a workspace key or the session cookie. */
type StyleAccess = Extract<Access, { kind: 'apiKey' } | { kind: 'session' }>;

/** What one response style of a route pair declares on its own. */
export interface RouteStyle<A extends StyleAccess> {
  path: string;
  operationId: string;
  access: A;
  /** Error responses of this style (merged over the shared ones). */
  responses: RouteResponses;
  /** When this style's summary differs from the shared one. */
  summary?: string;
}

/**
 * One route mounted in both response styles: the v1 envelope (`/api/v1/...`, API keys) and the
 * bare session twin (`/api/...`, cookie). Params, query, body, handler and shared responses are
 * declared once; each style brings its path, operationId, access and error responses.
 * Returns `[envelope, bare]`.
 */
export function defineRoutePair<
  P extends ZodType | undefined = undefined,
  Q extends ZodType | undefined = undefined,
  B extends ZodType | undefined = undefined,
>(
  shared: Omit<RouteDef<P, Q, B, StyleAccess>, 'path' | 'operationId' | 'family' | 'access'>,
  styles: { envelope: RouteStyle<StyleAccess>; bare: RouteStyle<StyleAccess> },
): [RouteDef<P, Q, B, StyleAccess>, RouteDef<P, Q, B, StyleAccess>] {
  const mount = (family: Family, style: RouteStyle<StyleAccess>): RouteDef<P, Q, B, StyleAccess> => ({
    ...shared,
    path: style.path,
    operationId: style.operationId,
    summary: style.summary ?? shared.summary,
    family,
    access: style.access,
    responses: { ...shared.responses, ...style.responses },
  });
  return [mount('envelope', styles.envelope), mount('bare', styles.bare)];
}

/**
 * Refuses a route list that cannot be mounted safely: a route without a complete access
 * declaration (see `assertAccessDeclared`), or two routes with the same method and path.
 */
export function assertRoutesDeclared(routes: AnyRoute[]): void {
  const seen = new Set<string>();
  for (const route of routes) {
    const where = `${route.method?.toUpperCase()} ${route.path} (${route.operationId})`;
    assertAccessDeclared(route.access, where);
    const key = `${route.method} ${koaPath(route.path)}`;
    if (seen.has(key)) throw new Error(`${where}: declared twice`);
    seen.add(key);
  }
}

/** Converts `/a/{id}` into Koa's `/a/:id`. */
export function koaPath(openApiPath: string): string {
  return openApiPath.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * Mounts every route on the router: family, auth, body parsing, validation and idempotency,
 * in that order (a request without valid credentials is refused before its body is read).
 * Throws before mounting anything when a route has no complete access declaration.
 * With `config.validateResponses` on (tests, and VALIDATE_RESPONSES=true), every answer of a
 * handler is checked against the schema its route declares for that status; a mismatch is
 * logged with its zod issues and answered 500, so the request that caused it fails.
 */
export function mountRoutes(
  router: Router<AppContext['state'], AppContext>,
  routes: AnyRoute[],
  parseBody: (ctx: AppContext, next: Next) => Promise<unknown>,
): void {
  assertRoutesDeclared(routes);
  for (const route of routes) {
    const setFamily = async (ctx: AppContext, next: Next) => {
      ctx.state.family = route.family;
      await next();
    };
    const body = route.rawBody ? skipBody : parseBody;
    router[route.method](koaPath(route.path), setFamily, authenticate(route.access), body, async (ctx: AppContext) => {
      const input = parseInput(ctx, route);
      const run = async (): Promise<RouteResult> => {
        const result = await route.handler(ctx, input);
        if (ctx.deps.config.validateResponses) {
          const violation = checkResponseContract(route, result.status, result.body);
          if (violation) {
            ctx.state.log.error({ operationId: route.operationId, status: result.status, issues: violation.issues }, violation.message);
            return { status: 500, body: contractViolationBody(route.family, violation) };
          }
        }
        return { ...result, body: route.family === 'envelope' && !result.raw ? envelopeOk(result.body) : result.body };
      };
      const result = route.idempotency && !route.rawBody ? await withIdempotency(ctx, route.idempotency, run) : await run();
      ctx.status = result.status;
      if (result.headers) ctx.set(result.headers);
      ctx.body = result.body;
    });
  }
}

const skipBody = (_ctx: AppContext, next: Next) => next();

function parseInput(ctx: AppContext, route: AnyRoute): RouteInput<ZodType, ZodType, ZodType, Access> {
  const queryCode = route.family === 'envelope' ? (route.queryErrorCode ?? 'request_malformed') : undefined;
  const bodyCode = route.family === 'envelope' ? 'validation_failed' : undefined;
  refuseUnstorable(ctx.params, 'path', 'Invalid path parameters', queryCode);
  const params = validate(route.params, ctx.params, 'Invalid path parameters', queryCode);
  refuseUnstorable(ctx.query, 'query', 'Invalid query', queryCode);
  const query = validate(route.query, ctx.query, 'Invalid query', queryCode);
  if (!route.rawBody) refuseUnstorable(ctx.request.body, 'body', 'Invalid request body', bodyCode);
  return {
    params,
    query,
    body: validate(route.body, ctx.request.body ?? {}, 'Invalid request body', bodyCode),
    principal: ctx.state.principal,
    deps: ctx.deps,
  };
}

/** How deep a JSON body may nest; deeper bodies are refused before anything walks them recursively. */
export const MAX_BODY_DEPTH = 100;

/**
 * Refuses input text the database cannot store (U+0000, lone surrogates), anywhere in the path,
 * the query or the body, and bodies nested deeper than MAX_BODY_DEPTH: a 400 before any handler,
 * so a refused request changes nothing (a resume token stays unused).
 */
function refuseUnstorable(value: unknown, root: string, prefix: string, code: string | undefined): void {
  const finding = findUnstorableText(value, { root, maxDepth: MAX_BODY_DEPTH });
  if (!finding) return;
  const message =
    finding.problem === 'too deeply nested'
      ? `${prefix}: ${root} is nested more than ${MAX_BODY_DEPTH} levels deep`
      : `${prefix}: ${finding.path || root} ${finding.problem}; such text cannot be stored, remove or escape it`;
  throw invalidInput(message, { code, details: code ? undefined : { issues: [{ path: finding.path, message: finding.problem }] } });
}

function validate(schema: ZodType | undefined, value: unknown, prefix: string, code: string | undefined): unknown {
  if (!schema) return undefined;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw invalidInput(describeZodError(parsed.error, prefix), {
    code,
    details: code ? undefined : { issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
  });
}
