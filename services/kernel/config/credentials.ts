import { z } from 'zod';
import { parseKeyMaterial } from '../secrets';
import { defineArea, invalidConfiguration, list, SECRET } from './define';

/** Workspace credentials: encryption keys, the environment allowlist, connection tests (services/credentials). */
export const credentialsArea = defineArea('credentials', 'Credentials', {
  CREDENTIALS_KEY: z
    .string()
    .optional()
    .meta(SECRET)
    .describe(
      '32-byte key (64 hex characters or base64, e.g. `openssl rand -base64 32`) that encrypts workspace credentials. Unset: derived from `SECRET_KEY` (HKDF, purpose `credentials`).',
    ),
  CREDENTIALS_PREVIOUS_KEYS: z
    .string()
    .optional()
    .meta(SECRET)
    .describe('Comma-separated older keys that still decrypt credentials, for a rotation (docs/operations.md, "Operators").'),
  CREDENTIAL_ENV_ALLOWLIST: z
    .string()
    .optional()
    .describe(
      'Deployment variables credentials may be created from (`envVar`, bootstrap-from-env): `NAME` or `NAME:type`, comma-separated. Unset: none.',
    ),
  CREDENTIAL_TEST_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(120_000)
    .default(10_000)
    .describe('Budget of one credential connection test.'),
  CREDENTIAL_PROVIDER_BASE_URLS: z
    .string()
    .optional()
    .describe(
      '`provider=url` pairs (`repo=https://…,chat=https://…/api`): where provider credentials are tested when the credential has no `baseUrl`.',
    ),
});

export type CredentialsEnv = z.output<typeof credentialsArea.schema>;

/** Configuration of the credentials area; keys are checked here, parsed by services/credentials/keys.ts. */
export interface CredentialSettings {
  /** CREDENTIALS_KEY: the key that encrypts; unset means one derived from SECRET_KEY (HKDF, purpose `credentials`). */
  key: string | undefined;
  /** CREDENTIALS_PREVIOUS_KEYS: older keys that still decrypt (comma-separated), for rotation. */
  previousKeys: string[];
  /** CREDENTIAL_ENV_ALLOWLIST: deployment variables credentials may be created from, each with an optional type (`NAME` or `NAME:type`). */
  envAllowlist: Array<{ name: string; type: string | null }>;
  /** CREDENTIAL_TEST_TIMEOUT_MS: budget of one connection test. */
  testTimeoutMs: number;
  /** CREDENTIAL_PROVIDER_BASE_URLS: `provider=url` pairs, where provider credentials are tested. */
  providerBaseUrls: Record<string, string>;
}

export interface CredentialsConfig {
  /** Credentials: encryption keys, the environment allowlist, connection tests (services/credentials). */
  credentials: CredentialSettings;
}

export function credentialsConfig(e: CredentialsEnv): CredentialsConfig {
  const key = e.CREDENTIALS_KEY?.trim() || undefined;
  const previousKeys = list(e.CREDENTIALS_PREVIOUS_KEYS);
  for (const [i, k] of [key, ...previousKeys].entries()) {
    try {
      if (k !== undefined) parseKeyMaterial(k, i === 0 ? 'CREDENTIALS_KEY' : 'Each key of CREDENTIALS_PREVIOUS_KEYS');
    } catch (err) {
      throw invalidConfiguration((err as Error).message);
    }
  }
  const envAllowlist = list(e.CREDENTIAL_ENV_ALLOWLIST).map((entry) => {
    const [name = '', type] = entry.split(':').map((p) => p.trim());
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw invalidConfiguration(`CREDENTIAL_ENV_ALLOWLIST: "${name}" is not a variable name`);
    return { name, type: type || null };
  });
  const providerBaseUrls: Record<string, string> = {};
  for (const entry of list(e.CREDENTIAL_PROVIDER_BASE_URLS)) {
    const at = entry.indexOf('=');
    const url = entry.slice(at + 1).trim();
    if (at <= 0 || !/^https?:\/\/\S+$/.test(url))
      throw invalidConfiguration('CREDENTIAL_PROVIDER_BASE_URLS: expected provider=https://… pairs separated by commas');
    providerBaseUrls[entry.slice(0, at).trim()] = url;
  }
  return { credentials: { key, previousKeys, envAllowlist, testTimeoutMs: e.CREDENTIAL_TEST_TIMEOUT_MS, providerBaseUrls } };
}
