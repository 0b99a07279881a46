/**
 * Issue 26, F2: read-only SQL whose values are huge. A 600 MB value once made the pg client
 * throw inside its socket handler (the process exited), and values over the byte budget were
 * fetched whole before `maxBytes` was applied. Contract: PostgreSQL refuses or nulls what is
 * over the budget, so A gets a 4xx or a bounded 200, and B keeps running.
 */
import { F2_SQL } from './attacks';
import { expect4xx, startAbuseStack, type AbuseStack } from './kit';

/** The budget of these tests (the default, 1 MiB): an answer may carry it, never many times it. */
const MAX_BYTES = 1024 * 1024;

let kit: AbuseStack;
let databaseId: string;
beforeAll(async () => {
  kit = await startAbuseStack({ config: { databaseQuery: { timeoutMs: 5_000, maxRows: 1_000, maxBytes: MAX_BYTES } } });
  const created = await kit.request(kit.a, 'POST', '/api/v1/databases', {
    databaseName: 'attack',
    tableName: 'notes',
    columns: [{ name: 'text', type: 'text' }],
    rows: [{ text: 'hello' }],
  });
  expect(created.status).toBe(201);
  databaseId = created.body.database.id;
}, 120_000);
afterAll(() => kit?.close());

describe.each(Object.entries(F2_SQL))('A queries %s', (_name, sql) => {
  test('A gets a 4xx naming the budget or a bounded answer; B probes meanwhile and after', async () => {
    await kit.survives(async () => {
      const res = await kit.request(kit.a, 'POST', '/api/v1/databases/query', { databaseId, sql });
      if (res.status !== 200) expect4xx(res, /byte|budget|limit|too large|exceed/i);
      else {
        // Nulled or cut by the server: the answer carries at most the budget (plus JSON framing).
        expect(res.text.length).toBeLessThan(2 * MAX_BYTES);
        expect(res.body.truncated).toBe(true);
      }
    });
  });
});
