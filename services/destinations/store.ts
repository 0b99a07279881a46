/**
 * Raw SQL of the destinations area: the only file of the area that talks SQL. Tenant text goes
 * through `wellFormedParams` before it reaches PostgreSQL.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { wellFormedParams } from '../kernel/storableText';

/** Raw SQL in the unit of work of `em` (inside a transaction when `em` is one). */
export async function exec<T = Array<Record<string, unknown>>>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T> {
  return em.execute(sql, wellFormedParams(params), 'all') as Promise<T>;
}
