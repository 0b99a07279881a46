/**
 * Run admission: while a workspace has RUN_ADMISSION_MAX_ACTIVE runs queued or running, its new
 * live runs wait at the door (no run row yet), start in arrival order as places free up, and
 * are refused 503 with Retry-After once RUN_ADMISSION_MAX_WAIT_MS has passed. Runs parked on a
 * wait, dry runs and other workspaces are not held.
 */
import http from 'node:http';
import { listenOnLoopback } from '../../support/fakeServer';
import {
  createWorkspace,
  http as call,
  startTestApp,
  startTestWorker,
  waitForRun,
  type TestApp,
  type TestWorker,
  type WorkspaceFixture,
} from '../../support/harness';

let app: TestApp;
let worker: TestWorker;
let ws: WorkspaceFixture;
let other: WorkspaceFixture;
let slow: { url: string; close(): Promise<void> };
/** Requests to the slow endpoint answer only when released. */
const held: http.ServerResponse[] = [];
let arrived: () => void = () => undefined;

const releaseAll = () => {
  for (const res of held.splice(0)) res.end('{"ok":true}');
};
const nextArrival = () => new Promise<void>((resolve) => (arrived = resolve));

beforeAll(async () => {
  slow = await listenOnLoopback(
    http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      held.push(res);
      arrived();
    }),
  );
  app = await startTestApp({ runAdmission: { maxActivePerWorkspace: 1, maxWaitMs: 60_000, recheckMs: 20 } });
  worker = await startTestWorker(app);
  ws = await createWorkspace(app);
  other = await createWorkspace(app);
});
afterAll(async () => {
  releaseAll();
  await worker.stop();
  await app.close();
  await slow.close();
});

async function deploy(token: string, nodes: object[], edges: object[]): Promise<string> {
  const created = await call(app, 'POST', '/api/v1/workflows', {
    token,
    body: { nodes: [{ id: 'start', type: 'start', config: {} }, ...nodes], edges },
  });
  expect(created.status).toBe(201);
  const id = created.body.workflow.id;
  expect((await call(app, 'POST', `/api/v1/workflows/${id}/deploy`, { token })).status).toBe(200);
  return id;
}

const slowGraph = () =>
  [[{ id: 'call', type: 'http', config: { method: 'GET', url: `${slow.url}/hold` } }], [{ source: 'start', target: 'call' }]] as const;
const execute = (token: string, workflowId: string, body: object = { input: {} }) =>
  call(app, 'POST', `/api/v1/workflows/${workflowId}/execute`, { token, body });
const runCount = async (workspaceId: string) => {
  const rows = await app.orm.em
    .fork()
    .getConnection()
    .execute<Array<{ n: number }>>('select count(*)::int as n from runs where workspace_id = ?', [workspaceId]);
  return rows[0].n;
};

test('a start waits while the workspace is at its limit, and starts once the active run ends', async () => {
  const wf = await deploy(ws.token, ...(slowGraph() as unknown as [object[], object[]]));
  const firstArrived = nextArrival();
  const first = await execute(ws.token, wf);
  expect(first.status).toBe(202);
  await firstArrived;

  const before = await runCount(ws.workspaceId);
  let secondDone = false;
  const second = execute(ws.token, wf).then((r) => {
    secondDone = true;
    return r;
  });
  await new Promise((r) => setTimeout(r, 500));
  // Held at the door: no answer and no run row while the first run is running.
  expect(secondDone).toBe(false);
  expect(await runCount(ws.workspaceId)).toBe(before);

  // Another workspace has its own places.
  const otherWf = await deploy(
    other.token,
    [{ id: 'say', type: 'transform', config: { expression: '"hi"' } }],
    [{ source: 'start', target: 'say' }],
  );
  const otherRun = await execute(other.token, otherWf);
  expect(otherRun.status).toBe(202);
  expect((await waitForRun(app, other.token, otherRun.body.run.id)).status).toBe('succeeded');

  // Dry runs are not live runs: not held.
  const dry = await execute(ws.token, wf, { target: 'candidate', input: {} });
  expect(dry.status).toBe(201);

  const secondArrived = nextArrival();
  releaseAll();
  expect((await waitForRun(app, ws.token, first.body.run.id)).status).toBe('succeeded');
  const admitted = await second;
  expect(admitted.status).toBe(202);
  await secondArrived;
  releaseAll();
  expect((await waitForRun(app, ws.token, admitted.body.run.id)).status).toBe('succeeded');
});

test('a start that waits longer than the limit is refused 503 with Retry-After, and leaves no run', async () => {
  const impatient = await startTestApp({ runAdmission: { maxActivePerWorkspace: 1, maxWaitMs: 300, recheckMs: 20 } });
  try {
    const wf = await deploy(ws.token, ...(slowGraph() as unknown as [object[], object[]]));
    const arrivedOnce = nextArrival();
    const first = await call(impatient, 'POST', `/api/v1/workflows/${wf}/execute`, { token: ws.token, body: { input: {} } });
    expect(first.status).toBe(202);
    await arrivedOnce;
    const before = await runCount(ws.workspaceId);

    const refused = await call(impatient, 'POST', `/api/v1/workflows/${wf}/execute`, { token: ws.token, body: { input: {} } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error).toMatch(/already has 1 runs queued or running/);
    expect(await runCount(ws.workspaceId)).toBe(before);

    // A re-run is a new live run too.
    const rerun = await call(impatient, 'POST', `/api/v1/runs/${first.body.run.id}/rerun`, { token: ws.token });
    expect(rerun.status).toBe(503);

    releaseAll();
    expect((await waitForRun(impatient, ws.token, first.body.run.id)).status).toBe('succeeded');
  } finally {
    await impatient.close();
  }
});

test('runs parked on a wait do not hold new starts', async () => {
  const parkedWf = await deploy(
    ws.token,
    [{ id: 'gate', type: 'approval', config: { prompt: 'Go?' } }],
    [{ source: 'start', target: 'gate' }],
  );
  const parked = await execute(ws.token, parkedWf);
  expect(parked.status).toBe(202);
  await waitForRun(app, ws.token, parked.body.run.id, (run) => run.status === 'waiting');

  const quick = await deploy(
    ws.token,
    [{ id: 'say', type: 'transform', config: { expression: '"hi"' } }],
    [{ source: 'start', target: 'say' }],
  );
  const started = await execute(ws.token, quick);
  expect(started.status).toBe(202);
  expect((await waitForRun(app, ws.token, started.body.run.id)).status).toBe('succeeded');
  await call(app, 'POST', `/api/v1/runs/${parked.body.run.id}/cancel`, { token: ws.token });
});
