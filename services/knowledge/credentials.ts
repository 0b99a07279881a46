/**
 * The one place connectors read credentials: a workspace credential of the credentials area,
 * decrypted at call time. Secrets are read inside activities (and by the queue-time setup
 * check) and never leave this module's callers.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema } from '../../db/entities';
import { credentialDestinations, credentialKeyring, openCredential, type CredentialKeySettings, type ProviderUrls } from '../credentials';

export interface ConnectorCredential {
  id: string;
  name: string;
  type: string;
  /**
   * The host patterns the credential may be sent to (services/credentials/destinations.ts): its
   * `allowedHosts`, the hosts its value names and, for a provider type, the deployment's base
   * URL of that provider. Every request of a sync is checked against them before it is sent.
   */
  destinations: string[];
  token: string;
  username?: string;
  /** The provider's API base URL, when the credential names one. */
  baseUrl?: string;
  /** OAuth scopes the credential was granted, when it records them. */
  scopes?: string[];
}

export type ConnectorCredentialResolution =
  { ok: true; credential: ConnectorCredential } | { ok: false; reason: 'not_found' | 'unreadable' };

export async function resolveConnectorCredential(
  em: EntityManager,
  workspaceId: string,
  credentialId: string,
  keys: CredentialKeySettings,
  providerUrls: ProviderUrls = {},
): Promise<ConnectorCredentialResolution> {
  const row = await em.findOne(CredentialSchema, { id: credentialId, workspaceId });
  if (!row) return { ok: false, reason: 'not_found' };
  // The credentials area's keyring: CREDENTIALS_KEY (or the SECRET_KEY-derived key) and every previous key.
  const ring = credentialKeyring(keys);
  let value: ReturnType<typeof openCredential>;
  try {
    if (!ring) throw new Error('no key');
    value = openCredential(ring, row);
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  const v = (typeof value === 'string' ? { token: value } : value) as Record<string, unknown>;
  const token = [v.token, v.accessToken, v.apiKey].find((t): t is string => typeof t === 'string' && t.length > 0);
  if (!token) return { ok: false, reason: 'unreadable' };
  const scopes = Array.isArray(v.scopes)
    ? v.scopes.map(String)
    : typeof v.scopes === 'string'
      ? v.scopes.split(/[\s,]+/).filter(Boolean)
      : undefined;
  return {
    ok: true,
    credential: {
      id: row.id,
      name: row.name,
      type: row.type,
      destinations: credentialDestinations(row, value, providerUrls),
      token,
      ...(typeof v.username === 'string' ? { username: v.username } : {}),
      ...(typeof v.baseUrl === 'string' ? { baseUrl: v.baseUrl } : {}),
      ...(scopes ? { scopes } : {}),
    },
  };
}
