import { createHash, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { unauthenticated, unavailable } from '../kernel/errors';
import { verifySession } from './sessions';
import { userEmail } from './store';

/**
 * Operators are the people who run the deployment (not a workspace role): they may read every
 * tenant's Temporal payloads through the codec endpoint. An operator proves it with the
 * deployment's OPERATOR_TOKEN (CLI: `temporal … --codec-auth "Bearer <token>"`) or with a
 * session of a user listed in OPERATOR_EMAILS (the Web UI, sending cookies cross-origin).
 */
export interface OperatorSettings {
  operatorToken: string | undefined;
  operatorEmails: readonly string[];
}

export interface OperatorCredentials {
  bearer?: string;
  sessionToken?: string;
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Resolves when the caller is an operator; throws `unavailable` when no operator access is configured, `unauthenticated` otherwise. */
export async function requireOperator(em: EntityManager, settings: OperatorSettings, creds: OperatorCredentials): Promise<void> {
  if (!settings.operatorToken && settings.operatorEmails.length === 0) {
    throw unavailable('Operator access is not configured: set OPERATOR_TOKEN or OPERATOR_EMAILS.');
  }
  if (creds.bearer && settings.operatorToken && timingSafeEqual(digest(creds.bearer), digest(settings.operatorToken))) return;
  if (creds.sessionToken && settings.operatorEmails.length > 0) {
    const session = await verifySession(em, creds.sessionToken);
    if (session) {
      const email = (await userEmail(em, session.userId))?.toLowerCase();
      if (email && settings.operatorEmails.includes(email)) return;
    }
  }
  throw unauthenticated('Operator credentials are required.');
}
