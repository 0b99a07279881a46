import type { ApiKeyScope, MembershipRole, OrganizationGrant } from '../../db/entities';

/**
 * Who is calling, as established by authentication. Every service call that touches
 * workspace data receives one and scopes its queries by `workspaceId`.
 */
export type Principal = ApiKeyPrincipal | SessionPrincipal;

interface PrincipalBase {
  userId: string;
  /** Stable identity for idempotency binding: `key:<id>` or `user:<id>`. */
  principalId: string;
}

export interface ApiKeyPrincipal extends PrincipalBase {
  kind: 'api_key';
  apiKeyId: string;
  scope: ApiKeyScope;
  /** null only for organization keys, which are not anchored to a workspace. */
  workspaceId: string | null;
  /** The key owner's live role in that workspace (null for organization keys). */
  role: MembershipRole | null;
  organization: OrganizationGrant | null;
  allowedWorkflowIds: string[] | null;
}

export interface SessionPrincipal extends PrincipalBase {
  kind: 'session';
  sessionId: string;
  workspaceId: string;
  role: MembershipRole;
}

/** A principal already known to be anchored in one workspace. */
export type WorkspacePrincipal = (ApiKeyPrincipal & { workspaceId: string; role: MembershipRole }) | SessionPrincipal;

/**
 * Narrows a principal to one anchored in a workspace; null for organization keys, which are
 * not. Every route except the MCP endpoints needs an anchored principal.
 */
export function anchoredPrincipal(p: Principal): WorkspacePrincipal | null {
  if (p.kind === 'session') return p;
  return p.workspaceId !== null && p.role !== null ? (p as WorkspacePrincipal) : null;
}

export const isAdminRole = (role: MembershipRole | null): boolean => role === 'owner' || role === 'admin';

/**
 * Write (and secret-read) permission: a workspace-scoped key or a session of a member above
 * viewer. Personal and copilot keys, and viewers, never have it.
 */
export function canWrite(p: Principal): boolean {
  if (p.role === null || p.role === 'viewer') return false;
  return p.kind === 'session' || p.scope === 'workspace';
}

/**
 * Which projection a read returns: `full` for principals with write or secret-read
 * permission, `safe` (workspace-safe.v1) for personal, copilot and viewer principals.
 */
export function projectionFor(p: Principal): 'full' | 'safe' {
  return canWrite(p) ? 'full' : 'safe';
}
