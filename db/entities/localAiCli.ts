import { EntitySchema } from '@mikro-orm/core';

export const LOCAL_AI_CLI_KINDS = ['cliA', 'cliB'] as const;
export type LocalAiCliKind = (typeof LOCAL_AI_CLI_KINDS)[number];

/** The last state a workspace's session with one local AI CLI was left in (set by prepare, verify, login, callback, token, disconnect). */
export type LocalAiCliSessionStatus = 'prepared' | 'not_prepared' | 'login_pending' | 'connected' | 'needs_login' | 'not_installed' | 'unavailable' | 'disconnected';

/**
 * A workspace's session with one local AI CLI. No secret lives here: a pasted token is a
 * credential (`credentialId`, encrypted by services/credentials), a login's result lives in the
 * CLI's own per-workspace configuration directory, and a pending login's state is kept only as
 * a SHA-256 hash.
 */
export interface LocalAiCliSession {
  id: string;
  workspaceId: string;
  kind: LocalAiCliKind;
  status: LocalAiCliSessionStatus;
  authMethod: 'token' | 'login' | null;
  credentialId: string | null;
  version: string | null;
  loginStateHash: string | null;
  loginExpiresAt: Date | null;
  lastVerifiedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const LocalAiCliSessionSchema = new EntitySchema<LocalAiCliSession>({
  name: 'LocalAiCliSession',
  tableName: 'local_ai_cli_sessions',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    kind: { type: 'string' },
    status: { type: 'string' },
    authMethod: { type: 'string', fieldName: 'auth_method', nullable: true },
    credentialId: { type: 'string', fieldName: 'credential_id', nullable: true },
    version: { type: 'string', nullable: true },
    loginStateHash: { type: 'string', fieldName: 'login_state_hash', nullable: true },
    loginExpiresAt: { type: 'Date', fieldName: 'login_expires_at', columnType: 'timestamptz', nullable: true },
    lastVerifiedAt: { type: 'Date', fieldName: 'last_verified_at', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
