import { randomUUID } from 'node:crypto';
import type { Next } from 'koa';
import type { AppContext } from '../context';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives each request an id (the caller's `X-Request-Id` when it is sane, else a UUID),
 * echoes it, binds a child logger and a fresh entity manager (forked when first used), and
 * writes one access log line.
 */
export async function requestContext(ctx: AppContext, next: Next): Promise<void> {
  const incoming = ctx.get('x-request-id');
  const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
  const started = performance.now();
  ctx.set('X-Request-Id', requestId);
  ctx.state.requestId = requestId;
  ctx.state.family = 'bare';
  ctx.state.log = ctx.deps.logger.child({ requestId });
  // Forked on first use: routes that never touch the ORM (the webhook intake) skip its cost.
  let em: AppContext['state']['em'] | undefined;
  Object.defineProperty(ctx.state, 'em', { get: () => (em ??= ctx.deps.orm.em.fork()), configurable: true, enumerable: true });
  try {
    await next();
  } finally {
    // While draining, tell keep-alive clients to reconnect (to another instance).
    if (ctx.deps.lifecycle.shuttingDown) ctx.set('Connection', 'close');
    const durationMs = performance.now() - started;
    const route = typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : 'unmatched';
    ctx.deps.metrics.observeRequest(route, ctx.method, ctx.status, durationMs / 1000);
    ctx.state.log.info({ method: ctx.method, path: ctx.path, route, status: ctx.status, durationMs: Math.round(durationMs) }, 'request');
  }
}
