import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, type Credential } from '../../db/entities';
import type { Keyring } from '../kernel/secrets';
import type { WorkspacePrincipal } from '../kernel/principal';
import { checkCredential, immediateResult, type CredentialTestResult } from './checks';
import { loadCredential, openCredential } from './crud';
import { requireKeyring, sealCredentialValue, type CredentialKeySettings } from './keys';
import type { CredentialValue } from './types';

/** What connection tests need: the keys, the outbound guard's setting, the budget and the provider base URLs. */
export interface CredentialTestDeps {
  keys: CredentialKeySettings;
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  providerBaseUrls: Record<string, string>;
}

export const UNREADABLE_MESSAGE =
  'The stored value cannot be decrypted (it was changed, copied from another row, or encrypted with a key that is not configured); save a new value.';

/**
 * Stores a refreshed value (an OAuth2 token refresh) unless the row changed meanwhile: a
 * concurrent edit or refresh wins, and the caller still uses the token it just received.
 */
export async function storeRefreshedValue(em: EntityManager, ring: Keyring, row: Credential, value: CredentialValue): Promise<void> {
  const sealed = sealCredentialValue(ring, row.workspaceId, row.id, value);
  await em
    .fork()
    .nativeUpdate(
      CredentialSchema,
      { id: row.id, secretEncrypted: row.secretEncrypted },
      { secretEncrypted: sealed, updatedAt: new Date() },
    );
}

/** Tests a stored credential: decrypts it (an unreadable one is reported, not thrown) and runs its type's check. */
export async function testStoredCredential(em: EntityManager, deps: CredentialTestDeps, row: Credential): Promise<CredentialTestResult> {
  const ring = requireKeyring(deps.keys);
  let value: CredentialValue;
  try {
    value = openCredential(ring, row);
  } catch {
    return immediateResult('unreadable', UNREADABLE_MESSAGE);
  }
  return checkCredential(
    { id: row.id, type: row.type, value },
    {
      allowPrivateNetworks: deps.allowPrivateNetworks,
      timeoutMs: deps.timeoutMs,
      providerBaseUrls: deps.providerBaseUrls,
      persistRefreshed: (next) => storeRefreshedValue(em, ring, row, next),
    },
  );
}

/** `POST /credentials/{id}/test`: any valid key of the workspace; other workspaces' ids are 404. */
export async function testCredential(
  em: EntityManager,
  principal: WorkspacePrincipal,
  deps: CredentialTestDeps,
  id: string,
): Promise<CredentialTestResult> {
  const row = await loadCredential(em, principal.workspaceId, id);
  return testStoredCredential(em, deps, row);
}
