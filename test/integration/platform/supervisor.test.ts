/**
 * `npm start` runs the API and the worker as separate processes under a supervisor
 * (main/supervisor.ts; issue 26 items 1 and 7). Real processes: scripts/start.ts against the
 * tests' PostgreSQL and Temporal, two API processes sharing one port and two workers. A child
 * killed with SIGKILL mid-load comes back by itself, every accepted webhook and run completes
 * exactly once, and the restarts show in /metrics. A worker whose `run()` rejects exits, is
 * replaced, and /readyz says so meanwhile.
 */
// Real processes under the supervisor, so no useTestStack(): the kit's client and deployWorkflow talk to them.
import { mkdtemp, rm } from 'node:fs/promises';
import nodeHttp from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Client, Connection } from '@temporalio/client';
import { openOrm } from '../../../db/orm';
import { findFreePort } from '../../../scripts/lib/temporalDevServer';
import { testPayloadCodec } from '../../support/harness';
import {
  createWorkspace,
  deployWorkflow,
  eventually,
  http,
  line,
  node,
  type CreatedWorkflow,
  type QueuedReceipt,
  type TestApp,
  type WorkspaceFixture,
} from '../../kit';
import { testEnv } from '../../support/env';
import { listenOnLoopback } from '../../support/fakeServer';
import { scheduleId } from '../../../temporal/schedulesClient';
import { temporalRunLauncher } from '../../../temporal/runsClient';
import { TASK_QUEUE } from '../../../temporal/shared';
import { failStuckRunsOnce } from '../../../services/runs';
import { spawnService, type SupervisedService } from '../../support/workerProcess';

jest.setTimeout(300_000);

let orm: MikroORM;
let ws: WorkspaceFixture;
let dataDir: string;
const services: SupervisedService[] = [];

beforeAll(async () => {
  orm = await openOrm(testEnv('databaseUrl'), { poolMax: 3 });
  ws = await createWorkspace({ orm } as TestApp);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-supervisor-'));
});

afterAll(async () => {
  for (const s of services) await s.stop();
  await orm.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<SupervisedService> {
  const service = await spawnService(await findFreePort(), { OUTBOX_POLL_MS: '200', ...env }, dataDir);
  services.push(service);
  return service;
}

/** The answer of /readyz (api/routes/health.ts): 200 ready, 503 not ready. */
interface Readiness {
  status: string;
  checks: Record<string, { ok: boolean; latencyMs: number; error?: string }>;
  workers: Record<'starting' | 'running' | 'draining' | 'failed' | 'stopped', number>;
}

/** A deployed workflow: (webhook | start) → wait 1 s → echo of the input. */
async function deployWaiter(
  service: SupervisedService,
  trigger: 'webhook' | 'start',
  token = ws.token,
): Promise<{ id: string; invoke?: string }> {
  const graph = { name: `${trigger} waiter`, ...line(node.of(trigger, 'in'), node.wait('pause', 1), node.transform('echo', '$')) };
  const { workflowId, webhookPath } = await deployWorkflow({ app: service, ws: { token } }, graph);
  return { id: workflowId, invoke: webhookPath ?? undefined };
}

async function runsOf(workflowId: string): Promise<Array<{ id: string; status: string; n: number }>> {
  return orm.em.fork().execute(`select id, status, (input->>'n')::int as n from runs where workflow_id = ?`, [workflowId]);
}

/** Sends a webhook until it is accepted: a connection cut by a kill is retried with the same delivery id. */
async function deliver(service: SupervisedService, invoke: string, n: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await http(service, 'POST', invoke, { body: { n }, headers: { 'idempotency-key': `delivery-${n}` } });
      if (res.status === 202) return;
      if (res.status < 500) throw new Error(`webhook ${n} refused: ${res.status} ${res.text}`);
    } catch (err) {
      if (attempt > 200 || /refused:/.test((err as Error).message)) throw err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function metric(text: string, role: string): number | null {
  const m = text.match(new RegExp(`^svc_process_restarts_total\\{role="${role}"\\} (\\d+)$`, 'm'));
  return m ? Number(m[1]) : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const ADMISSION_CAP = 4;

describe('two API processes and two workers under the supervisor', () => {
  let service: SupervisedService;

  beforeAll(async () => {
    service = await start({
      API_PROCESSES: '2',
      WORKERS: '2',
      RUN_ADMISSION_MAX_ACTIVE: String(ADMISSION_CAP),
      RUN_ADMISSION_MAX_WAIT_MS: '120000',
    });
  });
  // Its workers' heartbeats must not make the next service look ready.
  afterAll(() => service.stop());

  test('they share the port, both workers beat, /readyz is ready and restarts start at zero', async () => {
    expect(service.pids('api')).toHaveLength(2);
    expect(service.pids('worker')).toHaveLength(2);
    const ready = await eventually(
      () => http<Readiness>(service, 'GET', '/readyz'),
      (r) => r.status === 200 && r.body.workers.running === 2,
    );
    expect(ready.body).toMatchObject({ status: 'ready', checks: { worker: { ok: true } }, workers: { running: 2 } });
    // Connections are handed out round-robin: both API processes answer on the one port.
    for (let i = 0; i < 20; i++) expect((await http(service, 'GET', '/healthz')).status).toBe(200);
    const answeredBy = await eventually(
      async () => new Set(service.logs.filter((l) => l.msg === 'request' && l.path === '/healthz').map((l) => l.pid)),
      (pids) => pids.size === 2,
    );
    expect([...answeredBy].sort()).toEqual(service.pids('api').sort());
    const metrics = (await http(service, 'GET', '/metrics')).text;
    expect(metric(metrics, 'api')).toBe(0);
    expect(metric(metrics, 'worker')).toBe(0);
  });

  test('run admission holds the per-workspace cap across both API processes: never more admitted at once, every start runs once', async () => {
    const other = await createWorkspace({ orm } as TestApp, 'Admission');
    const held: nodeHttp.ServerResponse[] = [];
    let releaser: NodeJS.Timeout | undefined;
    const slow = await listenOnLoopback(
      nodeHttp.createServer((_req, res) => {
        res.setHeader('content-type', 'application/json');
        held.push(res);
      }),
    );
    try {
      const created = await http<CreatedWorkflow>(service, 'POST', '/api/v1/workflows', {
        token: other.token,
        body: {
          nodes: [
            { id: 'start', type: 'start', config: {} },
            { id: 'call', type: 'http', config: { method: 'GET', url: `${slow.url}/hold` } },
          ],
          edges: [{ source: 'start', target: 'call' }],
        },
      });
      const id = created.body.workflow.id;
      expect((await http(service, 'POST', `/api/v1/workflows/${id}/deploy`, { token: other.token })).status).toBe(200);
      const active = async () =>
        (
          await orm.em
            .fork()
            .execute<Array<{ n: number }>>(
              `select count(*)::int as n from runs where workspace_id = ? and status in ('queued', 'running')`,
              [other.workspaceId],
            )
        )[0].n;

      // Starts spread over both API processes (round-robin); each process alone would admit the cap.
      const STARTS = 3 * ADMISSION_CAP;
      const starts = Array.from({ length: STARTS }, (_, n) =>
        http<QueuedReceipt>(service, 'POST', `/api/v1/workflows/${id}/execute`, { token: other.token, body: { input: { n } } }),
      );
      let most = 0;
      await eventually(
        async () => held.length,
        (n) => n >= ADMISSION_CAP,
      );
      // However long the others wait, no more runs are admitted while the first ones hold.
      for (let i = 0; i < 20; i++) {
        most = Math.max(most, await active());
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(most).toBe(ADMISSION_CAP);
      const rows = await orm.em
        .fork()
        .execute<Array<{ n: number }>>('select count(*)::int as n from runs where workspace_id = ?', [other.workspaceId]);
      expect(rows[0].n).toBe(ADMISSION_CAP);

      // Release the held calls as they come: the waiting starts are admitted a few at a time.
      releaser = setInterval(() => {
        for (const res of held.splice(0)) res.end('{"ok":true}');
      }, 200);
      // Meanwhile the number of queued or running runs is sampled: it never goes over the cap.
      let settled = false;
      const all = Promise.all(starts).finally(() => (settled = true));
      while (!settled) {
        most = Math.max(most, await active());
        await new Promise((r) => setTimeout(r, 50));
      }
      const answers = await all;
      expect(answers.map((a) => a.status)).toEqual(Array(STARTS).fill(202));
      const runs = await eventually(
        () => runsOf(id),
        (r) => r.length === STARTS && r.every((x) => x.status === 'succeeded'),
        120_000,
      );
      clearInterval(releaser);
      expect(runs.map((r) => r.n).sort((a, b) => a - b)).toEqual(Array.from({ length: STARTS }, (_, n) => n));
      expect(most).toBeLessThanOrEqual(ADMISSION_CAP);
    } finally {
      clearInterval(releaser);
      for (const res of held.splice(0)) res.end('{"ok":true}');
      await slow.close();
    }
  });

  test('a schedule fires exactly one run per firing with two workers polling', async () => {
    const created = await http<CreatedWorkflow>(service, 'POST', '/api/v1/workflows', {
      token: ws.token,
      body: {
        nodes: [
          { id: 'tick', type: 'schedule', config: { cron: '0 3 1 1 *', timezone: 'UTC' } },
          { id: 'stamp', type: 'transform', config: { expression: '{ "at": scheduledAt }' } },
        ],
        edges: [{ source: 'tick', target: 'stamp' }],
      },
    });
    const id = created.body.workflow.id;
    // Deployed twice, through whichever processes answer: still one Schedule.
    for (let i = 0; i < 2; i++)
      expect((await http(service, 'POST', `/api/v1/workflows/${id}/deploy`, { token: ws.token })).status).toBe(200);
    const connection = await Connection.connect({ address: testEnv('temporalAddress') });
    try {
      const client = new Client({ connection, dataConverter: { payloadCodecs: [testPayloadCodec] } });
      const ids: string[] = [];
      for await (const listed of client.schedule.list()) if (listed.scheduleId.startsWith(scheduleId(id, ''))) ids.push(listed.scheduleId);
      expect(ids).toEqual([scheduleId(id, 'tick')]);
      const FIRINGS = 4;
      for (let i = 0; i < FIRINGS; i++) {
        await client.schedule.getHandle(scheduleId(id, 'tick')).trigger('ALLOW_ALL');
        // Firings are a second apart at least, so Temporal names each by its own time.
        await new Promise((r) => setTimeout(r, 1_100));
      }
      const runs = await eventually(
        () => runsOf(id),
        (r) => r.length >= FIRINGS && r.every((x) => x.status === 'succeeded'),
        60_000,
      );
      await new Promise((r) => setTimeout(r, 2_000)); // nothing more arrives late
      expect(await runsOf(id)).toHaveLength(FIRINGS);
      expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
      await http(service, 'PATCH', `/api/v1/workflows/${id}`, { token: ws.token, body: { status: 'disabled' } });
    } finally {
      await connection.close();
    }
  });

  test('the stuck-run guard of two API processes fails a stuck run once: a pass that finds another under way skips', async () => {
    const connection = await Connection.connect({ address: testEnv('temporalAddress') });
    const second = await openOrm(testEnv('databaseUrl'), { poolMax: 2 });
    try {
      const client = new Client({ connection, dataConverter: { payloadCodecs: [testPayloadCodec] } });
      const launcher = temporalRunLauncher(client);
      // A run row, then an execution under its id whose every workflow task fails (a workflow
      // type no worker has stands in for non-determinism after a bad deploy).
      const { id } = await deployWaiter(service, 'start');
      const exec = await http<QueuedReceipt>(service, 'POST', `/api/v1/workflows/${id}/execute`, {
        token: ws.token,
        body: { input: { n: 0 } },
      });
      const runId: string = exec.body.run.id;
      await eventually(
        () => runsOf(id),
        (r) => r[0]?.status === 'succeeded',
      );
      // The row turns succeeded a moment before the execution closes; a new execution under the
      // same id can only start once it has.
      await client.workflow.getHandle(runId).result();
      await orm.em
        .fork()
        .execute(`update runs set status = 'running', finished_at = null, updated_at = now() - interval '1 hour' where id = ?`, [runId]);
      await client.workflow.start('noSuchWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: runId,
        // Long enough that a loaded machine cannot time the execution out before both passes ran (then neither would fail it).
        workflowExecutionTimeout: '10 minutes',
        args: [],
      });
      await eventually(
        async () => (await launcher.failingWorkflowTask(runId))?.attempts ?? 0,
        (n) => n >= 2,
        60_000,
      );

      // Two processes' passes at the same moment (two connection pools, as two API processes have).
      const passes = await Promise.allSettled([orm, second].map((o) => failStuckRunsOnce(o, launcher, { maxAttempts: 2, staleMs: 0 })));
      expect(passes.map((p) => p.status)).toEqual(['fulfilled', 'fulfilled']);
      const failedBy = passes.map((p) => (p as PromiseFulfilledResult<string[]>).value.filter((r) => r === runId).length);
      expect(failedBy.sort()).toEqual([0, 1]);
      const [row] = await runsOf(id);
      expect(row.status).toBe('failed');
      expect((await client.workflow.getHandle(runId).describe()).status.name).toBe('TERMINATED');
    } finally {
      await second.close();
      await connection.close();
    }
  });

  test('kill -9 of an API process, then of a worker, mid-load: each comes back by itself, every accepted webhook and run completes exactly once, and /metrics counts the restarts', async () => {
    const hooked = await deployWaiter(service, 'webhook');
    // Executions in a workspace of their own: three at a time stay under its admission cap.
    const executor = await createWorkspace({ orm } as TestApp, 'Executions');
    const executed = await deployWaiter(service, 'start', executor.token);
    const DELIVERIES = 60;
    const accepted: Array<{ n: number; runId: string }> = [];
    let next = 0;
    let executions = 0;
    // Load: webhooks (each retried until accepted) and executions (counted only when accepted) keep coming.
    const load = (async () => {
      const lanes = Array.from({ length: 3 }, async () => {
        while (next < DELIVERIES) {
          const n = next++;
          await deliver(service, hooked.invoke!, n);
          const m = executions++;
          const exec = await http<QueuedReceipt>(service, 'POST', `/api/v1/workflows/${executed.id}/execute`, {
            token: executor.token,
            body: { input: { n: m } },
          }).catch(() => null);
          if (exec?.status === 202) accepted.push({ n: m, runId: exec.body.run.id });
          await new Promise((r) => setTimeout(r, 50));
        }
      });
      await Promise.all(lanes);
    })();

    await eventually(
      async () => next,
      (n) => n >= 15,
    );
    const apis = service.pids('api');
    const [api] = apis;
    process.kill(api, 'SIGKILL');
    await service.waitForLog((l) => l.msg === 'api process exited; restarting' && l.childPid === api);
    const replacement = await service.waitForLog(
      (l) => l.msg === 'child process started' && l.role === 'api' && !apis.includes(l.childPid!),
    );
    await service.waitForLog((l) => l.msg === 'child process serves' && l.childPid === replacement.childPid);
    expect(service.pids('api')).toHaveLength(2);

    await eventually(
      async () => next,
      (n) => n >= 35,
    );
    const [worker] = service.pids('worker');
    process.kill(worker, 'SIGKILL');
    await service.waitForLog((l) => l.msg === 'worker process exited; restarting' && l.childPid === worker);
    await eventually(
      async () => service.pids('worker').length,
      (n) => n === 2,
    );
    await load;

    // Every delivery became exactly one run and every accepted execution ran once; all finished.
    const wanted = Array.from({ length: DELIVERIES }, (_, n) => n);
    const done = (rows: Array<{ status: string }>, count: number) => rows.length >= count && rows.every((r) => r.status === 'succeeded');
    const hookRuns = await eventually(
      () => runsOf(hooked.id),
      (rows) => done(rows, DELIVERIES),
      180_000,
    );
    expect(hookRuns.map((r) => r.n).sort((a, b) => a - b)).toEqual(wanted);
    expect(hookRuns.every((r) => r.status === 'succeeded')).toBe(true);
    // Accepted executions (202) all finish. A request cut by the kill was not accepted: its row,
    // if the dying process wrote one, is not counted here (see the report on orphaned rows).
    const acceptedIds = new Set(accepted.map((a) => a.runId));
    const execRuns = await eventually(
      () => runsOf(executed.id),
      (rows) =>
        done(
          rows.filter((r) => acceptedIds.has(r.id)),
          accepted.length,
        ),
      180_000,
    );
    expect(execRuns.filter((r) => acceptedIds.has(r.id)).every((r) => r.status === 'succeeded')).toBe(true);
    const byN = new Map<number, number>();
    for (const r of execRuns) byN.set(r.n, (byN.get(r.n) ?? 0) + 1);
    expect([...byN.values()].every((count) => count === 1)).toBe(true);
    for (const a of accepted) expect(execRuns.find((r) => r.id === a.runId)?.status).toBe('succeeded');
    expect(accepted.length).toBeGreaterThan(DELIVERIES / 2);

    expect(isAlive(api)).toBe(false);
    expect(isAlive(worker)).toBe(false);
    // Whichever API process answers reports the supervisor's counts.
    for (let i = 0; i < 4; i++) {
      const metrics = await eventually(
        async () => (await http(service, 'GET', '/metrics')).text,
        (text) => metric(text, 'api') === 1 && metric(text, 'worker') === 1,
      );
      expect([metric(metrics, 'api'), metric(metrics, 'worker')]).toEqual([1, 1]);
    }
    const ready = await eventually(
      () => http<Readiness>(service, 'GET', '/readyz'),
      (r) => r.status === 200 && r.body.workers.running === 2,
    );
    expect(ready.status).toBe(200);
  });

  test('SIGTERM stops the supervisor and every child, and nothing is restarted', async () => {
    const pids = [...service.pids('api'), ...service.pids('worker')];
    expect(pids).toHaveLength(4);
    expect(await service.stop()).toBe(0);
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(service.logs.filter((l) => /child process stopped/.test(l.msg))).toHaveLength(4);
    expect(service.logs.filter((l) => /exited; restarting/.test(l.msg))).toHaveLength(2);
  });
});

test('a worker whose run() rejects exits and is replaced; /readyz is not ready meanwhile and ready again after; the restart shows on the metrics port', async () => {
  // /metrics on its own port behind a token (api/metrics.ts): the supervisor's restart counters still reach it.
  const metricsPort = await findFreePort();
  const metricsToken = 'supervisor-metrics-token-0123456789';
  const service = await start({
    METRICS_PORT: String(metricsPort),
    METRICS_HOST: '127.0.0.1',
    METRICS_TOKEN: metricsToken,
    API_PROCESSES: '1',
    WORKERS: '1',
    NODE_OPTIONS: `--require ${path.resolve(__dirname, '../../support/rejectWorkerRunOnce.cjs')}`,
    REJECT_WORKER_RUN_ONCE_FILE: path.join(dataDir, 'rejected-once'),
    REJECT_WORKER_RUN_AFTER_MS: '6000',
  });
  const [first] = service.pids('worker');
  expect(
    (
      await eventually(
        () => http<Readiness>(service, 'GET', '/readyz'),
        (r) => r.status === 200,
      )
    ).status,
  ).toBe(200);

  const exited = await service.waitForLog((l) => l.msg === 'worker process exited; restarting' && l.childPid === first);
  expect(exited).toMatchObject({ code: 1 });
  // The worker wrote `failed` before it exited, so readiness already knows.
  const notReady = await http<Readiness>(service, 'GET', '/readyz');
  expect(notReady.status).toBe(503);
  expect(notReady.body).toMatchObject({ status: 'not_ready', checks: { worker: { ok: false } }, workers: { running: 0 } });
  expect(notReady.body.workers.failed).toBeGreaterThanOrEqual(1);
  expect(service.logs.some((l) => l.msg === 'the worker stopped polling' && /Worker.run\(\) rejected/.test(JSON.stringify(l.err)))).toBe(
    true,
  );

  const ready = await eventually(
    () => http<Readiness>(service, 'GET', '/readyz'),
    (r) => r.status === 200,
    60_000,
  );
  expect(ready.body).toMatchObject({ status: 'ready', workers: { running: 1 } });
  expect(service.pids('worker')).toHaveLength(1);
  expect(service.pids('worker')[0]).not.toBe(first);
  const scrape = async () =>
    (await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
  const metrics = await eventually(scrape, (t) => metric(t, 'worker') === 1);
  expect(metric(metrics, 'worker')).toBe(1);
  expect(metric(metrics, 'api')).toBe(0);
  expect((await http(service, 'GET', '/metrics')).status).toBe(404);
  expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(401);
  // /healthz stays liveness only: it answered throughout.
  expect((await http(service, 'GET', '/healthz')).status).toBe(200);
  expect(await service.stop()).toBe(0);
});
