/**
 * Who may scrape `/metrics` (docs/operations.md, "Metrics"). The document names every route,
 * run counts and process internals, so it is never open to the world by default:
 *
 * - METRICS_PORT set: served on that port only (the API port answers 404, as for any unknown path);
 * - METRICS_TOKEN set: a scrape must send `Authorization: Bearer <token>`, else 401;
 * - neither: on the API port, for loopback callers only (a sidecar, `curl localhost`); any other
 *   caller, or a request relayed by a proxy (it carries forwarding headers), gets 404.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import Koa from 'koa';
import type { AppDeps } from './deps';
import { listen, type RunningServer } from './server';

export const METRICS_PATH = '/metrics';

const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/** A loopback peer that is not relaying someone else's request. */
function isLoopbackCaller(ctx: Koa.Context): boolean {
  const peer = ctx.req.socket.remoteAddress ?? '';
  const loopback = peer === '::1' || /^(::ffff:)?127\./.test(peer);
  return loopback && !FORWARDING_HEADERS.some((h) => ctx.get(h) !== '');
}

function sameToken(sent: string, expected: string): boolean {
  // Hashed first so the comparison takes the same time whatever the lengths.
  const a = createHash('sha256').update(sent).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * The `/metrics` handler for the port it runs on. Answers 404 on the API port when a metrics
 * port is configured, 401 without the configured token, 404 to non-loopback callers when no
 * token or port is configured.
 */
export function metricsHandler(deps: AppDeps, where: 'api-port' | 'metrics-port') {
  const { port, token } = deps.config.metrics;
  return async (ctx: Koa.Context) => {
    if (where === 'api-port' && port !== undefined) return;
    if (token !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
      if (match?.[1] === undefined || !sameToken(match[1], token)) {
        ctx.status = 401;
        ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
        ctx.type = 'text/plain';
        ctx.body = 'Unauthorized: send Authorization: Bearer <METRICS_TOKEN>\n';
        return;
      }
    } else if (where === 'api-port' && !isLoopbackCaller(ctx)) return;
    ctx.set('Content-Type', deps.metrics.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await deps.metrics.render();
  };
}

/** The metrics port's own server (only `/metrics`), or null when METRICS_PORT is unset. */
export async function listenMetrics(deps: AppDeps, opts: { port?: number } = {}): Promise<RunningServer | null> {
  const port = opts.port ?? deps.config.metrics.port;
  if (port === undefined) return null;
  const app = new Koa();
  app.silent = true;
  const handler = metricsHandler(deps, 'metrics-port');
  app.use(async (ctx) => {
    if (ctx.path !== METRICS_PATH) return;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      return;
    }
    await handler(ctx);
  });
  return listen(app, { port, host: deps.config.metrics.host, lifecycle: { shuttingDown: false } });
}
