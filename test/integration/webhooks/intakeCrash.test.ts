/**
 * Crash safety of the group-committed webhook intake (services/webhooks/outboxWriter.ts): a
 * 202 is sent only after the INSERT that carried its row returned, so an API process killed
 * with SIGKILL in the middle of a burst loses only requests it never acknowledged. Real
 * processes: `npm start` (scripts/start.ts) with two API processes sharing the port and one
 * worker, against the tests' PostgreSQL and Temporal; the burst has no retries and no delivery
 * ids, so nothing hides a lost or doubled request.
 */
// Real processes under the supervisor, so no useTestStack(): the kit's client and deployWorkflow talk to them.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { openOrm } from '../../../db/orm';
import { findFreePort } from '../../../scripts/lib/temporalDevServer';
import { createWorkspace, deployWorkflow, eventually, http, node, webhookChain, type TestApp, type WorkspaceFixture } from '../../kit';
import { testEnv } from '../../support/env';
import { spawnService, type SupervisedService } from '../../support/workerProcess';

jest.setTimeout(900_000);

let orm: MikroORM;
let ws: WorkspaceFixture;
let dataDir: string;
let service: SupervisedService | undefined;

beforeAll(async () => {
  orm = await openOrm(testEnv('databaseUrl'), { poolMax: 3 });
  ws = await createWorkspace({ orm } as TestApp, 'Intake crash');
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-intake-crash-'));
});

afterAll(async () => {
  await service?.stop();
  await orm.close();
  await rm(dataDir, { recursive: true, force: true });
});

test('kill -9 of an API process during a burst: every 202 is exactly one succeeded run, and no request becomes two', async () => {
  service = await spawnService(await findFreePort(), { API_PROCESSES: '2', WORKERS: '1', OUTBOX_POLL_MS: '200' }, dataDir);
  const svc = service;
  const { workflowId, webhookPath } = await deployWorkflow({ app: svc, ws }, webhookChain(node.transform('echo', 'n')));
  const invoke = String(webhookPath);

  const acknowledged = new Map<number, string>();
  const unanswered: number[] = [];
  let next = 0;
  let stop = false;
  const LANES = 24;
  const lanes = Array.from({ length: LANES }, async () => {
    while (!stop) {
      const n = next++;
      try {
        const res = await http<{ outboxId: string; status: string }>(svc, 'POST', invoke, { body: { n } });
        if (res.status === 202) acknowledged.set(n, res.body.outboxId);
        else unanswered.push(n);
      } catch {
        // The connection went with the killed process: no answer, so no promise was made.
        unanswered.push(n);
      }
    }
  });

  await eventually(
    async () => acknowledged.size,
    (n) => n >= 100,
    120_000,
  );
  const apis = svc.pids('api');
  expect(apis).toHaveLength(2);
  process.kill(apis[0]!, 'SIGKILL');
  await svc.waitForLog((l) => l.msg === 'api process exited; restarting' && l.childPid === apis[0]);
  // The burst goes on against the survivor (and the replacement once it serves).
  const atKill = acknowledged.size;
  await eventually(
    async () => acknowledged.size,
    (n) => n >= atKill + 100,
    120_000,
  );
  stop = true;
  await Promise.all(lanes);
  // The kill cut requests in flight: the case this test is about.
  expect(unanswered.length).toBeGreaterThan(0);

  const rowsOf = async () =>
    orm.em
      .fork()
      .execute<Array<{ id: string; n: number; run_status: string | null }>>(
        `select o.id, (o.payload->>'n')::int as n, r.status as run_status from webhook_outbox o left join runs r on r.id = o.run_id where o.workflow_id = ?`,
        [workflowId],
      );
  const rows = await eventually(rowsOf, (r) => r.length >= acknowledged.size && r.every((x) => x.run_status === 'succeeded'), 600_000);
  const runs = await orm.em
    .fork()
    .execute<Array<{ n: number; count: number }>>(
      `select (input->>'n')::int as n, count(*)::int as count from runs where workflow_id = ? group by 1`,
      [workflowId],
    );
  // Every acknowledged request is its own row and one succeeded run.
  const rowById = new Map(rows.map((r) => [r.id, r]));
  for (const [n, outboxId] of acknowledged)
    expect([n, rowById.get(outboxId)?.n, rowById.get(outboxId)?.run_status]).toEqual([n, n, 'succeeded']);
  // No request became two rows or two runs; an unanswered one may have been committed before the kill, at most once.
  expect(runs.filter((r) => r.count !== 1)).toEqual([]);
  expect(new Set(rows.map((r) => r.n)).size).toBe(rows.length);
  const extra = rows.filter((r) => !acknowledged.has(r.n)).map((r) => r.n);
  expect(extra.every((n) => unanswered.includes(n))).toBe(true);
});
