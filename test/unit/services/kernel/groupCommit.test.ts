/**
 * The group-commit writer's own rules (services/kernel/groupCommit.ts): batches, the size cap,
 * statements in flight, and which rows an error fails. The writes here are plain functions;
 * the outbox writer on PostgreSQL is covered in test/integration/webhooks/groupCommit.test.ts.
 */
import { GroupCommit, rowLevelError } from '../../../../services/kernel/groupCommit';

/** A write that records its batches and answers each row `row * 10`, failing as `fail` says. */
function recorder(fail: (rows: number[]) => unknown = () => null) {
  const batches: number[][] = [];
  const write = async (rows: number[]) => {
    batches.push([...rows]);
    await new Promise((r) => setImmediate(r));
    const err = fail(rows);
    if (err) throw err;
    return rows.map((r) => r * 10);
  };
  return { batches, write };
}

const constraint = () => Object.assign(new Error('violates foreign key constraint'), { code: '23503' });

test('rows enqueued in one turn share a statement; the size cap splits them; each caller gets its own result', async () => {
  const { batches, write } = recorder();
  const gc = new GroupCommit({ write, maxBatch: 4, maxWaitMs: 0, maxInFlight: 2 });
  const results = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => gc.enqueue(n)));
  expect(results).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
  expect(batches.flat().sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  expect(batches.every((b) => b.length <= 4)).toBe(true);
  expect(batches.length).toBeLessThan(10);
  expect(gc.stats()).toEqual({ rows: 10, commits: batches.length, failedStatements: 0, failedRows: 0 });
});

test('no more statements on the wire than maxInFlight; rows arriving meanwhile wait for a slot', async () => {
  let onWire = 0;
  let most = 0;
  const gc = new GroupCommit({
    write: async (rows: number[]) => {
      most = Math.max(most, ++onWire);
      await new Promise((r) => setTimeout(r, 5));
      onWire--;
      return rows;
    },
    maxBatch: 2,
    maxWaitMs: 0,
    maxInFlight: 2,
  });
  await Promise.all(Array.from({ length: 20 }, (_, n) => gc.enqueue(n)));
  expect(most).toBe(2);
});

test('a row-level error is narrowed by halves: only the bad rows fail, with their own error; the others commit', async () => {
  const bad = new Set([3, 7]);
  const { batches, write } = recorder((rows) => (rows.some((r) => bad.has(r)) ? constraint() : null));
  const gc = new GroupCommit({ write, maxBatch: 100, maxWaitMs: 0, maxInFlight: 1 });
  const settled = await Promise.allSettled([1, 2, 3, 4, 5, 6, 7, 8].map((n) => gc.enqueue(n)));
  expect(settled.map((s) => s.status)).toEqual([
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
  ]);
  expect((settled[2] as PromiseRejectedResult).reason).toMatchObject({ code: '23503' });
  expect(batches[0]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  expect(gc.stats()).toMatchObject({ rows: 8, failedRows: 2 });
  // Fewer statements than writing each row alone after the failure would take.
  expect(batches.length).toBeLessThan(1 + 8 + 4);
});

test('an error about the connection fails the whole batch at once, without retries', async () => {
  const down = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
  const { batches, write } = recorder(() => down);
  const gc = new GroupCommit({ write, maxBatch: 100, maxWaitMs: 0, maxInFlight: 1 });
  const settled = await Promise.allSettled([1, 2, 3, 4].map((n) => gc.enqueue(n)));
  expect(settled.every((s) => s.status === 'rejected' && s.reason === down)).toBe(true);
  expect(batches).toHaveLength(1);
  expect(gc.stats()).toEqual({ rows: 4, commits: 0, failedStatements: 1, failedRows: 4 });
});

test('a write may fail single rows by returning an Error in their place', async () => {
  const gc = new GroupCommit({
    write: async (rows: number[]) => rows.map((r) => (r === 2 ? new Error('row 2 refused') : r)),
    maxBatch: 10,
    maxWaitMs: 0,
    maxInFlight: 1,
  });
  const settled = await Promise.allSettled([1, 2, 3].map((n) => gc.enqueue(n)));
  expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
});

test('while a statement is on the wire, a partial batch waits up to maxWaitMs for more rows instead of leaving alone', async () => {
  const { batches, write } = recorder();
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  const gc = new GroupCommit({
    write: async (rows: number[]) => {
      if (rows.includes(0)) await held;
      return write(rows);
    },
    maxBatch: 100,
    maxWaitMs: 60_000,
    maxInFlight: 2,
  });
  const first = gc.enqueue(0);
  await new Promise((r) => setImmediate(r));
  // A slot is free, but the timer has not run out: these gather rather than leave one by one.
  const later = [1, 2, 3].map((n) => gc.enqueue(n));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  expect(batches).toEqual([]);
  release();
  await first;
  await Promise.all(later);
  expect(batches).toEqual([[0], [1, 2, 3]]);
});

test('rowLevelError: data, constraint, limit and raised errors are about rows; connection and unknown errors are not', () => {
  for (const code of ['22P05', '23505', '23503', '54000', 'P0001']) expect(rowLevelError({ code })).toBe(true);
  for (const code of ['08006', '57P01', '53300', 'ECONNREFUSED', undefined]) expect(rowLevelError({ code })).toBe(false);
  expect(rowLevelError(null)).toBe(false);
});
