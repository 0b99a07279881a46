import type { AppContext } from '../context';
import type { RouteResult } from '../http/route';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  parseIdempotencyKey,
  releaseIdempotencyKey,
  requestFingerprint,
} from '../../services/idempotency';
import { forbidden, AUTH_MESSAGES } from '../../services/errors';

export const REPLAYED_HEADER = 'Idempotency-Replayed';

/**
 * Runs `handler` at most once per (workspace, Idempotency-Key). A repeat by the same
 * principal with the same method, path and body replays the stored status and body with
 * `Idempotency-Replayed: true`; responses of 500 and above, and thrown errors, are not
 * stored, so the client may retry with the same key.
 */
export async function withIdempotency(
  ctx: AppContext,
  mode: 'optional' | 'required',
  handler: () => Promise<RouteResult>,
): Promise<RouteResult> {
  const key = parseIdempotencyKey(ctx.get('idempotency-key') || undefined, mode === 'required');
  if (!key) return handler();
  const principal = ctx.state.principal;
  if (!principal?.workspaceId) throw forbidden(AUTH_MESSAGES.workspaceKeyRequired);

  const em = ctx.state.em;
  const claim = await claimIdempotencyKey(em, {
    workspaceId: principal.workspaceId,
    key,
    principalId: principal.principalId,
    fingerprint: requestFingerprint(ctx.method, ctx.path, ctx.request.body ?? null),
  });
  if (claim.kind === 'replay') {
    return { status: claim.status, body: claim.body, headers: { ...claim.headers, [REPLAYED_HEADER]: 'true' } };
  }
  let result: RouteResult;
  try {
    result = await handler();
  } catch (err) {
    await releaseIdempotencyKey(em, claim.recordId);
    throw err;
  }
  if (result.status >= 500) await releaseIdempotencyKey(em, claim.recordId);
  else await completeIdempotencyKey(em, claim.recordId, { status: result.status, body: result.body, headers: result.headers ?? {} });
  return result;
}
