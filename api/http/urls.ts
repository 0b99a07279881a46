import type { AppContext } from '../context';

/**
 * The origin this request was addressed to (`https://host:port`), from which absolute URLs in
 * responses are built. Honours X-Forwarded-Proto/Host only when TRUST_PROXY is set. (Koa 3's
 * `ctx.origin` is the `Origin` request header instead, which is why this helper exists.)
 */
export function requestOrigin(ctx: AppContext): string {
  return `${ctx.protocol}://${ctx.host}`;
}
