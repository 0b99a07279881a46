import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKeySchema, type ApiKeyScope, type MembershipRole, type OrganizationGrant } from '../../db/entities';
import { API_KEY_SCOPES } from '../../engine/statuses';
import { sha256Hex } from '../kernel/ids';
import type { ApiKeyPrincipal } from '../kernel/principal';

export const API_KEY_PREFIX = 'hise_';
// `hise_` + base64url of 24 bytes is exactly 32 characters; anything else cannot be ours.
const TOKEN_PATTERN = /^hise_[A-Za-z0-9_-]{32}$/;

/** Extracts the token of an `Authorization: Bearer <token>` header; null for anything else. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

interface KeyRow {
  id: string;
  scope: string;
  workspace_id: string | null;
  created_by_id: string;
  organization: OrganizationGrant | null;
  allowed_workflow_ids: string[] | null;
  user_status: string;
  role: MembershipRole | null;
}

/**
 * Verifies an API key token and returns its principal, or null when the request must get
 * 401: not a `hise_` token, unknown, revoked, a stored unknown scope (never upgraded to
 * workspace), a banned user, or a workspace-anchored key whose user is no longer a member.
 * Organization keys are not anchored to a workspace and stay valid when their creator leaves.
 * Successful verification updates `lastUsedAt`.
 */
export async function verifyApiKey(em: EntityManager, token: string): Promise<ApiKeyPrincipal | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  const rows: KeyRow[] = await em.execute(
    `select k.id, k.scope, k.workspace_id, k.created_by_id, k.organization, k.allowed_workflow_ids,
            u.status as user_status, m.role
       from api_keys k
       join users u on u.id = k.created_by_id
       left join memberships m on m.workspace_id = k.workspace_id and m.user_id = k.created_by_id
      where k.token_hash = ? and k.revoked_at is null`,
    [sha256Hex(token)],
  );
  const row = rows[0];
  if (!row) return null;
  if (!(API_KEY_SCOPES as readonly string[]).includes(row.scope)) return null;
  if (row.user_status === 'banned') return null;
  const scope = row.scope as ApiKeyScope;
  if (scope !== 'organization' && (!row.workspace_id || !row.role)) return null;

  await em.nativeUpdate(ApiKeySchema, { id: row.id }, { lastUsedAt: new Date() });
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
