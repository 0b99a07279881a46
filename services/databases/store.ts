/**
 * The ORM's side of the databases area: a connection borrowed from the ORM's pool, which the
 * area drives itself with node-postgres (dynamic DDL and user SQL no ORM mapping describes;
 * see storage.ts and docs/api/databases.md).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ClientBase } from 'pg';

/**
 * Runs `fn` on a connection of the ORM's pool, given back afterwards (also when `fn` throws).
 * The connection is outside every transaction of `em`: a transaction `fn` needs, it opens itself.
 */
export async function withClient<T>(em: EntityManager, fn: (client: ClientBase) => Promise<T>): Promise<T> {
  const knexClient = em.getKnex().client as { acquireConnection(): Promise<ClientBase>; releaseConnection(c: ClientBase): Promise<void> };
  const client = await knexClient.acquireConnection();
  try {
    return await fn(client);
  } finally {
    await knexClient.releaseConnection(client);
  }
}
