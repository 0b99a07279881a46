import { z } from 'zod';
import { unavailable } from '../errors';
import { defineArea, SECRET } from './define';

/** SECRET_KEY: the deployment's root secret, which webhook tokens and the other areas' keys derive from. */
export const secretsArea = defineArea('secrets', 'Secret key', {
  SECRET_KEY: z
    .string()
    .min(32, 'SECRET_KEY must be at least 32 characters')
    .optional()
    .meta(SECRET)
    .describe(
      '32+ characters; derives webhook URLs and encrypts stored secrets (rotating it changes every webhook URL). Unset: generated into `.data/secretKey` by `npm start`; required otherwise.',
    ),
});

export type SecretsEnv = z.output<typeof secretsArea.schema>;

export interface SecretsConfig {
  /** Derives webhook tokens and encrypts stored secrets; required by the api process. */
  secretKey: string | undefined;
}

export function secretsConfig(e: SecretsEnv): SecretsConfig {
  return { secretKey: e.SECRET_KEY };
}

/**
 * SECRET_KEY, which webhook tokens and stored secrets derive from. The api process may start
 * without it (deploys without webhook triggers work), so the features that need it refuse
 * with `unavailable` when it is missing.
 */
export function requireSecretKey(secretKey: string | undefined): string {
  if (!secretKey) throw unavailable('Webhooks are unavailable: SECRET_KEY is not configured.');
  return secretKey;
}
