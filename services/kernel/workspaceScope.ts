import type { EntityName, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from './errors';
import { newId } from './ids';

/**
 * The row `id` of workspace `workspaceId`, or a `not_found` error with `message`.
 *
 * The one rule every id route follows: another workspace's id answers exactly as a missing id
 * does, so a caller cannot learn which ids exist elsewhere. The workspace is part of the query
 * (not checked after loading), so a foreign row never enters the caller's identity map.
 */
export async function findInWorkspace<T extends { id: string; workspaceId: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  workspaceId: string,
  id: string,
  message: string,
): Promise<T> {
  const row = await em.findOne(entity, { id, workspaceId } as FilterQuery<T>);
  if (!row) throw notFound(message);
  return row;
}

/**
 * The columns a new row of a workspace starts with (the service side of the entities'
 * `workspaceScoped()` and `timestamps()`): an id with the area's prefix, the workspace, and
 * created and last changed `now`. Spread first into `em.create`, the row's own fields follow.
 */
export function newWorkspaceRow(prefix: string, workspaceId: string, now = new Date()) {
  return { id: newId(prefix), workspaceId, createdAt: now, updatedAt: now };
}
