import type { EntityManager } from '@mikro-orm/postgresql';
import { IdempotencyRecordSchema, type IdempotencyRecord } from '../../db/entities';
import { invalidInput, conflict } from './errors';
import { newId, sha256Hex } from './ids';
import {
  completeIdempotencyRecord,
  deleteInProgressIdempotencyRecord,
  deleteStaleIdempotencyRecord,
  insertIdempotencyClaim,
} from './store';
import { canonicalJson } from '../../engine/canonicalJson';

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A claim still in progress after this long belongs to a request that died. */
const ABANDONED_CLAIM_MS = 5 * 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export type IdempotencyFamily = 'bare' | 'envelope';

/** 400 for a missing (when required) or malformed key; `idempotency_key_invalid` in the envelope family. */
export function parseIdempotencyKey(raw: string | undefined, required: boolean): string | null {
  if (raw === undefined || raw === '') {
    if (required) throw invalidInput('Idempotency-Key header is required.', { code: 'idempotency_key_invalid' });
    return null;
  }
  if (!KEY_PATTERN.test(raw)) {
    throw invalidInput('Idempotency-Key must be 1 to 255 visible ASCII characters.', { code: 'idempotency_key_invalid' });
  }
  return raw;
}

/** Fingerprint of a request: method, path and a canonical (key-sorted) JSON of the body. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return sha256Hex(`${method.toUpperCase()} ${path}\n${canonicalJson(body)}`);
}

export type Claim = { kind: 'new'; recordId: string } | { kind: 'replay'; status: number; body: unknown; headers: Record<string, string> };

/**
 * Claims `key` in the workspace for this principal and request. The first caller gets
 * `new` and must later `complete` or `release`; a repeat of the same request by the same
 * principal within 24 h gets the stored response; the same key with another request or by
 * another principal is a 409, as is a repeat while the first is still running.
 */
export async function claimIdempotencyKey(
  em: EntityManager,
  args: { workspaceId: string; key: string; principalId: string; fingerprint: string },
): Promise<Claim> {
  const now = new Date();
  // An expired record no longer binds its key, and a claim left in progress by a crashed
  // process must not block the key for 24 h: drop both so the key can be used afresh.
  await deleteStaleIdempotencyRecord(em, {
    workspaceId: args.workspaceId,
    key: args.key,
    now,
    abandonedBefore: new Date(now.getTime() - ABANDONED_CLAIM_MS),
  });
  const recordId = newId('idem');
  const claimed = await insertIdempotencyClaim(em, {
    id: recordId,
    workspaceId: args.workspaceId,
    key: args.key,
    principalId: args.principalId,
    fingerprint: args.fingerprint,
    now,
    expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
  });
  if (claimed) return { kind: 'new', recordId };

  const existing = await em.fork().findOne(IdempotencyRecordSchema, { workspaceId: args.workspaceId, key: args.key });
  if (!existing) return claimIdempotencyKey(em, args); // released between our insert and read: try again
  return replayOrConflict(existing, args);
}

/**
 * Whether `key` is bound in the workspace right now (a live record, finished or in progress).
 * Routes with streamed bodies ask before reading the body: a bound key means the body is only
 * fingerprinted (to replay or refuse), never stored again.
 */
export async function idempotencyKeyInUse(em: EntityManager, args: { workspaceId: string; key: string }): Promise<boolean> {
  const record = await em
    .fork()
    .findOne(IdempotencyRecordSchema, { workspaceId: args.workspaceId, key: args.key, expiresAt: { $gt: new Date() } });
  return record !== null;
}

function replayOrConflict(existing: IdempotencyRecord, args: { principalId: string; fingerprint: string }): Claim {
  const mismatch = { code: 'idempotency_replay_mismatch' };
  if (existing.principalId !== args.principalId) throw conflict('Idempotency-Key was already used by another principal.', mismatch);
  if (existing.fingerprint !== args.fingerprint)
    throw conflict('Idempotency-Key was already used with a different request body.', mismatch);
  if (existing.state !== 'completed' || existing.responseStatus === null) {
    throw conflict('A request with this Idempotency-Key is still in progress.', { code: 'conflict' });
  }
  return { kind: 'replay', status: existing.responseStatus, body: existing.responseBody, headers: existing.responseHeaders ?? {} };
}

/** Stores the response of a claimed key so later repeats replay it. */
export async function completeIdempotencyKey(
  em: EntityManager,
  recordId: string,
  response: { status: number; body: unknown; headers: Record<string, string> },
): Promise<void> {
  await completeIdempotencyRecord(em, recordId, {
    status: response.status,
    body: JSON.stringify(response.body ?? null),
    headers: JSON.stringify(response.headers),
  });
}

/** Frees a claimed key after a failure, so the client can retry with the same key. */
export async function releaseIdempotencyKey(em: EntityManager, recordId: string): Promise<void> {
  await deleteInProgressIdempotencyRecord(em, recordId);
}
