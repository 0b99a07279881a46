import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, type Credential } from '../../db/entities';
import { ReasonedError } from '../kernel/errors';
import type { HttpRequestInput, HttpResponseOutput } from '../kernel/outbound';
import { boundHostsText, credentialDestinations, hostAllowed, shownHost, type ProviderUrls } from './destinations';
import { credentialKeyring, type CredentialKeySettings } from './keys';
import { openCredential, resolveCredentialReference } from './crud';
import { sendWithCredential } from './http';
import { redactDeep, redactSecrets } from './mask';
import { storeRefreshedValue } from './testing';
import { HTTP_CREDENTIAL_TYPES, secretStrings, type CredentialValue } from './types';

/**
 * Using a credential from a workflow run: activities pass the reference (id or name) and the
 * run's workspace; the value is decrypted here, at call time, used, and never returned. What
 * the call produces is redacted of the secret before it leaves (into a Temporal history, the
 * run's steps, a log line).
 */
export type CredentialUseFailure = 'missing' | 'unreadable' | 'unsupported' | 'unconfigured' | 'destination';

export class CredentialUseError extends ReasonedError<CredentialUseFailure> {}

/**
 * Refuses to send credential `row` to `url` unless its host is one the credential is bound to
 * (destinations.ts). Called before any connection is opened; the message names the host and
 * the credential, never the secret.
 */
export function assertCredentialDestination(
  row: Pick<Credential, 'name' | 'type' | 'allowedHosts'>,
  value: CredentialValue | null,
  url: string,
  providerUrls?: ProviderUrls,
): void {
  const name = row.name.slice(0, 200);
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new CredentialUseError(
      'destination',
      `Credential "${name}" is not sent to "${url.slice(0, 200)}": it is not an absolute http(s) URL.`,
    );
  }
  const allowed = credentialDestinations(row, value, providerUrls);
  if (hostAllowed(allowed, target)) return;
  const host = shownHost(url);
  throw new CredentialUseError(
    'destination',
    `Credential "${name}" may not be sent to ${host}: ${boundHostsText(allowed)}. ` +
      (allowed.length === 0
        ? 'Save it again with its secret and allowedHosts naming the hosts it is for.'
        : 'Add the host to its allowedHosts (with its secret) or use another credential.'),
  );
}

export interface CredentialUseDeps {
  keys: CredentialKeySettings;
  allowPrivateNetworks: boolean;
}

/**
 * Sends an http node's request with the credential `reference` names in `workspaceId`
 * (api_key, bearer, basic, oauth2 with one refresh on 401, http_header). Returns the response
 * with every occurrence of the secret replaced by `[redacted]`. Throws `CredentialUseError`
 * when the credential cannot be used or is not bound to the URL's host (before connecting), and
 * the outbound errors of `httpRequest`.
 */
export async function sendHttpWithStoredCredential(
  em: EntityManager,
  deps: CredentialUseDeps,
  workspaceId: string,
  reference: string,
  req: HttpRequestInput,
  signal?: AbortSignal,
): Promise<HttpResponseOutput> {
  const ring = credentialKeyring(deps.keys);
  if (!ring)
    throw new CredentialUseError(
      'unconfigured',
      'Credentials are unavailable on this worker: neither CREDENTIALS_KEY nor SECRET_KEY is configured.',
    );
  const row = await resolveCredentialReference(em, workspaceId, reference);
  const shownRef = reference.slice(0, 200);
  if (!row) throw new CredentialUseError('missing', `Credential "${shownRef}" was not found in this workspace.`);
  if (!HTTP_CREDENTIAL_TYPES.includes(row.type)) {
    throw new CredentialUseError(
      'unsupported',
      `Credential "${shownRef}" is a ${row.type} credential; http nodes take ${HTTP_CREDENTIAL_TYPES.join(', ')}.`,
    );
  }
  let value: CredentialValue;
  try {
    value = openCredential(ring, row);
  } catch {
    throw new CredentialUseError(
      'unreadable',
      `Credential "${shownRef}" cannot be decrypted (changed, copied from another row, or its key is not configured).`,
    );
  }
  // Before any connection: a redirect to another origin drops the credential (http.ts), so the first URL is the one to check.
  assertCredentialDestination(row, value, req.url);
  const cred = { id: row.id, type: row.type, value };
  const secrets = () => [...new Set([...secretStrings(value), ...secretStrings(cred.value)])];
  try {
    const response = await sendWithCredential(req, cred, {
      allowPrivateNetworks: deps.allowPrivateNetworks,
      signal,
      persistRefreshed: (next) => storeRefreshedValue(em, ring, row, next),
    });
    const { refreshed: _refreshed, ...output } = response;
    return redactDeep(output, secrets());
  } catch (err) {
    // Outbound errors name URLs and causes, not headers; redact anyway, so no future message can carry a secret.
    if (err instanceof Error) err.message = redactSecrets(err.message, secrets());
    throw err;
  }
}

/**
 * The secret an error-tracker endpoint bound to credential `credentialId` verifies deliveries
 * with: the `signingSecret` of an `errtracker` credential of the workspace. Throws
 * `CredentialUseError` when there is no such credential, it cannot be decrypted or has no
 * signing secret.
 */
export async function errtrackerSigningSecret(
  em: EntityManager,
  keys: CredentialKeySettings,
  workspaceId: string,
  credentialId: string,
): Promise<string> {
  const ring = credentialKeyring(keys);
  if (!ring)
    throw new CredentialUseError('unconfigured', 'Credentials are unavailable: neither CREDENTIALS_KEY nor SECRET_KEY is configured.');
  const row = await em.findOne(CredentialSchema, { id: credentialId, workspaceId });
  if (!row) throw new CredentialUseError('missing', 'Credential not found in this workspace.');
  if (row.type !== 'errtracker')
    throw new CredentialUseError(
      'unsupported',
      `Credential ${credentialId} is a ${row.type} credential; error-tracker endpoints take an errtracker credential.`,
    );
  let value: CredentialValue;
  try {
    value = openCredential(ring, row);
  } catch {
    throw new CredentialUseError('unreadable', `Credential ${credentialId} cannot be decrypted.`);
  }
  const secret = (value as { signingSecret?: unknown }).signingSecret;
  if (typeof secret !== 'string' || secret === '')
    throw new CredentialUseError('unsupported', `Credential ${credentialId} has no signingSecret (the integration's client secret).`);
  return secret;
}
