import Koa from 'koa';
import { Router } from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { AppContext, AppState } from './context';
import type { AppDeps } from './deps';
import { errorMiddleware } from './middleware/errors';
import { requestContext } from './middleware/requestContext';
import { koaPath, mountRoutes, type AnyRoute } from './http/route';
import type { Family } from './http/families';
import { buildOpenApiDocument } from './openapi';
import { METRICS_PATH, metricsHandler } from './metrics';
import { apiKeyRoutes } from './routes/apiKeys';
import { organizationRoutes } from './routes/organizations';
import { authRoutes } from './routes/auth';
import { healthRoutes } from './routes/health';
import { workspaceRoutes } from './routes/workspaces';
import { invitationRoutes } from './routes/invitations';
import { workflowRoutes } from './routes/workflows';
import { runRoutes } from './routes/runs';
import { endUserRoutes } from './routes/endUsers';
import { logRoutes } from './routes/logs';
import { webhookRoutes } from './routes/webhooks';
import { workerRoutes } from './routes/workers';
import { extflowRoutes } from './routes/extflow';
import { destinationRoutes } from './routes/destinations';
import { CODEC_PATH, codecCors, codecRefusalsForCli, temporalCodecRoutes } from './routes/temporalCodec';
import { fileRoutes } from './routes/files';
import { credentialRoutes } from './routes/credentials';
import { databaseRoutes } from './routes/databases';
import { configurationRoutes } from './routes/configuration';
import { workflowMcpRoutes } from './routes/workflowMcp';
import { repositoryRoutes } from './routes/repository';
import { mailerRoutes } from './routes/mailer';
import { knowledgeRoutes } from './routes/knowledge';
import { knowledgeConnectorRoutes } from './routes/knowledgeConnectors';
import { skillRoutes } from './routes/skills';
import { researchRoutes } from './routes/research';
import { commandRoutes } from './routes/commands';

/** Every route of the service; the router and the OpenAPI document are both built from it. */
export const allRoutes: AnyRoute[] = [
  ...healthRoutes,
  ...authRoutes,
  ...apiKeyRoutes,
  ...organizationRoutes,
  ...workspaceRoutes,
  ...invitationRoutes,
  ...workflowRoutes,
  ...destinationRoutes,
  ...runRoutes,
  ...endUserRoutes,
  ...logRoutes,
  ...webhookRoutes,
  ...mailerRoutes,
  ...workerRoutes,
  ...extflowRoutes,
  ...credentialRoutes,
  ...fileRoutes,
  ...databaseRoutes,
  ...configurationRoutes,
  ...workflowMcpRoutes,
  ...repositoryRoutes,
  ...knowledgeRoutes,
  ...knowledgeConnectorRoutes,
  ...skillRoutes,
  ...researchRoutes,
  ...commandRoutes,
  ...temporalCodecRoutes,
];

const OPENAPI_PATH = '/api/v1/openapi.json';

/**
 * Builds the Koa app from injected dependencies; it holds no global state of its own.
 * `routes` defaults to every route of the service.
 */
export function createApp(deps: AppDeps, routes: AnyRoute[] = allRoutes): Koa<AppState, { deps: AppDeps }> {
  // maxIpsCount: only the X-Forwarded-For entries our own proxies appended are believed; the
  // leftmost ones are whatever the client sent (ctx.ip keys the sign-in limits).
  const app = new Koa<AppState, { deps: AppDeps }>({ proxy: deps.config.trustProxy, maxIpsCount: deps.config.trustProxyHops });
  app.context.deps = deps;
  // Errors are answered by errorMiddleware; Koa's own handler would only log them twice.
  app.silent = true;

  // The request context is outermost so its access log and metrics see the status the error
  // middleware chose; the error middleware runs inside it, after the codec's CORS headers are
  // set (so its refusals carry them), and around the codec's refusals for the Temporal CLI.
  app.use(requestContext);
  app.use(codecCors(deps));
  app.use(errorMiddleware);
  app.use(codecRefusalsForCli());
  // Parsed per route, after the route has set its error family, so a malformed body is
  // answered in that family; unmatched paths never read their body.
  const parseBody = bodyParser({
    // DELETE too: some deletes name their target in the body (`DELETE /databases/{id}/rows { rowIndex }`).
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],
    enableTypes: ['json', 'form', 'text'],
    jsonLimit: deps.config.bodyLimit,
    formLimit: deps.config.bodyLimit,
    textLimit: deps.config.bodyLimit,
    encoding: 'utf-8',
  });

  const router = new Router<AppState, AppContext>();
  mountRoutes(router, routes, parseBody);
  let openApiDocument: unknown;
  router.get(OPENAPI_PATH, (ctx) => {
    openApiDocument ??= buildOpenApiDocument(routes, { version: process.env.npm_package_version ?? '0.1.0' });
    ctx.body = openApiDocument;
  });
  // Operators' scrape endpoint: loopback only, behind METRICS_TOKEN, or on METRICS_PORT (api/metrics.ts).
  router.get(METRICS_PATH, metricsHandler(deps, 'api-port'));
  // The Web UI's preflight before it posts payloads to the codec endpoint from its own origin.
  // Its CORS headers come from codecCors (outside the error middleware, so refusals carry them too).
  router.options([`${CODEC_PATH}/decode`, `${CODEC_PATH}/encode`], (ctx) => {
    ctx.status = 204;
  });
  app.use(methodNotAllowed(routes));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/**
 * A method the router does not implement at all (TRACE, PROPFIND, …) is answered like any other
 * method the path does not allow: 405 with Allow (404 when no route has the path), in the family
 * of the route whose path matched, as is a 405 for a known method.
 */
function methodNotAllowed(routes: AnyRoute[]) {
  const familyOfPath = new Map<string, Family>(routes.map((r) => [koaPath(r.path), r.family]));
  return async (ctx: AppContext, next: () => Promise<unknown>) => {
    await next();
    if ((ctx.status !== 405 && ctx.status !== 501) || (ctx.body !== undefined && ctx.body !== null)) return;
    const matched = (ctx as { matched?: Array<{ path?: string }> }).matched ?? [];
    const family = matched.map((layer) => familyOfPath.get(String(layer.path))).find((f) => f !== undefined);
    if (family) ctx.state.family = family;
    if (ctx.status === 501) {
      if (ctx.response.get('Allow')) ctx.status = 405;
      else {
        ctx.remove('Allow');
        ctx.status = 404;
      }
    }
  };
}
