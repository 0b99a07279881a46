/**
 * Run admission: while a workspace has RUN_ADMISSION_MAX_ACTIVE runs queued or running, its new
 * live runs wait at the door (no run row yet), start in arrival order as places free up, and
 * are refused 503 with Retry-After once RUN_ADMISSION_MAX_WAIT_MS has passed. Runs parked on a
 * wait, dry runs and other workspaces are not held.
 */
import http from 'node:http';
import { listenOnLoopback } from '../../support/fakeServer';
import { startTestApp } from '../../support/harness';
import {
  chain,
  createWorkspace,
  deployWorkflow,
  http as call,
  node,
  useTestStack,
  waitRun,
  type ApiError,
  type NodeInput,
  type QueuedReceipt,
  type Run,
  type WorkspaceFixture,
} from '../../kit';

let other: WorkspaceFixture;
let slow: { url: string; close(): Promise<void> };
/** Requests to the slow endpoint answer only when released. */
const held: http.ServerResponse[] = [];
let arrived: () => void = () => undefined;

const releaseAll = () => {
  for (const res of held.splice(0)) res.end('{"ok":true}');
};
const nextArrival = () => new Promise<void>((resolve) => (arrived = resolve));

const stack = useTestStack(async () => {
  slow = await listenOnLoopback(
    http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      held.push(res);
      arrived();
    }),
  );
  return { config: { runAdmission: { maxActivePerWorkspace: 1, maxWaitMs: 60_000, recheckMs: 20 } } };
});
beforeAll(async () => {
  other = await createWorkspace(stack.app);
  // Held requests are answered before the worker stops.
  stack.beforeClose(releaseAll);
});
afterAll(async () => {
  releaseAll();
  await slow?.close();
});

/** Deploys start → `nodes` in the workspace of `token` (the stack's or `other`). */
const deploy = async (token: string, ...nodes: NodeInput[]) =>
  (await deployWorkflow({ app: stack.app, ws: { token } }, chain(...nodes))).workflowId;
const slowNode = () => node.of('http', 'call', { method: 'GET', url: `${slow.url}/hold` });
const execute = (token: string, workflowId: string, extra: Record<string, unknown> = {}) =>
  stack.as(token).workflows.execute(workflowId, {}, extra);
const waitFor = (token: string, runId: string, until?: (run: Run) => boolean) =>
  waitRun({ app: stack.app, ws: { token } }, runId, { until });
const runCount = async (workspaceId: string) => {
  const rows = await stack.app.orm.em
    .fork()
    .getConnection()
    .execute<Array<{ n: number }>>('select count(*)::int as n from runs where workspace_id = ?', [workspaceId]);
  return rows[0].n;
};

test('a start waits while the workspace is at its limit, and starts once the active run ends', async () => {
  const wf = await deploy(stack.ws.token, slowNode());
  const firstArrived = nextArrival();
  const first = await execute(stack.ws.token, wf);
  expect(first.status).toBe(202);
  await firstArrived;

  const before = await runCount(stack.ws.workspaceId);
  let secondDone = false;
  const second = execute(stack.ws.token, wf).then((r) => {
    secondDone = true;
    return r;
  });
  await new Promise((r) => setTimeout(r, 500));
  // Held at the door: no answer and no run row while the first run is running.
  expect(secondDone).toBe(false);
  expect(await runCount(stack.ws.workspaceId)).toBe(before);

  // Another workspace has its own places.
  const otherWf = await deploy(other.token, node.transform('say', '"hi"'));
  const otherRun = await execute(other.token, otherWf);
  expect(otherRun.status).toBe(202);
  expect((await waitFor(other.token, otherRun.body.run.id)).status).toBe('succeeded');

  // Dry runs are not live runs: not held.
  const dry = await execute(stack.ws.token, wf, { target: 'candidate' });
  expect(dry.status).toBe(201);

  const secondArrived = nextArrival();
  releaseAll();
  expect((await waitFor(stack.ws.token, first.body.run.id)).status).toBe('succeeded');
  const admitted = await second;
  expect(admitted.status).toBe(202);
  await secondArrived;
  releaseAll();
  expect((await waitFor(stack.ws.token, admitted.body.run.id)).status).toBe('succeeded');
});

test('a start that waits longer than the limit is refused 503 with Retry-After, and leaves no run', async () => {
  const impatient = await startTestApp({ runAdmission: { maxActivePerWorkspace: 1, maxWaitMs: 300, recheckMs: 20 } });
  try {
    const wf = await deploy(stack.ws.token, slowNode());
    const arrivedOnce = nextArrival();
    const first = await call<QueuedReceipt>(impatient, 'POST', `/api/v1/workflows/${wf}/execute`, {
      token: stack.ws.token,
      body: { input: {} },
    });
    expect(first.status).toBe(202);
    await arrivedOnce;
    const before = await runCount(stack.ws.workspaceId);

    const refused = await call<ApiError>(impatient, 'POST', `/api/v1/workflows/${wf}/execute`, {
      token: stack.ws.token,
      body: { input: {} },
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error).toMatch(/already has 1 runs queued or running/);
    expect(await runCount(stack.ws.workspaceId)).toBe(before);

    // A re-run is a new live run too.
    const rerun = await call(impatient, 'POST', `/api/v1/runs/${first.body.run.id}/rerun`, { token: stack.ws.token });
    expect(rerun.status).toBe(503);

    releaseAll();
    expect((await waitRun({ app: impatient, ws: stack.ws }, first.body.run.id)).status).toBe('succeeded');
  } finally {
    await impatient.close();
  }
});

test('runs parked on a wait do not hold new starts', async () => {
  const parkedWf = await deploy(stack.ws.token, node.approval('gate', 'Go?'));
  const parked = await execute(stack.ws.token, parkedWf);
  expect(parked.status).toBe(202);
  await waitFor(stack.ws.token, parked.body.run.id, (run) => run.status === 'waiting');

  const quick = await deploy(stack.ws.token, node.transform('say', '"hi"'));
  const started = await execute(stack.ws.token, quick);
  expect(started.status).toBe(202);
  expect((await waitFor(stack.ws.token, started.body.run.id)).status).toBe('succeeded');
  await stack.api.runs.cancel(parked.body.run.id);
});

test('two API processes admitting at once never exceed the cap, and a restarted process counts what is running', async () => {
  const settings = { runAdmission: { maxActivePerWorkspace: 1, maxWaitMs: 300, recheckMs: 20 } };
  const ws = await stack.workspace('Two processes');
  const wf = await deploy(ws.token, slowNode());
  const apps = [await startTestApp(settings), await startTestApp(settings)];
  let restarted: Awaited<ReturnType<typeof startTestApp>> | undefined;
  const start = (app: { url: string }) =>
    call<QueuedReceipt>(app, 'POST', `/api/v1/workflows/${wf}/execute`, { token: ws.token, body: { input: {} } });
  try {
    const firstArrived = nextArrival();
    // Ten starts at once, five on each process: one place, so one start and nine refusals.
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => start(apps[i % 2])));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([202, ...Array<number>(9).fill(503)]);
    expect(await runCount(ws.workspaceId)).toBe(1);
    await firstArrived;

    // A process started afresh knows nothing in memory: it still counts the running run.
    await apps.pop()!.close();
    restarted = await startTestApp(settings);
    expect((await start(restarted)).status).toBe(503);
    expect(await runCount(ws.workspaceId)).toBe(1);

    const admitted = answers.find((a) => a.status === 202)!;
    releaseAll();
    expect((await waitFor(ws.token, admitted.body.run.id)).status).toBe('succeeded');
    const next = nextArrival();
    const after = await start(restarted);
    expect(after.status).toBe(202);
    await next;
    releaseAll();
    expect((await waitFor(ws.token, after.body.run.id)).status).toBe('succeeded');
  } finally {
    for (const app of [...apps, restarted]) await app?.close();
  }
});
