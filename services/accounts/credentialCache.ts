import type { EventManager, EventSubscriber, FlushEventArgs } from '@mikro-orm/core';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Principal } from '../kernel/principal';

/** The channel the triggers of migration 20261128130000 notify on commit of any change a principal is read from. */
export const AUTH_CHANGED_CHANNEL = 'svc_auth_changed';

/** Entities whose flushed changes clear this process's cache at once (the triggers tell the other processes). */
const WATCHED_ENTITIES = new Set(['ApiKey', 'Membership', 'User', 'Session']);

/** More distinct credentials than this within a TTL clears the cache rather than growing it. */
const MAX_ENTRIES = 10_000;
/** A transaction that flushed a watched change commits within this long (else its commit clears nothing extra). */
const COMMIT_WINDOW_MS = 60_000;
/** `application_name` of the listening connection (pg_stat_activity shows one per API process). */
export const LISTENER_NAME = 'svc-credential-cache';
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

export interface CredentialCacheSettings {
  /** How long a verified credential is reused at most (0: never cached). The bound when a notification is lost. */
  ttlMs: number;
  /** The database whose `svc_auth_changed` notifications this process listens to; none: nothing is cached. */
  databaseUrl?: string;
  logger?: Pick<Logger, 'warn'>;
}

interface Entry {
  principal: Principal;
  expiresAt: number;
}

/**
 * Verified credentials (API key or session token hash → principal) of one API process, so an
 * authenticated request costs no query. Only positive answers are kept: an unknown, revoked or
 * refused credential is read again every time.
 *
 * Invalidation, whole-cache (changes are rare next to requests):
 * - **this process**: a flush of a watched entity clears it before the flush returns and again
 *   when its transaction commits, and `invalidate()` is called by writes that bypass the unit of
 *   work (sign-out); so the request that revokes answers only after its own process forgot.
 * - **other processes**: triggers notify `svc_auth_changed` on commit of any change to keys,
 *   memberships, users' status or sessions, whoever made it (routes, another process, SQL by
 *   hand); every process LISTENs on its own connection and clears on each notification.
 * - **fallback**: while that connection is not listening (not yet connected, lost, reconnecting)
 *   nothing is served from the cache, and an entry is never older than `ttlMs`: a notification
 *   lost on a silently dead connection is bounded by the TTL.
 * A lookup that started before a clear does not store its result, so a read of the old state
 * cannot outlive the change that cleared it.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private lastWatchedFlushAt = -Infinity;
  private listener: pg.Client | null = null;
  /** The client being connected or listening; a loss of any other (already replaced) is ignored. */
  private current: pg.Client | null = null;
  private listening = false;
  private closed = false;
  private reconnectMs = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private connecting: Promise<void> | null = null;

  constructor(private readonly settings: CredentialCacheSettings) {}

  /** Whether answers may be served from memory now: caching is on and the listener is up. */
  get active(): boolean {
    return this.settings.ttlMs > 0 && this.listening && !this.closed;
  }

  /**
   * The cached principal for `key`, else `load()`'s. A non-null result is kept until the first
   * of: `ttlMs`, `validUntil` (epoch ms, e.g. a session's expiry), or an invalidation.
   */
  async resolve<P extends Principal>(key: string, load: () => Promise<{ principal: P; validUntil?: number } | null>): Promise<P | null> {
    const now = Date.now();
    if (this.active) {
      const hit = this.entries.get(key);
      if (hit && hit.expiresAt > now) return hit.principal as P;
      if (hit) this.entries.delete(key);
    } else {
      this.ensureListening();
    }
    const generation = this.generation;
    const loaded = await load();
    if (!loaded) return null;
    if (this.active && generation === this.generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      const expiresAt = Math.min(now + this.settings.ttlMs, loaded.validUntil ?? Infinity);
      if (expiresAt > now) this.entries.set(key, { principal: loaded.principal, expiresAt });
    }
    return loaded.principal;
  }

  /** Forgets every credential, and makes lookups in flight not store what they read. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Clears the cache whenever `events` sees a watched entity flushed, and again when that transaction commits. */
  watch(events: EventManager): void {
    const touched = (args: FlushEventArgs) => args.uow.getChangeSets().some((cs) => WATCHED_ENTITIES.has(cs.meta.className));
    const subscriber: EventSubscriber = {
      onFlush: (args) => {
        if (!touched(args)) return;
        this.lastWatchedFlushAt = Date.now();
        this.invalidate();
      },
      afterFlush: (args) => {
        if (touched(args)) this.invalidate();
      },
      afterTransactionCommit: () => {
        if (Date.now() - this.lastWatchedFlushAt < COMMIT_WINDOW_MS) this.invalidate();
      },
    };
    events.registerSubscriber(subscriber);
  }

  /**
   * Resolves once this process has seen every change committed before the call: it notifies
   * the channel itself and waits for its own notification to come back (PostgreSQL delivers a
   * listener's notifications in commit order). False when not listening or after `timeoutMs`.
   * For tests and for callers that changed credentials through SQL of their own.
   */
  async sync(timeoutMs = 10_000): Promise<boolean> {
    if (!this.listener || !this.listening || !this.settings.databaseUrl) return false;
    const marker = `sync:${process.pid}:${Math.random().toString(36).slice(2)}`;
    const listener = this.listener;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), timeoutMs);
      const onNotification = (msg: pg.Notification) => {
        if (msg.payload === marker) done(true);
      };
      const done = (ok: boolean) => {
        clearTimeout(timer);
        listener.off('notification', onNotification);
        resolve(ok);
      };
      listener.on('notification', onNotification);
      listener.query('select pg_notify($1, $2)', [AUTH_CHANGED_CHANNEL, marker]).catch(() => done(false));
    });
  }

  /** Connects the listener unless it is up or on its way (first use, or after a loss). */
  ensureListening(): void {
    if (this.closed || this.listening || this.connecting || this.reconnectTimer || !this.settings.databaseUrl || this.settings.ttlMs <= 0)
      return;
    this.connecting = this.connect().finally(() => (this.connecting = null));
  }

  /** Waits until the listener is up (or failed once); for startup and tests. */
  async ready(): Promise<boolean> {
    this.ensureListening();
    await this.connecting;
    return this.listening;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.settings.databaseUrl, keepAlive: true, application_name: LISTENER_NAME });
    this.current = client;
    // Every notification on the channel is a change (or a sync marker): either way, forget.
    client.on('notification', () => this.invalidate());
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`listen ${AUTH_CHANGED_CHANNEL}`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    // Changes committed before LISTEN took effect were never announced to us.
    this.invalidate();
    this.listening = true;
    this.reconnectMs = RECONNECT_MIN_MS;
  }

  private lost(client: pg.Client, err?: unknown): void {
    if (this.current !== client) return;
    this.current = null;
    const wasListening = this.listening;
    this.listening = false;
    this.listener = null;
    this.invalidate();
    client.end().catch(() => undefined);
    if (this.closed) return;
    if (wasListening)
      this.settings.logger?.warn({ err }, 'credential cache: lost its notification connection; not caching until it is back');
    const delay = this.reconnectMs;
    this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MAX_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.ensureListening();
    }, delay);
    this.reconnectTimer.unref();
  }

  /** Stops listening and caching. */
  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    this.invalidate();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.connecting;
    const client = this.listener;
    this.listener = null;
    await client?.end().catch(() => undefined);
  }
}
