/**
 * The service's PostgreSQL role (docs/postgres-roles.md): the API, the worker and the
 * migrations connect as an owner role that is not a superuser. A superuser connection (the
 * "admin" URL) is used only here, once per start or migrate, to create or repair that role
 * and to do the one thing the owner cannot: create the pgvector extension.
 */
import { createHmac } from 'node:crypto';
import pg from 'pg';
import { createDatabase, ensurePostgres, type EnsurePostgresOptions, type PostgresHandle } from './postgres';

/** The owner role `npm start` provisions when it finds or starts PostgreSQL itself. */
export const LOCAL_OWNER_ROLE = 'svc_owner';

// Schemas of PostgreSQL itself; everything else in the service database belongs to the owner.
const SYSTEM_SCHEMAS = `n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_toast%' and n.nspname not like 'pg\\_temp\\_%'`;
// Objects an extension (pgvector) created stay with the extension's owner.
const NOT_EXTENSION_MEMBER = (catalog: string, oid: string) =>
  `not exists (select 1 from pg_depend d where d.classid = '${catalog}'::regclass and d.objid = ${oid} and d.deptype = 'e')`;

/**
 * Functions of pg_catalog that tell the server's state rather than compute on values: its
 * version and settings, activity and statistics of every table (pg_stat_get_*), relation and
 * database sizes, locks, addresses. PUBLIC may run them by default.
 */
const SERVER_STATE_FUNCTIONS = `p.proname like 'pg\\_stat\\_get\\_%' or p.proname in ('version', 'current_setting', 'pg_show_all_settings', 'pg_relation_size',
  'pg_total_relation_size', 'pg_table_size', 'pg_indexes_size', 'pg_database_size', 'pg_tablespace_size', 'pg_relation_filenode', 'pg_relation_filepath',
  'pg_tablespace_location', 'pg_lock_status', 'pg_blocking_pids', 'pg_safe_snapshot_blocking_pids', 'inet_server_addr', 'inet_server_port', 'inet_client_addr',
  'inet_client_port', 'pg_postmaster_start_time', 'pg_conf_load_time', 'pg_current_logfile')`;

/**
 * Statements that take the catalogue away from the reader roles of user SQL in the current
 * database (docs/postgres-roles.md): PostgreSQL lets every role (PUBLIC) read the catalogue's
 * relations (pg_class, pg_attribute, pg_tables, pg_roles, pg_settings, pg_stat_activity,
 * pg_stat_user_tables, … every schema's names, sizes and row counts) and run the functions
 * above, and a grant to PUBLIC cannot be revoked from one role. So PUBLIC loses them, and the
 * owner role and `pg_monitor` (monitoring) are granted them back. Only what PUBLIC had at
 * initdb (pg_init_privs) is granted, never pg_authid and the others it never had. Empty when
 * all of that is done already. The ACLs of a database's catalogue are its own: other
 * databases of the server keep PostgreSQL's defaults.
 */
export async function catalogueRestrictions(client: pg.ClientBase, owner: string): Promise<string[]> {
  const lit = client.escapeLiteral(owner);
  const relations = (
    await client.query<{ rel: string; revoke: boolean; grant: boolean }>(
      `select c.oid::regclass::text as rel, has_table_privilege('public', c.oid, 'select') as revoke,
              not (has_table_privilege(${lit}, c.oid, 'select') and has_table_privilege('pg_monitor', c.oid, 'select')) as grant
         from pg_init_privs i join pg_class c on c.oid = i.objoid
        where i.classoid = 'pg_class'::regclass and i.objsubid = 0 and c.relnamespace = 'pg_catalog'::regnamespace
          and exists (select 1 from aclexplode(i.initprivs) a where a.grantee = 0 and a.privilege_type = 'SELECT')
        order by 1`,
    )
  ).rows;
  const functions = (
    await client.query<{ fn: string; revoke: boolean; grant: boolean }>(
      `select p.oid::regprocedure::text as fn, has_function_privilege('public', p.oid, 'execute') as revoke,
              not (has_function_privilege(${lit}, p.oid, 'execute') and has_function_privilege('pg_monitor', p.oid, 'execute')) as grant
         from pg_proc p where p.pronamespace = 'pg_catalog'::regnamespace and p.prokind = 'f' and (${SERVER_STATE_FUNCTIONS})
        order by 1`,
    )
  ).rows;
  const grantees = `${client.escapeIdentifier(owner)}, pg_monitor`;
  const statements: string[] = [];
  // Grants first: the owner never goes without what it reads (pg_roles, the stat views).
  const relGrant = relations.filter((r) => r.grant || r.revoke).map((r) => r.rel);
  if (relGrant.length) statements.push(`grant select on ${relGrant.join(', ')} to ${grantees}`);
  const fnGrant = functions.filter((f) => f.grant || f.revoke).map((f) => f.fn);
  if (fnGrant.length) statements.push(`grant execute on function ${fnGrant.join(', ')} to ${grantees}`);
  const relRevoke = relations.filter((r) => r.revoke).map((r) => r.rel);
  if (relRevoke.length) statements.push(`revoke select on ${relRevoke.join(', ')} from public`);
  const fnRevoke = functions.filter((f) => f.revoke).map((f) => f.fn);
  if (fnRevoke.length) statements.push(`revoke execute on function ${fnRevoke.join(', ')} from public`);
  return statements;
}

/**
 * Makes `ownerUrl`'s user the owner of `ownerUrl`'s database, with exactly what the service
 * needs, using the superuser `adminUrl` (same server):
 * - the role: LOGIN, CREATEROLE (for the per-database reader roles `udbr_…`), NOSUPERUSER,
 *   NOCREATEDB, NOREPLICATION, NOBYPASSRLS, and the URL's password when it has one;
 * - ownership of the database (so it may create the `udb_…` schemas) and of every schema,
 *   table, view, sequence and function in it that an extension does not own (databases
 *   migrated as a superuser before this change are handed over);
 * - membership, with ADMIN OPTION, in the reader roles of user databases that exist already
 *   (created by the superuser before), so it can SET ROLE to them and manage them;
 * - the pgvector extension, created here when the server has it, because only a superuser may;
 * - the catalogue out of the reader roles' reach (catalogueRestrictions), which only the
 *   catalogue's owner, a superuser, may change.
 * Idempotent: run at every start. The database is created when missing.
 */
export async function provisionOwnerRole(adminUrl: string, ownerUrl: string, log: (m: string) => void = () => {}): Promise<void> {
  const owner = new URL(ownerUrl);
  const role = decodeURIComponent(owner.username);
  const database = decodeURIComponent(owner.pathname.replace(/^\//, ''));
  if (!role || !database) throw new Error('The owner URL needs a user and a database name.');
  const admin = new URL(adminUrl);
  admin.pathname = `/${encodeURIComponent(database)}`;
  await createDatabase(admin.toString());
  const client = new pg.Client({ connectionString: admin.toString() });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const q = (text: string) => client.query(text);
    const id = (name: string) => client.escapeIdentifier(name);
    const lit = client.escapeLiteral(role);
    const [me] = (
      await client.query<{ rolsuper: boolean; user: string }>(
        'select rolsuper, current_user as user from pg_roles where rolname = current_user',
      )
    ).rows;
    if (!me?.rolsuper) throw new Error(`DATABASE_ADMIN_URL must name a superuser; ${me?.user ?? 'its user'} is not.`);
    if (me.user === role) throw new Error(`The owner role must differ from the superuser of DATABASE_ADMIN_URL (${role}).`);
    const password = owner.password ? ` password ${client.escapeLiteral(decodeURIComponent(owner.password))}` : '';
    const attributes = `login nosuperuser createrole nocreatedb noreplication nobypassrls${password}`;
    const exists = (await client.query('select 1 from pg_roles where rolname = $1', [role])).rowCount;
    await q(`${exists ? 'alter' : 'create'} role ${id(role)} ${attributes}`);
    await q(`alter database ${id(database)} owner to ${id(role)}`);

    const available = (await client.query(`select 1 from pg_available_extensions where name = 'vector'`)).rowCount;
    if (available) {
      await q('create extension if not exists vector').catch((err: Error) =>
        log(`pgvector is available but could not be created: ${err.message}`),
      );
    }

    const owned = async (sql: string) => (await client.query<{ stmt: string }>(sql)).rows.map((r) => r.stmt);
    const statements = [
      ...(await owned(`select format('alter schema %I owner to %I', n.nspname, ${lit}) as stmt from pg_namespace n
         where ${SYSTEM_SCHEMAS} and n.nspowner <> (select oid from pg_roles where rolname = ${lit})
           and n.nspowner <> 'pg_database_owner'::regrole and ${NOT_EXTENSION_MEMBER('pg_namespace', 'n.oid')}`)),
      // Sequences owned by a column follow their table; indexes and TOAST tables too.
      ...(await owned(`select format('alter %s %I.%I owner to %I', case c.relkind when 'S' then 'sequence' when 'v' then 'view' when 'm' then 'materialized view' when 'f' then 'foreign table' else 'table' end,
                n.nspname, c.relname, ${lit}) as stmt
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where ${SYSTEM_SCHEMAS} and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f') and c.relowner <> (select oid from pg_roles where rolname = ${lit})
           and ${NOT_EXTENSION_MEMBER('pg_class', 'c.oid')}
           and not (c.relkind = 'S' and exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.refclassid = 'pg_class'::regclass and d.deptype in ('a', 'i')))`)),
      ...(await owned(`select format('alter routine %s owner to %I', p.oid::regprocedure, ${lit}) as stmt
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where ${SYSTEM_SCHEMAS} and p.proowner <> (select oid from pg_roles where rolname = ${lit}) and ${NOT_EXTENSION_MEMBER('pg_proc', 'p.oid')}`)),
    ];
    const readers = await client
      .query<{ role_name: string }>(`select role_name from user_databases where role_name in (select rolname from pg_roles)`)
      .then((r) => r.rows.map((row) => row.role_name))
      .catch(() => [] as string[]); // before the databases migration
    for (const reader of readers) statements.push(`grant ${id(reader)} to ${id(role)} with admin option`);
    statements.push(...(await catalogueRestrictions(client, role)));
    if (statements.length > 0) {
      await inOneTransaction(client, statements);
      log(`PostgreSQL owner role ${role}: ${statements.length} ownership, membership or catalogue changes applied`);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The local owner role's password: derived from the secret key, so nothing new is stored and it is not guessable. */
export function localOwnerPassword(secretKey: string): string {
  return createHmac('sha256', secretKey).update('postgres-owner-role').digest('base64url');
}

/** Runs `statements` in order in one transaction: all of them, or none. */
async function inOneTransaction(client: pg.ClientBase, statements: string[]): Promise<void> {
  await client.query('begin');
  try {
    for (const statement of statements) await client.query(statement);
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  }
}

/**
 * A service that connects as a superuser (DATABASE_URL only, as before the owner role) still
 * keeps the catalogue out of the reader roles' reach: the superuser may change it, and reads
 * everything anyway. Any other role cannot, and gets the restrictions from whoever provisioned it.
 */
async function restrictCatalogueIfSuperuser(url: string, log: (m: string) => void): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const [me] = (
      await client.query<{ rolsuper: boolean; user: string }>(
        'select rolsuper, current_user as user from pg_roles where rolname = current_user',
      )
    ).rows;
    if (!me?.rolsuper) return;
    const statements = await catalogueRestrictions(client, me.user);
    if (statements.length === 0) return;
    await inOneTransaction(client, statements);
    log(
      `PostgreSQL: ${statements.length} catalogue restrictions applied for the reader roles (the service connects as the superuser ${me.user})`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * `ensurePostgres` for the service itself: the returned URL is the owner role's, never a
 * superuser's.
 * - `adminUrl` given: the owner role of `databaseUrl` (required then) is provisioned with it.
 * - Neither URL given: the local or embedded server's superuser provisions `svc_owner` (its
 *   password from `secretKey`) on the service database.
 * - Only `databaseUrl` given: used as it is (an operator who provisioned the role by hand, see
 *   docs/postgres-roles.md; or a superuser URL, as before).
 */
export async function ensureServiceDatabase(
  opts: EnsurePostgresOptions & { adminUrl?: string; secretKey?: string },
): Promise<PostgresHandle> {
  const log = opts.log ?? (() => {});
  if (opts.adminUrl) {
    if (!opts.databaseUrl) throw new Error('DATABASE_ADMIN_URL needs DATABASE_URL: the owner role and database the service connects as.');
    await provisionOwnerRole(opts.adminUrl, opts.databaseUrl, log);
    return { url: opts.databaseUrl, embedded: false, stop: async () => {} };
  }
  const handle = await ensurePostgres(opts);
  if (opts.databaseUrl) {
    await restrictCatalogueIfSuperuser(handle.url, log);
    return handle;
  }
  if (!opts.secretKey) return handle;
  try {
    const url = new URL(handle.url);
    url.username = LOCAL_OWNER_ROLE;
    url.password = localOwnerPassword(opts.secretKey);
    await provisionOwnerRole(handle.url, url.toString(), log);
    return { ...handle, url: url.toString() };
  } catch (err) {
    await handle.stop();
    throw err;
  }
}
