import type { EntityManager } from '@mikro-orm/postgresql';
import { ResumeTokenSchema } from '../db/entities';
import { conflict, notFound } from './errors';

const TOKEN_NOT_FOUND = 'Resume token not found';

/** 404 unless the token was ever issued (used or not). */
export async function assertResumeTokenExists(em: EntityManager, token: string): Promise<void> {
  if (!(await em.findOne(ResumeTokenSchema, { token }))) throw notFound(TOKEN_NOT_FOUND);
}

/**
 * Claims a single-use event resume token: the first caller wins atomically; a used or
 * expired token is a 409 and an unknown one a 404. The claim is kept even if delivery then
 * fails, because a token is a one-time capability.
 */
export async function claimResumeToken(em: EntityManager, token: string): Promise<{ runId: string; nodeId: string }> {
  const claimed: Array<{ run_id: string; node_id: string }> = await em.getConnection().execute(
    `update resume_tokens set used_at = now()
      where token = ? and used_at is null and (expires_at is null or expires_at > now())
      returning run_id, node_id`,
    [token],
  );
  if (claimed.length > 0) return { runId: claimed[0].run_id, nodeId: claimed[0].node_id };
  const existing = await em.findOne(ResumeTokenSchema, { token });
  if (!existing) throw notFound(TOKEN_NOT_FOUND);
  if (existing.usedAt) throw conflict('This resume token has already been used.');
  throw conflict('This resume token has expired.');
}
