/**
 * User SQL runs on its own small pool behind a per-workspace fair queue (issue 26, item 5 and
 * row F5): workspace A's 30 parallel slow queries take at most its share of the user-SQL pool
 * and are refused with 429 past its bounded queue, while workspace B's list of workflows (the
 * service's own pool) and B's own query are answered. Outcomes only; the delay B sees is
 * measured by scripts/bench/userSqlFairness.ts.
 */
import { createTable, http, useTestStack, type QueryAnswer, type WorkspaceFixture } from '../../kit';

const TIMEOUT_MS = 1_500;
const POOL = { poolMax: 4, perWorkspace: 2, queuePerWorkspace: 8 };
// CPU-bound and streaming (a set-returning function in the select list is not materialized): only the timeout ends it.
const SLOW = 'select count(*) as n from (select generate_series(1, 2000000000) as g) as s';

let a: WorkspaceFixture;
let b: WorkspaceFixture;
let aDb: string;
let bDb: string;

// Routes only (no worker): user SQL runs no workflow.
const stack = useTestStack({
  worker: false,
  config: { databaseQuery: { timeoutMs: TIMEOUT_MS, maxRows: 1000, maxBytes: 1024 * 1024, pool: POOL } },
});
beforeAll(async () => {
  a = await stack.workspace('Attacker');
  b = await stack.workspace('Bystander');
  const create = async (ws: WorkspaceFixture) =>
    (
      await createTable(
        { app: stack.app, ws },
        { databaseName: 'd', tableName: 't', columns: [{ name: 'v', type: 'text' }], rows: [{ v: 'ok' }] },
      )
    ).database.id;
  aDb = await create(a);
  bDb = await create(b);
});

const query = (token: string, databaseId: string, sql: string) =>
  http<QueryAnswer>(stack.app, 'POST', '/api/v1/databases/query', { token, body: { databaseId, sql } });

const RUNNING = `from pg_stat_activity where application_name = 'svc-user-sql' and state = 'active' and datname = current_database() and query like 'fetch forward%'`;

/** User-SQL statements running now, seen from PostgreSQL (the long part of a query is its cursor's FETCH). */
async function activeUserSql(): Promise<number> {
  const [row] = await stack.app.orm.em.fork().getConnection().execute<Array<{ n: number }>>(`select count(*)::int as n ${RUNNING}`);
  return row.n;
}

test("F5: A's 30 parallel slow queries get at most its share and 429 past its queue; B's list and query are answered meanwhile", async () => {
  const attack = Array.from({ length: 30 }, () => query(a.token, aDb, SLOW));
  let attacking = true;
  let bAsking = false;
  const seen: number[] = [];
  const sampler = (async () => {
    while (attacking) {
      const wasAsking = bAsking;
      const n = await activeUserSql();
      // Only A's statements count: samples that may include B's query are left out.
      if (!wasAsking && !bAsking) seen.push(n);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const until = Date.now() + 30_000;
  while (!seen.some((n) => n > 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));

  bAsking = true;
  const [list, own] = await Promise.all([
    http(stack.app, 'GET', '/api/v1/workflows', { token: b.token }),
    query(b.token, bDb, 'select v from t'),
  ]);
  bAsking = false;
  expect(list.status).toBe(200);
  expect(own.status).toBe(200);
  expect(own.body.rows).toEqual([{ v: 'ok' }]);

  const results = await Promise.all(attack);
  attacking = false;
  await sampler;
  // A's statements ran, and never more than its share at once.
  expect(Math.max(...seen)).toBeGreaterThan(0);
  expect(Math.max(...seen)).toBeLessThanOrEqual(POOL.perWorkspace);
  const statuses = results.map((r) => r.status);
  expect(statuses.every((s) => s === 408 || s === 429)).toBe(true);
  const refused = results.filter((r) => r.status === 429);
  // At most 2 running and 8 waiting at any moment; how many got in over the whole attack depends on how fast the 30 arrived.
  expect(refused.length).toBeGreaterThan(0);
  expect(refused[0].body).toMatchObject({ code: 'query_queue_full', error: expect.stringMatching(/2 queries running and 8 waiting/) });
  expect(refused[0].headers.get('retry-after')).toBe('2');
  // Queued ones ran in turn and timed out on their own clock, not on the time spent waiting.
  expect(statuses.filter((s) => s === 408).length).toBeGreaterThanOrEqual(POOL.perWorkspace + 1);
  // Afterwards A is served again.
  expect((await query(a.token, aDb, 'select v from t')).body.rows).toEqual([{ v: 'ok' }]);
}, 120_000);

test("a query of B cannot see A's data and runs as B's reader role, not as the service's role", async () => {
  // SESSION_USER (the service's own role) is refused since issue 27; the reader role is not it.
  const res = await query(b.token, bDb, 'select current_user as u');
  expect(res.status).toBe(200);
  expect(res.body.rows).toEqual([{ u: `udbr_${bDb.slice(4)}` }]);
});

test('a connection the server ends mid-query is a 503, destroyed rather than reused; the process and the next query are fine', async () => {
  const pending = query(a.token, aDb, SLOW);
  const until = Date.now() + 30_000;
  let pids: number[] = [];
  while (pids.length === 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    pids = (await stack.app.orm.em.fork().getConnection().execute<Array<{ pid: number }>>(`select pid ${RUNNING}`)).map((r) => r.pid);
  }
  expect(pids).toHaveLength(1);
  await stack.app.orm.em
    .fork()
    .getConnection()
    .execute(`select pg_terminate_backend(${Number(pids[0])})`);
  const res = await pending;
  expect(res.status).toBe(503);
  expect(res.body.code).toBe('database_unavailable');
  const metrics = await (await fetch(`${stack.app.url}/metrics`)).text();
  expect(Number(/^svc_user_sql_destroyed_connections_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
  for (let i = 0; i < POOL.poolMax + 1; i++) expect((await query(a.token, aDb, 'select v from t')).body.rows).toEqual([{ v: 'ok' }]);
});
