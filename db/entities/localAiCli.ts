import { p, type InferEntity } from '@mikro-orm/core';
import { entity, timestamps, timestamptz, workspaceScoped } from './columns';
import type { LocalAiCliKind } from '../../engine/statuses';
export type { LocalAiCliKind } from '../../engine/statuses';

/** The last state a workspace's session with one local AI CLI was left in (set by prepare, verify, login, callback, token, disconnect). */
export type LocalAiCliSessionStatus =
  'prepared' | 'not_prepared' | 'login_pending' | 'connected' | 'needs_login' | 'not_installed' | 'unavailable' | 'disconnected';

export const LocalAiCliSessionSchema = entity('LocalAiCliSession', 'local_ai_cli_sessions', {
  ...workspaceScoped(),
  kind: p.string().$type<LocalAiCliKind>(),
  status: p.string().$type<LocalAiCliSessionStatus>(),
  authMethod: p.string().$type<'token' | 'login'>().nullable(),
  credentialId: p.string().nullable(),
  version: p.string().nullable(),
  loginStateHash: p.string().nullable(),
  loginExpiresAt: timestamptz('login_expires_at').nullable(),
  lastVerifiedAt: timestamptz('last_verified_at').nullable(),
  ...timestamps(),
});
/**
 * A workspace's session with one local AI CLI. No secret lives here: a pasted token is a
 * credential (`credentialId`, encrypted by services/credentials), a login's result lives in the
 * CLI's own per-workspace configuration directory, and a pending login's state is kept only as
 * a SHA-256 hash.
 */
export type LocalAiCliSession = InferEntity<typeof LocalAiCliSessionSchema>;
