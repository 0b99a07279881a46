import { z } from 'zod';
import type { SignInLimitSettings } from '../signInLimits';
import { defineArea, envBool, invalidConfiguration } from './define';

/** Accounts, sessions and sign-in limits (services/accounts/auth.ts, services/kernel/signInLimits.ts, services/runs/endUsers.ts). */
export const authArea = defineArea('auth', 'Accounts and sign-in', {
  SIGN_IN_MAX_PER_ADDRESS: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(10)
    .describe(
      'Sign-in attempts checked for one email from one client address per window; the next is refused 429 with `Retry-After` and locks that address out of that email (docs/decisions.md, "Sign-in limits").',
    ),
  SIGN_IN_MAX_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(2)
    .max(100_000)
    .default(50)
    .describe('The same for one email from all addresses together; must be above `SIGN_IN_MAX_PER_ADDRESS`.'),
  SIGN_IN_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900).describe('The counting window, from its first attempt.'),
  SIGN_IN_FIRST_LOCK_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(300)
    .describe('The first lock; each further lock of the same counter lasts twice as long, up to `SIGN_IN_MAX_LOCK_SECONDS`.'),
  SIGN_IN_MAX_LOCK_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(3600)
    .describe('The longest lock (at least `SIGN_IN_FIRST_LOCK_SECONDS`).'),
  SIGN_IN_LOCK_MEMORY_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .default(86_400)
    .describe('A counter forgets its past locks this long after the last one ended.'),
  SIGN_IN_REMEMBER_ADDRESS_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .max(365)
    .default(30)
    .describe(
      'An address an account signed in from is remembered this long after its last success; from it only the per-address limit applies (0: never remembered).',
    ),
  SESSION_TTL_HOURS: z.coerce
    .number()
    .positive()
    .default(24 * 7)
    .describe('Session cookie lifetime.'),
  AUTH_CACHE_TTL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(60_000)
    .default(5_000)
    .describe(
      'How long an API process reuses a verified API key or session (0: never). Changes reach every process at once through PostgreSQL notifications; this bounds a change whose notification was lost (docs/api/auth.md).',
    ),
  BOOTSTRAP_OWNER_EMAIL: z.string().email().default('owner@example.com').describe('Email of the owner created on the first run.'),
  END_USERS_ENABLED: envBool(false).describe('Allow `end_user_gateway` keys.'),
});

export type AuthEnv = z.output<typeof authArea.schema>;

export interface AuthConfig {
  /** SIGN_IN_*: attempts checked against a password, and lock lengths (services/kernel/signInLimits.ts). */
  signInLimits: SignInLimitSettings;
  sessionTtlMs: number;
  /** AUTH_CACHE_TTL_MS (services/accounts/credentialCache.ts). */
  authCacheTtlMs: number;
  bootstrapOwnerEmail: string;
  endUsersEnabled: boolean;
}

export function authConfig(e: AuthEnv): AuthConfig {
  if (e.SIGN_IN_MAX_PER_ACCOUNT <= e.SIGN_IN_MAX_PER_ADDRESS) {
    throw invalidConfiguration(
      'SIGN_IN_MAX_PER_ACCOUNT must be above SIGN_IN_MAX_PER_ADDRESS (or one address could lock the account out everywhere).',
    );
  }
  if (e.SIGN_IN_MAX_LOCK_SECONDS < e.SIGN_IN_FIRST_LOCK_SECONDS) {
    throw invalidConfiguration('SIGN_IN_MAX_LOCK_SECONDS must be at least SIGN_IN_FIRST_LOCK_SECONDS.');
  }
  return {
    signInLimits: {
      maxPerAddress: e.SIGN_IN_MAX_PER_ADDRESS,
      maxPerAccount: e.SIGN_IN_MAX_PER_ACCOUNT,
      windowMs: e.SIGN_IN_WINDOW_SECONDS * 1000,
      firstLockMs: e.SIGN_IN_FIRST_LOCK_SECONDS * 1000,
      maxLockMs: e.SIGN_IN_MAX_LOCK_SECONDS * 1000,
      lockMemoryMs: e.SIGN_IN_LOCK_MEMORY_SECONDS * 1000,
      rememberAddressMs: e.SIGN_IN_REMEMBER_ADDRESS_DAYS * 86_400_000,
    },
    sessionTtlMs: e.SESSION_TTL_HOURS * 3600_000,
    authCacheTtlMs: e.AUTH_CACHE_TTL_MS,
    bootstrapOwnerEmail: e.BOOTSTRAP_OWNER_EMAIL,
    endUsersEnabled: e.END_USERS_ENABLED,
  };
}
