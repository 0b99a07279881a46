import { EntitySchema } from '@mikro-orm/core';

/** The five scopes of the spec. A stored value outside this list fails authentication. */
export const API_KEY_SCOPES = ['workspace', 'personal', 'copilot', 'organization', 'end_user_gateway'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export interface OrganizationGrant {
  workspaceSelection: 'organization' | 'selected';
  workspaceIds: string[];
  permission: 'read' | 'write';
  /** The organization the key belongs to (absent only on keys stored before organizations existed). */
  organizationId?: string;
}

export interface ApiKey {
  id: string;
  name: string;
  /** name trimmed and lowercased: the uniqueness key inside one scope. */
  nameKey: string;
  /** Kept as text, not an enum, so that an unknown stored scope can be seen and refused. */
  scope: string;
  /** SHA-256 hex of the whole token; the token itself is never stored. */
  tokenHash: string;
  /** First characters of the token, safe to display so owners can tell keys apart. */
  tokenPrefix: string;
  /** null only for organization keys, which are not anchored to one workspace. */
  workspaceId: string | null;
  createdById: string;
  organization: OrganizationGrant | null;
  allowedWorkflowIds: string[] | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface Session {
  id: string;
  tokenHash: string;
  userId: string;
  workspaceId: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

export const ApiKeySchema = new EntitySchema<ApiKey>({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    nameKey: { type: 'string', fieldName: 'name_key' },
    scope: { type: 'string' },
    tokenHash: { type: 'string', fieldName: 'token_hash', unique: true, hidden: true },
    tokenPrefix: { type: 'string', fieldName: 'token_prefix' },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true, nullable: true },
    createdById: { kind: 'm:1', entity: 'User', fieldName: 'created_by_id', mapToPk: true },
    organization: { type: 'json', nullable: true },
    allowedWorkflowIds: { type: 'json', fieldName: 'allowed_workflow_ids', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    lastUsedAt: { type: 'Date', fieldName: 'last_used_at', columnType: 'timestamptz', nullable: true },
    revokedAt: { type: 'Date', fieldName: 'revoked_at', columnType: 'timestamptz', nullable: true },
  },
});

export const SessionSchema = new EntitySchema<Session>({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    id: { type: 'string', primary: true },
    tokenHash: { type: 'string', fieldName: 'token_hash', unique: true, hidden: true },
    userId: { kind: 'm:1', entity: 'User', fieldName: 'user_id', mapToPk: true },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    expiresAt: { type: 'Date', fieldName: 'expires_at', columnType: 'timestamptz' },
    revokedAt: { type: 'Date', fieldName: 'revoked_at', columnType: 'timestamptz', nullable: true },
  },
});
