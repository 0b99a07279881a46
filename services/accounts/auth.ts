import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiKeyScope } from '../../db/entities';
import { API_KEY_SCOPES } from '../../engine/statuses';
import { sha256Hex } from '../kernel/ids';
import type { ApiKeyPrincipal } from '../kernel/principal';
import type { CredentialCache } from './credentialCache';
import { activeApiKeyByHash, touchApiKeys } from './store';

export const API_KEY_PREFIX = 'hise_';
// `hise_` + base64url of 24 bytes is exactly 32 characters; anything else cannot be ours.
const TOKEN_PATTERN = /^hise_[A-Za-z0-9_-]{32}$/;

/** Extracts the token of an `Authorization: Bearer <token>` header; null for anything else. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** What makes key verification cheap on the hot path: verified keys kept in memory, their uses written in batches. */
export interface KeyVerification {
  cache: CredentialCache;
  uses: KeyUses;
}

/**
 * Verifies an API key token and returns its principal, or null when the request must get
 * 401: not a `hise_` token, unknown, revoked, a stored unknown scope (never upgraded to
 * workspace), a banned user, or a workspace-anchored key whose user is no longer a member.
 * Organization keys are not anchored to a workspace and stay valid when their creator leaves.
 * Successful verification updates `lastUsedAt`: at once without `runtime`, else through
 * `runtime.uses` (at most one write a second per key and process, the latest use always written).
 * With `runtime`, a key verified before is answered from `runtime.cache` (credentialCache.ts
 * says when that forgets it).
 */
export async function verifyApiKey(em: EntityManager, token: string, runtime?: KeyVerification): Promise<ApiKeyPrincipal | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const hash = sha256Hex(token);
  const principal = runtime
    ? await runtime.cache.resolve(`key:${hash}`, async () => {
        const found = await readApiKey(em, hash);
        return found ? { principal: found } : null;
      })
    : await readApiKey(em, hash);
  if (!principal) return null;
  if (runtime) await runtime.uses.record(em, principal.apiKeyId);
  else await touchApiKeys(em, [principal.apiKeyId], new Date());
  return principal;
}

async function readApiKey(em: EntityManager, tokenHash: string): Promise<ApiKeyPrincipal | null> {
  const rows = await activeApiKeyByHash(em, tokenHash);
  const row = rows[0];
  if (!row) return null;
  if (!(API_KEY_SCOPES as readonly string[]).includes(row.scope)) return null;
  if (row.user_status === 'banned') return null;
  const scope = row.scope as ApiKeyScope;
  if (scope !== 'organization' && (!row.workspace_id || !row.role)) return null;
  return {
    kind: 'api_key',
    apiKeyId: row.id,
    principalId: `key:${row.id}`,
    userId: row.created_by_id,
    scope,
    workspaceId: scope === 'organization' ? null : row.workspace_id,
    role: scope === 'organization' ? null : row.role,
    organization: row.organization,
    allowedWorkflowIds: row.allowed_workflow_ids,
  };
}

/**
 * `lastUsedAt` without a write per request: the first use of a key after a quiet second is
 * written before the request goes on (so a single call is visible at once), later uses within
 * that second are written together once it is over, with the latest time. A process that stops
 * may lose the uses of its last second. Writes of one process only; others write their own.
 */
export class KeyUses {
  private readonly lastWrite = new Map<string, number>();
  private readonly pending = new Map<string, Date>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly fork: () => EntityManager,
    private readonly windowMs = 1_000,
  ) {}

  /** Records a successful verification of key `id` (see the class). */
  async record(em: EntityManager, id: string): Promise<void> {
    const now = Date.now();
    if (now - (this.lastWrite.get(id) ?? -Infinity) >= this.windowMs) {
      this.lastWrite.set(id, now);
      await touchApiKeys(em, [id], new Date(now));
      return;
    }
    this.pending.set(id, new Date(now));
    this.timer ??= setTimeout(() => void this.flush(), this.windowMs);
    this.timer.unref();
  }

  /** Writes the uses gathered since the last write; failures are dropped (a use time is not worth a retry loop). */
  async flush(): Promise<void> {
    this.timer = null;
    const now = Date.now();
    for (const [id, at] of this.lastWrite) if (now - at >= this.windowMs && !this.pending.has(id)) this.lastWrite.delete(id);
    if (this.pending.size === 0) return;
    const byTime = new Map<number, string[]>();
    for (const [id, at] of this.pending) {
      this.lastWrite.set(id, now);
      byTime.set(at.getTime(), [...(byTime.get(at.getTime()) ?? []), id]);
    }
    this.pending.clear();
    await Promise.all([...byTime].map(([at, ids]) => touchApiKeys(this.fork(), ids, new Date(at)))).catch(() => undefined);
  }
}
