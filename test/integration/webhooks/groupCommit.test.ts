/**
 * Group commit of the webhook intake (services/kernel/groupCommit.ts, services/webhooks/outboxWriter.ts)
 * through real HTTP, PostgreSQL and Temporal. To know which requests share one INSERT without
 * timing, a test holds an EXCLUSIVE lock on `webhook_outbox`: the writer's two statements in
 * flight block on it, every request sent meanwhile gathers in the next batch (its rows are
 * counted by `/metrics` once enqueued), and releasing the lock sends that batch as one statement.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { startTestApp } from '../../support/harness';
import { client, deployWorkflow, eventually, node, useTestStack, webhookChain, type AppTarget, type HttpResult } from '../../kit';

// Max wait 0: without the lock nothing waits, so the lock alone decides the batches below.
const stack = useTestStack({ config: { webhookTokenCacheMs: 60_000, webhookIntakeMaxWaitMs: 0 }, temporal: { dispatcher: true } });

const WRITER = 'webhook_outbox';

/** The group-commit counters of the outbox writer of `app`, read from /metrics over HTTP. */
async function counters(
  app: AppTarget = stack.app,
): Promise<{ rows: number; commits: number; failedStatements: number; failedRows: number }> {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  const read = (name: string) => {
    const m = text.match(new RegExp(`^${name}\\{writer="${WRITER}"\\} (\\d+)$`, 'm'));
    if (!m) throw new Error(`${name} missing from /metrics`);
    return Number(m[1]);
  };
  return {
    rows: read('svc_group_commit_rows_total'),
    commits: read('svc_group_commit_commits_total'),
    failedStatements: read('svc_group_commit_failed_statements_total'),
    failedRows: read('svc_group_commit_failed_rows_total'),
  };
}

/** Deploys webhook → echo of `n` in the workspace of `token`; its invoke path. */
async function deployEcho(token = stack.ws.token): Promise<{ workflowId: string; invoke: string }> {
  const { workflowId, webhookPath } = await deployWorkflow({ app: stack.app, ws: { token } }, webhookChain(node.transform('echo', 'n')));
  return { workflowId, invoke: String(webhookPath) };
}

const db = (): EntityManager => stack.app.orm.em.fork();

async function runsOf(workflowId: string): Promise<Array<{ id: string; status: string; workspace_id: string; n: number | null }>> {
  return db().execute(`select id, status, workspace_id, (input->>'n')::int as n from runs where workflow_id = ?`, [workflowId]);
}

/** The runs of `workflowId` once `count` of them exist and all succeeded. */
const succeededRuns = (workflowId: string, count: number) =>
  eventually(
    () => runsOf(workflowId),
    (r) => r.length >= count && r.every((x) => x.status === 'succeeded'),
    120_000,
  );

/** Outbox INSERTs of this database waiting for a lock. */
async function blockedInserts(): Promise<number> {
  const rows = await db().execute<Array<{ n: number }>>(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and query ilike 'insert into webhook_outbox%'`,
  );
  return rows[0]!.n;
}

/**
 * Holds the outbox table locked while `ahead` fills the writer's two statements in flight (one
 * request each, sent once the previous one is blocked) and `batched()` sends the requests that
 * then gather in one batch; the lock is released once all of them are enqueued.
 */
async function inOneBatch<T>(
  ahead: Array<() => Promise<unknown>>,
  batched: () => Array<Promise<T>>,
  rows: number,
  app: AppTarget = stack.app,
): Promise<T[]> {
  let sent: Array<Promise<T>> = [];
  const blocked: Array<Promise<unknown>> = [];
  await db().transactional(async (tx) => {
    await tx.execute('lock table webhook_outbox in exclusive mode');
    const before = (await counters(app)).rows;
    for (const request of ahead) {
      blocked.push(request());
      await eventually(blockedInserts, (n) => n >= blocked.length, 30_000);
    }
    sent = batched();
    await eventually(
      async () => (await counters(app)).rows - before,
      (n) => n >= ahead.length + rows,
      30_000,
    );
  });
  await Promise.all(blocked);
  return Promise.all(sent);
}

test('concurrent requests share commits: the writer counts fewer statements than rows, and every 202 is one run', async () => {
  const { workflowId, invoke } = await deployEcho();
  const before = await counters();
  const answers = await Promise.all(Array.from({ length: 80 }, (_, n) => stack.api.webhooks.invoke(invoke, { n })));
  expect(answers.map((a) => a.status)).toEqual(Array(80).fill(202));
  const after = await counters();
  expect(after.rows - before.rows).toBe(80);
  expect(after.commits - before.commits).toBeGreaterThanOrEqual(1);
  expect(after.commits - before.commits).toBeLessThan(80);
  expect(after.failedRows - before.failedRows).toBe(0);
  const runs = await succeededRuns(workflowId, 80);
  expect(runs.map((r) => r.n).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 80 }, (_, n) => n));
}, 180_000);

test('a row that violates a constraint (its webhook deleted by another process) fails alone with 404; the other workspace and its own neighbours in the same INSERT are accepted and run', async () => {
  const other = await stack.workspace('Group commit neighbour');
  const mine = await deployEcho();
  const theirs = await deployEcho(other.token);
  const gone = await deployEcho(other.token);
  // A second API process: the deploys and the deletion below are made past its ORM, so its token cache (60 s) is not told.
  const second = await startTestApp({ webhookTokenCacheMs: 60_000, webhookIntakeMaxWaitMs: 0 });
  try {
    const hooks = client(second).webhooks;
    for (const w of [mine, theirs, gone]) expect((await hooks.invoke(w.invoke, { n: -1 })).status).toBe(202);
    await db().execute('delete from webhooks where workflow_id = ?', [gone.workflowId]);
    const before = await counters(second);

    const answers = await inOneBatch<HttpResult<Record<string, unknown>> & { who: string; n: number }>(
      [() => hooks.invoke(mine.invoke, { n: 100 }), () => hooks.invoke(mine.invoke, { n: 101 })],
      () =>
        [
          ...Array.from({ length: 8 }, (_, n) => ({ who: 'mine', invoke: mine.invoke, n })),
          { who: 'gone', invoke: gone.invoke, n: 0 },
          ...Array.from({ length: 8 }, (_, n) => ({ who: 'theirs', invoke: theirs.invoke, n })),
        ].map(async (r) => ({ ...(await hooks.invoke<Record<string, unknown>>(r.invoke, { n: r.n })), who: r.who, n: r.n })),
      17,
      second,
    );
    const after = await counters(second);

    const unknown = await hooks.invoke('/api/webhooks/whk_no_such_token_at_all');
    expect(unknown.status).toBe(404);
    const refused = answers.filter((a) => a.who === 'gone');
    expect(refused.map((a) => [a.status, a.body])).toEqual([[404, unknown.body]]);
    for (const a of answers.filter((x) => x.who !== 'gone')) expect([a.who, a.status, a.body.status]).toEqual([a.who, 202, 'accepted']);
    // The batch of 17 failed once and was written again by halves; only the bad row was rejected.
    expect(after.failedRows - before.failedRows).toBe(1);
    expect(after.failedStatements - before.failedStatements).toBeGreaterThanOrEqual(2);
    expect(after.rows - before.rows).toBe(19);
  } finally {
    await second.close();
  }

  const mineRuns = await succeededRuns(mine.workflowId, 11);
  const theirRuns = await succeededRuns(theirs.workflowId, 9);
  expect(mineRuns.map((r) => r.n).sort((a, b) => a! - b!)).toEqual([-1, 0, 1, 2, 3, 4, 5, 6, 7, 100, 101]);
  expect(theirRuns.map((r) => r.n).sort((a, b) => a! - b!)).toEqual([-1, 0, 1, 2, 3, 4, 5, 6, 7]);
  // Each run in the workspace of its own webhook.
  expect(new Set(mineRuns.map((r) => r.workspace_id))).toEqual(new Set([stack.ws.workspaceId]));
  expect(new Set(theirRuns.map((r) => r.workspace_id))).toEqual(new Set([other.workspaceId]));
}, 180_000);

test('a delivery replayed inside one batch is one row and one run: the first is accepted, the others deduplicated onto it, as is a later replay', async () => {
  const other = await stack.workspace('Replay neighbour');
  const mine = await deployEcho();
  const theirs = await deployEcho(other.token);
  const key = { headers: { 'idempotency-key': 'same-delivery' } };
  const answers = await inOneBatch(
    [() => stack.api.webhooks.invoke(mine.invoke, { n: 100 }), () => stack.api.webhooks.invoke(mine.invoke, { n: 101 })],
    () => [
      ...Array.from({ length: 6 }, () => stack.api.webhooks.invoke(mine.invoke, { n: 1 }, key)),
      // The same key on another workspace's webhook is another delivery.
      ...Array.from({ length: 3 }, () => stack.api.webhooks.invoke(theirs.invoke, { n: 2 }, key)),
    ],
    9,
  );
  const mineAnswers = answers.slice(0, 6);
  const theirAnswers = answers.slice(6);
  for (const group of [mineAnswers, theirAnswers]) {
    expect(group.every((a) => a.status === 202)).toBe(true);
    expect(new Set(group.map((a) => a.body.outboxId)).size).toBe(1);
    expect(group.map((a) => a.body.status).sort()).toEqual(['accepted', ...Array(group.length - 1).fill('deduplicated')].sort());
  }
  expect(mineAnswers[0]!.body.outboxId).not.toBe(theirAnswers[0]!.body.outboxId);
  const later = await stack.api.webhooks.invoke(mine.invoke, { n: 1 }, key);
  expect(later.body).toMatchObject({ status: 'deduplicated', outboxId: mineAnswers[0]!.body.outboxId });

  const mineRuns = await succeededRuns(mine.workflowId, 3);
  const theirRuns = await succeededRuns(theirs.workflowId, 1);
  expect(mineRuns.map((r) => r.n).sort((a, b) => a! - b!)).toEqual([1, 100, 101]);
  expect(theirRuns.map((r) => [r.n, r.workspace_id])).toEqual([[2, other.workspaceId]]);
}, 180_000);
