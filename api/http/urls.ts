import type { AppContext } from '../context';

/**
 * The origin this request was addressed to (`https://host:port`), from which absolute URLs in
 * responses are built. Honours X-Forwarded-Proto/Host only when TRUST_PROXY is set. (Koa 3's
 * `ctx.origin` is the `Origin` request header instead, which is why this helper exists.)
 */
export function requestOrigin(ctx: AppContext): string {
  return `${ctx.protocol}://${ctx.host}`;
}

/** Where an end-user gateway key reads and cancels a run it started (never the workspace run routes). */
export function endUserRunUrls(ctx: AppContext, runId: string) {
  const self = `${requestOrigin(ctx)}/api/v1/end-users/runs/${encodeURIComponent(runId)}`;
  return { statusUrl: self, cancelUrl: `${self}/cancel` };
}
