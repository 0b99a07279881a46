import type { EntityManager } from '@mikro-orm/postgresql';
import { ResumeTokenSchema } from '../../db/entities';
import { conflict, invalidInput, notFound } from '../kernel/errors';
import { newId, randomToken } from '../kernel/ids';
import type { RunLauncher } from '../kernel/ports';
import { insertResumeTokenOnce, markResumeTokenUsed } from './store';

const TOKEN_NOT_FOUND = 'Resume token not found';

/**
 * Issues the single-use token of an event wait (idempotent per run and node: a retried
 * activity returns the same token). The token is a capability: only full projections carry
 * it, and the API shows it as the wait's resumeUrl.
 */
export async function issueResumeToken(
  em: EntityManager,
  args: { runId: string; workspaceId: string; nodeId: string; expiresAt: string | null },
): Promise<{ token: string }> {
  const token = `rt_${randomToken(24)}`;
  await insertResumeTokenOnce(em, { id: newId('rtk'), token, ...args });
  const row = await em.fork().findOneOrFail(ResumeTokenSchema, { runId: args.runId, nodeId: args.nodeId });
  return { token: row.token };
}

/**
 * Resumes an event wait with `payload` as the node's output. Unknown tokens are not found
 * whatever the body, and a body that is not JSON is refused before the claim, so a bad body
 * never burns a valid token. Used or expired tokens, and runs that no longer wait, conflict.
 */
export async function resumeEventWait(
  em: EntityManager,
  launcher: RunLauncher,
  request: { token: string; bodyIsJson: boolean; payload: unknown },
): Promise<{ runId: string; nodeId: string; status: 'resumed' }> {
  if (!(await em.findOne(ResumeTokenSchema, { token: request.token }))) throw notFound(TOKEN_NOT_FOUND);
  if (!request.bodyIsJson) throw invalidInput('The resume body must be JSON (Content-Type: application/json).');
  const claimed = await claimResumeToken(em, request.token);
  const delivered = await launcher.resumeEvent(claimed.runId, {
    nodeId: claimed.nodeId,
    token: request.token,
    payload: request.payload ?? null,
  });
  if (!delivered) throw conflict('The run is no longer waiting for this event.');
  return { runId: claimed.runId, nodeId: claimed.nodeId, status: 'resumed' };
}

/**
 * Claims a single-use event resume token: the first caller wins atomically; a used or
 * expired token conflicts and an unknown one is not found. The claim is kept even if delivery
 * then fails, because a token is a one-time capability.
 */
async function claimResumeToken(em: EntityManager, token: string): Promise<{ runId: string; nodeId: string }> {
  const claimed = await markResumeTokenUsed(em, token);
  const [first] = claimed;
  if (first) return { runId: first.run_id, nodeId: first.node_id };
  const existing = await em.findOne(ResumeTokenSchema, { token });
  if (!existing) throw notFound(TOKEN_NOT_FOUND);
  if (existing.usedAt) throw conflict('This resume token has already been used.');
  throw conflict('This resume token has expired.');
}
