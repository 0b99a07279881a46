import type { AppContext } from '../context';
import type { RouteResult } from '../http/route';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  idempotencyKeyInUse,
  parseIdempotencyKey,
  releaseIdempotencyKey,
  requestFingerprint,
} from '../../services/kernel/idempotency';
import { conflict, forbidden, AUTH_MESSAGES } from '../../services/kernel/errors';

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
  /**
   * For routes that bind the key to something else than the raw request: `key` replaces the
   * header (e.g. a key sent in the body) and `fingerprint` the method, path and body.
   */
  binding: { key?: string; fingerprint?: string } = {},
): Promise<RouteResult> {
  const key = parseIdempotencyKey(binding.key ?? (ctx.get('idempotency-key') || undefined), mode === 'required');
  if (!key) return handler();
  const principal = ctx.state.principal;
  if (!principal?.workspaceId) throw forbidden(AUTH_MESSAGES.workspaceKeyRequired);

  const em = ctx.state.em;
  const claim = await claimIdempotencyKey(em, {
    workspaceId: principal.workspaceId,
    key,
    principalId: principal.principalId,
    fingerprint: binding.fingerprint ?? requestFingerprint(ctx.method, ctx.path, ctx.request.body ?? null),
  });
  if (claim.kind === 'replay') return replayed(claim);
  return runClaimed(em, claim.recordId, handler);
}

function replayed(claim: { status: number; body: unknown; headers: Record<string, string> }): RouteResult {
  return { status: claim.status, body: claim.body, headers: { ...claim.headers, [REPLAYED_HEADER]: 'true' } };
}

/** Runs the work of a freshly claimed key: its answer is stored, unless it threw or is a 5xx (then the key is freed). */
async function runClaimed(em: AppContext['state']['em'], recordId: string, work: () => Promise<RouteResult>): Promise<RouteResult> {
  let result: RouteResult;
  try {
    result = await work();
  } catch (err) {
    await releaseIdempotencyKey(em, recordId);
    throw err;
  }
  if (result.status >= 500) await releaseIdempotencyKey(em, recordId);
  else await completeIdempotencyKey(em, recordId, { status: result.status, body: result.body, headers: result.headers ?? {} });
  return result;
}

/** A request whose body is streamed (never parsed or held), as `withStreamedIdempotency` drives it. */
export interface StreamedRequest {
  /** Reads the body only to fingerprint it: the key is already bound, so nothing is stored. */
  measure(): Promise<unknown>;
  /**
   * Refuses what can be refused before reading, then reads the body into storage. Returns the
   * body's fingerprint (e.g. its length and SHA-256) and how to keep (`commit`) or drop it.
   */
  stage(): Promise<{ fingerprint: unknown; commit(): Promise<RouteResult>; discard(): Promise<void> }>;
}

/**
 * `withIdempotency` for routes with a streamed raw body (PUT file content), whose fingerprint
 * (method, path and what `stage`/`measure` return) is known only once the body has been read:
 * the key is checked first (400 `idempotency_key_invalid` before the body is touched); a key
 * already bound has its body measured and the stored answer replayed (or 409
 * `idempotency_replay_mismatch`); a fresh key has the body staged, then claimed, then
 * committed, and a request that lost a race for the same key drops what it staged. With
 * `mode: 'optional'` a request without a key is staged and committed as it is.
 */
export async function withStreamedIdempotency(
  ctx: AppContext,
  request: StreamedRequest,
  mode: 'optional' | 'required' = 'required',
): Promise<RouteResult> {
  const key = parseIdempotencyKey(ctx.get('idempotency-key') || undefined, mode === 'required');
  if (!key) {
    const staged = await request.stage();
    return staged.commit();
  }
  const principal = ctx.state.principal;
  if (!principal?.workspaceId) throw forbidden(AUTH_MESSAGES.workspaceKeyRequired);
  const em = ctx.state.em;
  const claimWith = async (body: unknown) =>
    claimIdempotencyKey(em, {
      workspaceId: principal.workspaceId,
      key,
      principalId: principal.principalId,
      fingerprint: requestFingerprint(ctx.method, ctx.path, body),
    });
  if (await idempotencyKeyInUse(em, { workspaceId: principal.workspaceId, key })) {
    const claim = await claimWith(await request.measure());
    if (claim.kind === 'replay') return replayed(claim);
    // The earlier record expired while the body was read: the body is gone and nothing was stored.
    await releaseIdempotencyKey(em, claim.recordId);
    throw conflict('The Idempotency-Key expired while the body was being read; send the request again.');
  }

  const staged = await request.stage();
  let claim: Awaited<ReturnType<typeof claimWith>>;
  try {
    claim = await claimWith(staged.fingerprint);
  } catch (err) {
    await staged.discard().catch(() => undefined);
    throw err;
  }
  if (claim.kind === 'replay') {
    await staged.discard().catch(() => undefined);
    return replayed(claim);
  }
  return runClaimed(em, claim.recordId, staged.commit);
}
