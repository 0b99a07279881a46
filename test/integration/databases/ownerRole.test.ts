/**
 * The service as a non-superuser owner role (issue 26, item 4; docs/postgres-roles.md): a
 * deployment migrated and used as a superuser is handed over to the owner role by
 * provisionOwnerRole, then the app runs as that role: old and new user databases, their reader
 * roles, trash and restore, read-only SQL. The owner has none of a superuser's powers, and user
 * SQL reaches the catalogue with no more privilege than before. A fresh database is migrated
 * by the owner itself. The rest of the suite still connects as the test server's superuser.
 */
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { migrateUp, openOrm } from '../../../db/orm';
import { catalogueRestrictions, ensureServiceDatabase, provisionOwnerRole } from '../../../scripts/lib/ownerRole';
import { createDatabase, dropDatabase } from '../../../scripts/lib/postgres';
import { UserDatabaseSchema } from '../../../db/entities';
import { withClient, withSandboxSession } from '../../../services/databases';
import { testEnv } from '../../support/env';
// The legacy deployment is made by an app of the superuser before the handover (the harness's startTestApp); the stack is the app after it.
import { startTestApp } from '../../support/harness';
import { createWorkspace, http, useTestStack, type CreatedTable, type QueryAnswer, type WorkspaceFixture } from '../../kit';

const suffix = randomBytes(4).toString('hex');
const role = `svc_owner_t${suffix}`;
const password = `pw-${suffix}`;
const admin = new URL(testEnv('databaseUrl'));
const databaseUrl = (name: string, asOwner: boolean) => {
  const u = new URL(admin.toString());
  u.pathname = `${admin.pathname}_${name}`;
  if (asOwner) {
    u.username = role;
    u.password = password;
  }
  return u.toString();
};
const legacy = { admin: databaseUrl('legacy', false), owner: databaseUrl('legacy', true) };
const fresh = { admin: databaseUrl('fresh', false), owner: databaseUrl('fresh', true) };
const superuserOnly = databaseUrl('superuser', false);
/** A database nobody provisioned (the lane's own may have been started as a service by another file). */
const control = databaseUrl('control', false);

/** The workspace of the legacy deployment, made before the handover. */
let ws: WorkspaceFixture;
let legacyDb: { databaseId: string; tableId: string };
const readerRoles: string[] = [];

async function asAdmin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

// Routes only (no worker): the app runs as the owner role over a database handed over in the options' beforeAll.
const stack = useTestStack(async () => {
  // A deployment as it was: migrated and used by the superuser.
  await createDatabase(legacy.admin);
  const orm = await openOrm(legacy.admin, { poolMax: 2 });
  await migrateUp(orm);
  await orm.close();
  const before = await startTestApp({ databaseUrl: legacy.admin });
  try {
    ws = await createWorkspace(before);
    const created = await http<CreatedTable>(before, 'POST', '/api/v1/databases', {
      token: ws.token,
      body: { databaseName: 'legacy', tableName: 'people', columns: [{ name: 'name', type: 'text' }], rows: [{ name: 'Ada' }] },
    });
    legacyDb = { databaseId: created.body.database.id, tableId: created.body.table.id };
  } finally {
    await before.close();
  }
  await provisionOwnerRole(admin.toString(), legacy.owner);
  return { worker: false, config: { databaseUrl: legacy.owner } };
});

// Declared after useTestStack: jest runs afterAll hooks in declaration order, so the app is closed first.
afterAll(async () => {
  for (const url of [legacy.admin, fresh.admin, superuserOnly, control]) {
    readerRoles.push(
      ...(await asAdmin(url, async (c) =>
        (await c.query('select role_name from user_databases')).rows.map((r) => r.role_name as string),
      ).catch(() => [])),
    );
    await dropDatabase(url).catch(() => undefined);
  }
  await asAdmin(admin.toString(), async (c) => {
    for (const r of readerRoles) await c.query(`drop role if exists ${c.escapeIdentifier(r)}`);
    await c.query(`drop role if exists ${c.escapeIdentifier(role)}`);
  });
});

const query = (sql: string, databaseId = legacyDb.databaseId) =>
  http<QueryAnswer>(stack.app, 'POST', '/api/v1/databases/query', { token: ws.token, body: { databaseId, sql } });

test('the app connects as the owner role: not a superuser, CREATEROLE, owner of the database and of every table', async () => {
  const [me] = await stack.app.orm.em
    .fork()
    .getConnection()
    .execute<Array<Record<string, unknown>>>(
      `select current_user as user, r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolbypassrls, pg_get_userbyid(d.datdba) as db_owner,
            (select count(*)::int from pg_class c join pg_namespace n on n.oid = c.relnamespace
              where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_toast%' and c.relkind in ('r', 'S', 'v') and c.relowner <> r.oid) as not_owned
       from pg_roles r, pg_database d where r.rolname = current_user and d.datname = current_database()`,
    );
  expect(me).toEqual({
    user: role,
    rolsuper: false,
    rolcreaterole: true,
    rolcreatedb: false,
    rolbypassrls: false,
    db_owner: role,
    not_owned: 0,
  });
});

test('user databases made by the superuser before keep working: query, new table, trash and restore', async () => {
  expect((await query('select name from people')).body.rows).toEqual([{ name: 'Ada' }]);
  const added = await http(stack.app, 'POST', '/api/v1/databases', {
    token: ws.token,
    body: { databaseName: 'legacy', tableName: 'pets', columns: [{ name: 'kind', type: 'text' }], rows: [{ kind: 'cat' }] },
  });
  expect(added.status).toBe(201);
  expect((await query('select p.name, q.kind from people p, pets q')).body.rows).toEqual([{ name: 'Ada', kind: 'cat' }]);
  expect(
    (await http(stack.app, 'PATCH', `/api/v1/databases/${legacyDb.tableId}`, { token: ws.token, body: { trashed: true } })).status,
  ).toBe(200);
  expect((await query('select name from people')).status).toBe(400);
  expect(
    (await http(stack.app, 'PATCH', `/api/v1/databases/${legacyDb.tableId}`, { token: ws.token, body: { trashed: false } })).status,
  ).toBe(200);
  expect((await query('select name from people')).body.rows).toEqual([{ name: 'Ada' }]);
});

test('a new user database gets its reader role from the owner (CREATEROLE), and its SQL runs as that role', async () => {
  const created = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: ws.token,
    body: { databaseName: 'fresh', tableName: 'items', columns: [{ name: 'n', type: 'number' }], rows: [{ n: 1 }] },
  });
  expect(created.status).toBe(201);
  const res = await query('select n, current_user as u from items', created.body.database.id);
  expect(res.body.rows).toEqual([{ n: 1, u: `udbr_${created.body.database.id.slice(4)}` }]);
});

describe('no more privilege than before: as the reader role in its session, and as the owner itself', () => {
  async function inSession(sql: string): Promise<string> {
    const db = await stack.app.orm.em.fork().findOneOrFail(UserDatabaseSchema, { id: legacyDb.databaseId });
    return withClient(stack.app.orm.em.fork(), async (client) => {
      try {
        await withSandboxSession(client, db, 2_000, async (c) => c.query(sql));
        return 'allowed';
      } catch (err) {
        return (err as Error).message;
      }
    });
  }
  test.each([
    ["the service's tables", 'select * from public.api_keys', /permission denied for table api_keys/],
    ['the catalogue of user databases', 'select * from public.user_databases', /permission denied for table user_databases/],
    ['pg_authid', 'select rolpassword from pg_authid', /permission denied for table pg_authid/],
    ['server files', `select pg_read_file('/etc/hostname')`, /permission denied for function pg_read_file/],
    // Issue 27, item 3: the catalogue of every schema, revoked from PUBLIC by provisionOwnerRole.
    ...[
      ['table', 'pg_class'],
      ['table', 'pg_attribute'],
      ['table', 'pg_namespace'],
      ['table', 'pg_database'],
      ['table', 'pg_type'],
      ['view', 'pg_tables'],
      ['view', 'pg_stat_user_tables'],
      ['view', 'pg_statio_user_tables'],
      ['view', 'pg_stat_activity'],
      ['view', 'pg_roles'],
      ['view', 'pg_settings'],
      ['view', 'pg_user'],
    ].map(
      ([kind, name]) =>
        [name, `select * from pg_catalog.${name}`, new RegExp(`permission denied for ${kind} ${name}`)] as [string, string, RegExp],
    ),
    ['the server version', 'select version()', /permission denied for function version/],
    ['settings', `select current_setting('data_directory')`, /permission denied for function current_setting/],
    [
      "the service's table sizes",
      `select pg_total_relation_size('public.api_keys')`,
      /permission denied for function pg_total_relation_size/,
    ],
    [
      'row counts of any table',
      `select pg_stat_get_live_tuples('public.api_keys'::regclass)`,
      /permission denied for function pg_stat_get_live_tuples/,
    ],
  ])('the reader role: %s', async (_label, sql, expected) => {
    expect(await inSession(sql)).toMatch(expected);
  });

  test('the reader role: information_schema shows its own table only', async () => {
    const db = await stack.app.orm.em.fork().findOneOrFail(UserDatabaseSchema, { id: legacyDb.databaseId });
    const rows = await withClient(stack.app.orm.em.fork(), (client) =>
      withSandboxSession(
        client,
        db,
        2_000,
        async (c) =>
          (
            await c.query(
              `select table_schema, table_name from information_schema.tables where table_schema <> 'pg_catalog' and table_schema <> 'information_schema'`,
            )
          ).rows,
      ),
    );
    // people, and pets from the test above: of its own schema, nothing else.
    expect(rows.map((r) => `${r.table_schema}.${r.table_name}`).sort()).toEqual([`${db.schemaName}.people`, `${db.schemaName}.pets`]);
  });

  test('the owner and pg_monitor keep the catalogue; PUBLIC has lost it in this database only', async () => {
    const conn = stack.app.orm.em.fork().getConnection();
    const [row] = await conn.execute<Array<Record<string, unknown>>>(
      `select (select count(*)::int from pg_stat_activity where pid = pg_backend_pid()) as me, length(version()) > 0 as version, current_setting('server_version') is not null as setting,
              has_table_privilege('public', 'pg_catalog.pg_class', 'select') as public_class, has_table_privilege('pg_monitor', 'pg_catalog.pg_stat_activity', 'select') as monitor_activity,
              has_table_privilege(current_user, 'pg_catalog.pg_authid', 'select') as owner_authid`,
    );
    expect(row).toEqual({ me: 1, version: true, setting: true, public_class: false, monitor_activity: true, owner_authid: false });
    await createDatabase(control);
    const elsewhere = await asAdmin(
      control,
      async (c) => (await c.query(`select has_table_privilege('public', 'pg_catalog.pg_class', 'select') as p`)).rows[0].p,
    );
    expect(elsewhere).toBe(true);
    // Done once: the next start has nothing left to change.
    expect(await asAdmin(legacy.admin, (c) => catalogueRestrictions(c, role))).toEqual([]);
  });

  test('a session that got back to its session user (the statement checker refuses SET) would be the owner, not a superuser', async () => {
    const db = await stack.app.orm.em.fork().findOneOrFail(UserDatabaseSchema, { id: legacyDb.databaseId });
    const rows = await withClient(stack.app.orm.em.fork(), (client) =>
      withSandboxSession(client, db, 2_000, async (c) => {
        await c.query('set local role none');
        return (await c.query('select current_user as u, rolsuper from pg_roles where rolname = current_user')).rows;
      }),
    );
    expect(rows).toEqual([{ u: role, rolsuper: false }]);
  });

  test.each([
    ['server files', `select pg_read_file('/etc/hostname')`, /permission denied for function pg_read_file/],
    ['COPY to a server file', `copy (select 1) to '/tmp/svc-owner-escape'`, /permission denied|must be superuser|pg_write_server_files/],
    ['password hashes', 'select rolpassword from pg_authid', /permission denied for table pg_authid/],
    ['a new superuser', `create role svc_evil_${suffix} superuser`, /permission denied|must be superuser/],
    [
      'an untrusted extension',
      'create extension if not exists file_fdw',
      /permission denied|must be superuser|not available|could not open extension control file/,
    ],
  ])('the owner role itself: %s', async (_label, sql, expected) => {
    const outcome = await stack.app.orm.em
      .fork()
      .getConnection()
      .execute(sql)
      .then(() => 'allowed')
      .catch((err: Error) => err.message);
    expect(outcome).toMatch(expected);
  });
});

test('a fresh database is created and migrated by the owner role itself (only the extension needs the superuser)', async () => {
  await provisionOwnerRole(admin.toString(), fresh.owner);
  const orm = await openOrm(fresh.owner, { poolMax: 2 });
  try {
    expect((await migrateUp(orm)).length).toBeGreaterThan(5);
    const [row] = await orm.em
      .getConnection()
      .execute<Array<{ n: number; owner: string }>>(
        `select count(*)::int as n, min(pg_get_userbyid(relowner)) as owner from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind = 'r'`,
      );
    expect(row).toEqual({ n: expect.any(Number), owner: role });
    expect(row.n).toBeGreaterThan(20);
  } finally {
    await orm.close();
  }
  // Running it again changes nothing and fails nothing.
  await provisionOwnerRole(admin.toString(), fresh.owner);
});

test('a service that connects as the superuser (DATABASE_URL only) still takes the catalogue from PUBLIC, in its database only, once', async () => {
  await createDatabase(superuserOnly);
  const publicReads = (url: string) =>
    asAdmin(
      url,
      async (c) => (await c.query(`select has_table_privilege('public', 'pg_catalog.pg_class', 'select') as p`)).rows[0].p as boolean,
    );
  expect(await publicReads(superuserOnly)).toBe(true);
  const handle = await ensureServiceDatabase({ databaseUrl: superuserOnly, dataDir: '' });
  await handle.stop();
  expect(await publicReads(superuserOnly)).toBe(false);
  await createDatabase(control);
  expect(await publicReads(control)).toBe(true);
  expect(await asAdmin(superuserOnly, (c) => catalogueRestrictions(c, admin.username))).toEqual([]);
});
