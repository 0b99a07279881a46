/**
 * The connections user SQL runs on: a small `pg` pool of its own, apart from the ORM's, so a
 * tenant's queries can never hold the connections the API and the worker need, behind a
 * per-workspace fair queue (services/kernel/fairQueue.ts) so one workspace's slow queries cannot
 * take every slot either.
 *
 * Every connection of this pool also carries a guard on its socket: it reads the protocol's
 * message headers as they arrive and closes the socket once one announces more bytes than
 * the checkout allows. node-postgres buffers a whole message before it decodes it, and a
 * value or error text over 512 MiB throws inside its socket handler where nothing can catch
 * it (issue 26, F2); the guard ends the connection long before.
 */
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../kernel/errors';
import { FairLimiter, FairQueueFull } from '../kernel/fairQueue';

export interface UserSqlPoolSettings {
  /** Connections of the user-SQL pool (per process). */
  poolMax: number;
  /** Queries of one workspace running at once (per process). */
  perWorkspace: number;
  /** Queries of one workspace waiting at once; beyond, FairQueueFull. */
  queuePerWorkspace: number;
}

export const DEFAULT_USER_SQL_POOL: UserSqlPoolSettings = { poolMax: 4, perWorkspace: 2, queuePerWorkspace: 8 };

/** Why a checkout's connection was closed under it. */
export class ConnectionClosed extends Error {
  constructor(
    readonly reason: 'message_too_large' | 'deadline',
    message: string,
  ) {
    super(message);
    this.name = 'ConnectionClosed';
  }
}

/**
 * Follows the message framing of one connection's incoming bytes (type byte, then a 4-byte
 * length that counts itself) without keeping any of them.
 */
class MessageSizeGuard {
  limit = Number.POSITIVE_INFINITY;
  closed: ConnectionClosed | undefined;
  private readonly header = Buffer.alloc(5);
  private headerFill = 0;
  private remaining = 0;

  constructor(
    private readonly socket: NodeJS.ReadWriteStream & { destroy(err?: Error): void },
    private readonly stats: UserSqlCounters,
  ) {}

  readonly onData = (chunk: Buffer): void => {
    this.stats.bytesReceived += chunk.length;
    let i = 0;
    while (i < chunk.length && !this.closed) {
      if (this.remaining > 0) {
        const skip = Math.min(this.remaining, chunk.length - i);
        this.remaining -= skip;
        i += skip;
        continue;
      }
      const take = Math.min(5 - this.headerFill, chunk.length - i);
      chunk.copy(this.header, this.headerFill, i, i + take);
      this.headerFill += take;
      i += take;
      if (this.headerFill < 5) return;
      this.headerFill = 0;
      const length = this.header.readUInt32BE(1);
      this.remaining = length - 4;
      if (length > this.limit)
        this.close(
          new ConnectionClosed('message_too_large', `The database sent a ${length}-byte message, over the ${this.limit}-byte limit.`),
        );
    }
  };

  close(reason: ConnectionClosed): void {
    if (this.closed) return;
    this.closed = reason;
    this.socket.destroy(reason);
  }
}

/** Running totals of one user-SQL pool, for /metrics. */
export interface UserSqlCounters {
  /** Bytes the server sent on user-SQL connections. */
  bytesReceived: number;
  /** Queries refused because their workspace's queue was full. */
  rejected: number;
  /** Connections destroyed after a failure (never returned to the pool). */
  destroyed: number;
}

interface UserSqlPool {
  pool: pg.Pool;
  queue: FairLimiter;
  guards: WeakMap<pg.PoolClient, MessageSizeGuard>;
  counters: UserSqlCounters;
}

// One per ORM (keyed by its configuration, shared by every fork), so tests that open several
// apps in one process each get their own, with the ORM's own connection URL.
const pools = new WeakMap<object, UserSqlPool>();

function poolFor(em: EntityManager, settings: UserSqlPoolSettings): UserSqlPool {
  const key = em.config;
  const existing = pools.get(key);
  if (existing) return existing;
  const pool = new pg.Pool({
    connectionString: em.config.get('clientUrl'),
    max: settings.poolMax,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
    application_name: 'svc-user-sql',
  });
  const guards = new WeakMap<pg.PoolClient, MessageSizeGuard>();
  const counters: UserSqlCounters = { bytesReceived: 0, rejected: 0, destroyed: 0 };
  pool.on('connect', (client) => {
    // A socket error while no query is active would be an unhandled 'error' event; the active
    // query, if any, fails with it anyway and the checkout destroys the client.
    client.on('error', () => undefined);
    const socket = (client as unknown as { connection: { stream: MessageSizeGuard['socket'] & NodeJS.EventEmitter } }).connection.stream;
    const guard = new MessageSizeGuard(socket, counters);
    socket.prependListener('data', guard.onData);
    guards.set(client, guard);
  });
  // Idle clients that lose their server are removed by pg-pool; this only keeps the event handled.
  pool.on('error', () => undefined);
  const created: UserSqlPool = {
    pool,
    queue: new FairLimiter({ total: settings.poolMax, perKey: settings.perWorkspace, queuePerKey: settings.queuePerWorkspace }),
    guards,
    counters,
  };
  pools.set(key, created);
  return created;
}

/** Closes the user-SQL pool of this ORM, if one was opened (process or test app shutdown). */
export async function closeUserSql(em: EntityManager): Promise<void> {
  const entry = pools.get(em.config);
  if (!entry) return;
  pools.delete(em.config);
  await entry.pool.end().catch(() => undefined);
}

export interface UserSqlCheckout {
  client: pg.PoolClient;
  /** Closes the connection now (the running statement fails); the checkout then destroys it. */
  close(reason: ConnectionClosed): void;
}

/**
 * Runs `fn` on a connection of the user-SQL pool once the workspace's turn comes. Messages
 * over `maxMessageBytes` close the connection. A connection that failed in any way other than
 * a PostgreSQL error of the statement (the session is then rolled back and clean) is
 * destroyed, never returned to the pool. Throws FairQueueFull when the workspace's queue is full.
 */
export async function withUserSqlClient<T>(
  em: EntityManager,
  workspaceId: string,
  settings: UserSqlPoolSettings & { maxMessageBytes: number },
  fn: (checkout: UserSqlCheckout) => Promise<T>,
): Promise<T> {
  const { pool, queue, guards, counters } = poolFor(em, settings);
  const turn = queue.run(workspaceId, async () => {
    const client = await pool.connect();
    const guard = guards.get(client);
    if (guard) guard.limit = settings.maxMessageBytes;
    let broken: Error | undefined;
    try {
      return await fn({ client, close: (reason) => guard?.close(reason) });
    } catch (err) {
      // A refusal of ours (DomainError) or of the statement leaves the session clean; anything else may not.
      if (guard?.closed || !(isStatementError(err) || err instanceof DomainError))
        broken = err instanceof Error ? err : new Error(String(err));
      throw guard?.closed ?? err;
    } finally {
      const destroy = broken ?? guard?.closed;
      if (destroy) counters.destroyed++;
      client.release(destroy);
    }
  });
  return turn.catch((err: unknown) => {
    if (err instanceof FairQueueFull) counters.rejected++;
    throw err;
  });
}

/** The pool's counters and queue of this ORM (zeros before its first query). */
export function userSqlStats(em: EntityManager): UserSqlCounters & { running: number; waiting: number } {
  const entry = pools.get(em.config);
  if (!entry) return { bytesReceived: 0, rejected: 0, destroyed: 0, running: 0, waiting: 0 };
  return { ...entry.counters, ...entry.queue.stats() };
}

/** A PostgreSQL error about the statement, after which the connection is still usable. */
function isStatementError(err: unknown): boolean {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  // Class 08 (connection exception) and 57P (operator intervention: shutdown, terminated) end the session.
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57P');
}
