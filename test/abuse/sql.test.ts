/**
 * Abuse class "user SQL" (issue 26, rows F2 and F5): workspace A sends read-only SQL that
 * builds huge values or error texts, or floods its queue with slow queries; B's probe run, B's
 * list of workflows and B's own query keep succeeding, /healthz answers, A gets 4xx or a
 * truncated result, never a 5xx. Details of each mechanism: test/integration/databases/.
 */
import { expect4xx, startAbuseStack, type AbuseStack, type AbuseWorkspace } from './kit';

const a = (n: number) => 'a'.repeat(n);
const F2 = `select replace(replace('${a(600)}','a','${a(1000)}'),'a','${a(1000)}')`;
const HUNDRED_MB = `replace(replace('${a(100)}','a','${a(1000)}'),'a','${a(1000)}')`;
const SLOW = 'select count(*) as n from (select generate_series(1, 2000000000) as g) as s';

let kit: AbuseStack;
const databases = new Map<string, string>();
beforeAll(async () => {
  // The service's defaults: 5 s per query, 1 MiB, 4 user-SQL connections, 2 running and 8 waiting per workspace.
  kit = await startAbuseStack();
  for (const ws of [kit.a, kit.b]) {
    const res = await kit.request(ws, 'POST', '/api/v1/databases', { databaseName: 'd', tableName: 't', columns: [{ name: 'v', type: 'text' }], rows: [{ v: 'ok' }] });
    databases.set(ws.label, res.body.database.id);
  }
}, 120_000);
afterAll(() => kit?.close());

const query = (ws: AbuseWorkspace, sql: string) => kit.request(ws, 'POST', '/api/v1/databases/query', { databaseId: databases.get(ws.label), sql });

async function bServed(): Promise<void> {
  const [list, own] = await Promise.all([kit.request(kit.b, 'GET', '/api/v1/workflows'), query(kit.b, 'select v from t')]);
  expect(list.status).toBe(200);
  expect(own.body.rows).toEqual([{ v: 'ok' }]);
}

test('F2: the 2.6 KB query that builds a 600 MB value answers truncated or 408; the process stays up', async () => {
  await kit.survives(async () => {
    const attack = query(kit.a, F2);
    await bServed();
    const res = await attack;
    if (res.status === 200) expect(res.body).toMatchObject({ rows: [], truncated: true });
    else expect4xx(res, /time limit/);
  });
}, 180_000);

test('F2 variant: a 100 MB value among small rows is nulled by the server (truncated)', async () => {
  await kit.survives(async () => {
    const res = await query(kit.a, `select n, case when n = 2 then ${HUNDRED_MB} else 's' end as v from (values (1), (2)) as t(n)`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rows: [{ n: 1, v: 's' }], truncated: true });
  });
}, 180_000);

test('F2 variant: an error text quoting a 100 MB value is a 400, not a crash', async () => {
  await kit.survives(async () => expect4xx(await query(kit.a, `select (${HUNDRED_MB})::int as n`), /byte budget/));
}, 180_000);

test("F5: 30 parallel 5 s queries of A: A gets 408 or 429; B's list and query are answered meanwhile", async () => {
  await kit.survives(async () => {
    const attack = Array.from({ length: 30 }, () => query(kit.a, SLOW));
    await new Promise((r) => setTimeout(r, 500));
    await bServed();
    const statuses = (await Promise.all(attack)).map((r) => r.status);
    expect(statuses.filter((s) => s !== 408 && s !== 429)).toEqual([]);
    expect(statuses).toContain(429);
  });
}, 240_000);
