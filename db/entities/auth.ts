import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, HIDDEN, references, timestamptz } from './columns';
import { UserSchema, WorkspaceSchema } from './workspaces';
export type { ApiKeyScope } from '../../engine/statuses';

export interface OrganizationGrant {
  workspaceSelection: 'organization' | 'selected';
  workspaceIds: string[];
  permission: 'read' | 'write';
  /** The organization the key belongs to (absent only on keys stored before organizations existed). */
  organizationId?: string;
}

export const ApiKeySchema = entity('ApiKey', 'api_keys', {
  id: p.string().primary(),
  name: p.string(),
  /** name trimmed and lowercased: the uniqueness key inside one scope. */
  nameKey: p.string(),
  /** Kept as text, not an enum, so that an unknown stored scope can be seen and refused. */
  scope: p.string(),
  /** SHA-256 hex of the whole token; the token itself is never stored. */
  tokenHash: p.string().unique().hidden(HIDDEN),
  /** First characters of the token, safe to display so owners can tell keys apart. */
  tokenPrefix: p.string(),
  /** null only for organization keys, which are not anchored to one workspace. */
  workspaceId: references(WorkspaceSchema, 'workspace_id').nullable(),
  createdById: references(UserSchema, 'created_by_id'),
  organization: p.json<OrganizationGrant>().nullable(),
  allowedWorkflowIds: p.json<string[]>().nullable(),
  ...createdAt(),
  lastUsedAt: timestamptz('last_used_at').nullable(),
  revokedAt: timestamptz('revoked_at').nullable(),
});
export type ApiKey = InferEntity<typeof ApiKeySchema>;

export const SessionSchema = entity('Session', 'sessions', {
  id: p.string().primary(),
  tokenHash: p.string().unique().hidden(HIDDEN),
  userId: references(UserSchema, 'user_id'),
  workspaceId: references(WorkspaceSchema, 'workspace_id'),
  ...createdAt(),
  expiresAt: timestamptz('expires_at'),
  revokedAt: timestamptz('revoked_at').nullable(),
});
export type Session = InferEntity<typeof SessionSchema>;
