import type { GroupResponses } from './route';

/**
 * Error responses the envelope-family areas (files, knowledge connectors, research) share, in
 * the form `routeGroup` takes: a status and its text. The group answers them in
 * `envelopeErrorSchema`, so the texts lead with the envelope `code` a client branches on.
 */

/** A workspace-key area whose mutations need a role above viewer. */
export const envelopeAuthErrors = {
  401: '`authentication_required`',
  403: '`authorization_failed`: not a workspace key (or a viewer, for mutations)',
} satisfies GroupResponses;

/** The Idempotency-Key was used before with another request. */
export const REPLAY_MISMATCH = '`idempotency_replay_mismatch`: the key was used with another request';

/** 404 `resource_not_found`; `what` names what was looked for, when the code alone does not say. */
export function notFound(what?: string): GroupResponses {
  return { 404: what ? `\`resource_not_found\`: ${what}` : '`resource_not_found`' };
}

/** 409 of a route with a required Idempotency-Key: the area's `conflict` causes, or a reused key. */
export function conflictOrReplay(causes: string): GroupResponses {
  return { 409: `\`conflict\`: ${causes}; ${REPLAY_MISMATCH}` };
}
