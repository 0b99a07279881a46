/**
 * Raw PostgreSQL access of the databases area. User tables are created, altered and queried
 * with dynamic DDL and SQL that no ORM mapping describes, so this area borrows a connection of
 * the ORM's pool (`withClient`, store.ts) and drives it itself: catalogue rows and the DDL or
 * rows they describe are written in one transaction on that connection, so a refused or
 * failed request leaves nothing half-written.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { wellFormedParams } from '../kernel/storableText';
import type { ClientBase, QueryResultRow } from 'pg';
import { invalidInput } from '../kernel/errors';
import { withClient } from './store';

export type PgClient = ClientBase;

/** Runs `fn` in a transaction on its own connection: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(em: EntityManager, fn: (client: PgClient) => Promise<T>, begin = 'begin'): Promise<T> {
  return withClient(em, async (client) => {
    await client.query(begin);
    try {
      const result = await fn(client);
      await client.query('commit');
      return result;
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    }
  });
}

export async function queryRows<R extends QueryResultRow>(client: PgClient, text: string, values: unknown[] = []): Promise<R[]> {
  return (await client.query<R>(text, wellFormedParams(values))).rows;
}

/** A PostgreSQL error as node-postgres reports it. */
export interface PgError extends Error {
  code?: string;
  column?: string;
}

export function isPgError(err: unknown): err is PgError {
  return err instanceof Error && typeof (err as PgError).code === 'string' && /^[0-9A-Z]{5}$/.test((err as PgError).code!);
}

/**
 * PostgreSQL refusals a user's value can cause (out-of-range numbers or dates, text it cannot
 * store) become a 400 naming the column when PostgreSQL names one; anything else is rethrown.
 */
export function asValueError(err: unknown): never {
  if (isPgError(err) && ['22', '23'].includes(err.code!.slice(0, 2))) {
    throw invalidInput(`A value was refused by the database: ${err.message}`, { details: err.column ? { column: err.column } : undefined });
  }
  throw err;
}
