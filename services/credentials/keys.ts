import type { CredentialSettings } from '../kernel/config';
import { unavailable } from '../kernel/errors';
import { deriveKey, makeKeyring, openWithKeyring, parseKeyMaterial, sealWithKeyring, type Keyring } from '../kernel/secrets';

/**
 * The credentials keyring. The current key is CREDENTIALS_KEY, or, where that is unset, a key
 * derived from SECRET_KEY with HKDF (purpose `credentials`). Every key of
 * CREDENTIALS_PREVIOUS_KEYS still decrypts, and so does the SECRET_KEY-derived key when an
 * explicit CREDENTIALS_KEY replaced it, so moving to an explicit key needs no extra setting.
 */
export interface CredentialKeySettings {
  key: string | undefined;
  previousKeys: string[];
  secretKey: string | undefined;
}

const cache = new Map<string, Keyring>();

/** The keyring of a configuration, or null when neither CREDENTIALS_KEY nor SECRET_KEY is set. */
export function credentialKeyring(settings: CredentialKeySettings): Keyring | null {
  const cacheKey = JSON.stringify([settings.key ?? null, settings.previousKeys, settings.secretKey ?? null]);
  const hit = cache.get(cacheKey);
  if (hit) return hit;
  const derived = settings.secretKey ? deriveKey(settings.secretKey, 'credentials') : null;
  const explicit = settings.key ? parseKeyMaterial(settings.key, 'CREDENTIALS_KEY') : null;
  const current = explicit ?? derived;
  if (!current) return null;
  const previous = settings.previousKeys.map((k) => parseKeyMaterial(k, 'Each key of CREDENTIALS_PREVIOUS_KEYS'));
  if (explicit && derived) previous.push(derived);
  const ring = makeKeyring(current, previous);
  cache.set(cacheKey, ring);
  return ring;
}

/** The key settings of the application configuration. */
export function keySettingsOf(config: { credentials: CredentialSettings; secretKey: string | undefined }): CredentialKeySettings {
  return { key: config.credentials.key, previousKeys: config.credentials.previousKeys, secretKey: config.secretKey };
}

/** The keyring, or `unavailable` when the deployment has no key for credentials. */
export function requireKeyring(settings: CredentialKeySettings): Keyring {
  const ring = credentialKeyring(settings);
  if (!ring) throw unavailable('Credentials are unavailable: neither CREDENTIALS_KEY nor SECRET_KEY is configured.');
  return ring;
}

/**
 * Associated data of a credential's ciphertext: a copy moved to another workspace or id does
 * not decrypt. Length-prefixed, so no two (workspace, id) pairs share an encoding.
 */
function associatedData(workspaceId: string, credentialId: string): string {
  return `svc:credential:${workspaceId.length}:${workspaceId}:${credentialId.length}:${credentialId}`;
}

export function sealCredentialValue(ring: Keyring, workspaceId: string, credentialId: string, value: Record<string, unknown>): string {
  return sealWithKeyring(ring, JSON.stringify(value), associatedData(workspaceId, credentialId));
}

/** Decrypts a credential's value; throws `SealedValueError` when it cannot (tampered, moved, unknown key). */
export function openCredentialValue(ring: Keyring, workspaceId: string, credentialId: string, sealed: string): Record<string, unknown> {
  return JSON.parse(openWithKeyring(ring, sealed, associatedData(workspaceId, credentialId))) as Record<string, unknown>;
}
