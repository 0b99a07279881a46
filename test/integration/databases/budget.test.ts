/**
 * User SQL under a byte budget that PostgreSQL enforces (issue 26, item 4 and row F2): rows and
 * values over `maxBytes` are nulled by the server and fetching stops, so they never reach Node;
 * a server message over the budget (an error text quoting a huge value) closes the connection
 * instead of being decoded; the command jobs' SQL tool takes the same path. Every case ends
 * with the process up and another request answered.
 */
import { startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import { createWorkspace, http, useTestStack, type WorkspaceFixture } from '../../kit';
import type { z } from 'zod';
import type { queryResultSchema } from '../../../api/schemas/databases';

/** A query's result, or on a refusal its `error` and `code`. */
type QueryAnswer = z.infer<typeof queryResultSchema> & { error?: string; code?: string };
import { agentScript, commandsConfig, createJob, createThread, isStatus, waitForJob } from '../commands/support';

const MAX_BYTES = 1024 * 1024;
// Generous: the F2 value (600 MB) takes PostgreSQL seconds to build on a busy 2-core machine.
const TIMEOUT_MS = 60_000;
const a = (n: number) => 'a'.repeat(n);
/** The exact query of issue 26, F2: 2.6 KB of SQL that builds a 600 MB value. */
const F2 = `select replace(replace('${a(600)}','a','${a(1000)}'),'a','${a(1000)}')`;
/** The same construction, 100 MB: quick enough to complete. */
const HUNDRED_MB = `replace(replace('${a(100)}','a','${a(1000)}'),'a','${a(1000)}')`;

let llm: FakeLlmServer;
let other: WorkspaceFixture;
let databaseId: string;
let otherDatabaseId: string;

beforeAll(async () => {
  llm = await startFakeLlm();
  agentScript(llm);
});
const stack = useTestStack(() => ({
  config: { ...commandsConfig(llm), databaseQuery: { timeoutMs: TIMEOUT_MS, maxRows: 1000, maxBytes: MAX_BYTES } },
}));
beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other');
  const mine = await http<{ database: { id: string } }>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: {
      databaseName: 'shop',
      tableName: 'items',
      columns: [{ name: 'name', type: 'text' }],
      rows: [{ name: 'Ada' }, { name: 'Alan' }],
    },
  });
  databaseId = mine.body.database.id;
  const theirs = await http<{ database: { id: string } }>(stack.app, 'POST', '/api/v1/databases', {
    token: other.token,
    body: { databaseName: 'misc', tableName: 'notes', columns: [{ name: 'n', type: 'text' }], rows: [{ n: 'hi' }] },
  });
  otherDatabaseId = theirs.body.database.id;
}, 120_000);
afterAll(async () => {
  await llm?.close();
});

const query = (sql: string, token = stack.ws.token, id = databaseId) =>
  http<QueryAnswer>(stack.app, 'POST', '/api/v1/databases/query', { token, body: { databaseId: id, sql } });

/** Another workspace's list and query, answered while (or after) an attack runs. */
async function othersStillServed(): Promise<void> {
  const [list, own] = await Promise.all([
    http(stack.app, 'GET', '/api/v1/workflows', { token: other.token }),
    query('select n from notes', other.token, otherDatabaseId),
  ]);
  expect(list.status).toBe(200);
  expect(own.status).toBe(200);
  expect(own.body.rows).toEqual([{ n: 'hi' }]);
}

test('F2: the exact query answers truncated with no row (or 408), the process stays up, and other requests are served meanwhile', async () => {
  const attack = query(F2);
  await othersStillServed();
  const res = await attack;
  expect([200, 408]).toContain(res.status);
  if (res.status === 200) expect(res.body).toMatchObject({ columns: ['replace'], rows: [], truncated: true });
  else expect(res.body.code).toBe('query_timeout');
  await othersStillServed();
  expect((await query('select name from items order by name')).body.rows).toEqual([{ name: 'Ada' }, { name: 'Alan' }]);
});

/** What PostgreSQL has sent on user-SQL connections so far (the app's /metrics). */
async function bytesReceived(): Promise<number> {
  const text = await (await fetch(`${stack.app.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('svc_user_sql_received_bytes_total '));
  expect(line).toBeDefined();
  return Number(line!.split(' ')[1]);
}

test('a value over the budget is nulled by the server: the rows before it answer, truncated, and it never crossed the wire', async () => {
  const before = await bytesReceived();
  const res = await query(`select n, case when n = 2 then ${HUNDRED_MB} else 'small' end as v from (values (1), (2), (3)) as t(n)`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ columns: ['n', 'v'], rows: [{ n: 1, v: 'small' }], truncated: true });
  // 100 MB were built by the server; well under the 1 MiB budget reached this process.
  expect((await bytesReceived()) - before).toBeLessThan(MAX_BYTES);
});

test('a row over the budget whose values each fit stops the result there', async () => {
  const half = `replace(replace('${a(6)}','a','${a(100)}'),'a','${a(1000)}')`; // 600 KB each
  const res = await query(`select n, ${half} as x, ${half} as y from (values (1), (2)) as t(n)`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ rows: [], truncated: true });
  const fits = await query(`select n, ${half} as x from (values (1)) as t(n)`);
  expect(fits.body.rows).toHaveLength(1);
  expect(fits.body.rows[0].x).toHaveLength(600_000);
  expect(fits.body.truncated).toBe(false);
});

test('duplicate and unnamed columns, comments and a trailing semicolon survive the wrapping', async () => {
  const res = await query(`select 1 as a, 2 as a, 1 + 1, name from items order by name -- last line comment`);
  expect(res.status).toBe(200);
  expect(res.body.columns).toEqual(['a', 'a', '?column?', 'name']);
  expect(res.body.rows[0]).toEqual({ a: 2, '?column?': 2, name: 'Ada' });
  expect((await query('select count(*) as n from items;')).body.rows).toEqual([{ n: 2 }]);
});

test('an error message over the budget (it quotes a 100 MB value) closes the connection: 400, and the pool recovers', async () => {
  const res = await query(`select (${HUNDRED_MB})::int as n`);
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('query_result_too_large');
  await othersStillServed();
  expect((await query('select count(*) as n from items')).body.rows).toEqual([{ n: 2 }]);
});

test("the command jobs' SQL tool takes the same path: F2 ends the tool call cleanly and the worker goes on", async () => {
  const threadId = await createThread(stack.app, stack.ws.token);
  const run = async (message: string) =>
    waitForJob(
      stack.app,
      stack.ws.token,
      (await createJob(stack.app, stack.ws.token, { threadId, message })).body.data.job.id,
      isStatus('succeeded', 'failed', 'waiting_confirmation'),
      120_000,
    );
  const attacked = await run(`sql ${databaseId} ${F2}`);
  const trace = attacked.traces[0];
  expect(trace.tool).toBe('query_database');
  if (trace.status === 'succeeded') expect(trace.output).toMatchObject({ rows: [], truncated: true });
  else expect(trace.error).toMatch(/time limit/);
  const value = await run(
    `sql ${databaseId} select n, case when n = 2 then ${HUNDRED_MB} else 'small' end as v from (values (1), (2)) as t(n)`,
  );
  expect(value.traces[0]).toMatchObject({ status: 'succeeded', output: { rows: [{ n: 1, v: 'small' }], truncated: true } });
  const after = await run(`sql ${databaseId} select name from items order by name`);
  expect(after.traces[0]).toMatchObject({ status: 'succeeded', output: { rows: [{ name: 'Ada' }, { name: 'Alan' }] } });
}, 240_000);
