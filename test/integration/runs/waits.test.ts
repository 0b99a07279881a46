/** Durable waits: timers, approvals and events — resumed, timed out, canceled, and surviving a worker restart. */
import {
  addUserWithKey,
  createWorkspace,
  http,
  signInCookie,
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

beforeAll(async () => {
  app = await startTestApp();
  worker = await startTestWorker(app);
  ws = await createWorkspace(app);
});
afterAll(async () => {
  await worker.stop();
  await app.close();
});

async function start(nodes: object[], edges: object[], input: unknown = {}, token = ws.token): Promise<string> {
  const created = await http(app, 'POST', '/api/v1/workflows', {
    token,
    body: { nodes: [{ id: 'start', type: 'start', config: {} }, ...nodes], edges },
  });
  const id = created.body.workflow.id;
  expect((await http(app, 'POST', `/api/v1/workflows/${id}/deploy`, { token })).status).toBe(200);
  const exec = await http(app, 'POST', `/api/v1/workflows/${id}/execute`, { token, body: { input } });
  expect(exec.status).toBe(202);
  return exec.body.run.id;
}
const waiting = (kind: string) => (run: any) => run.status === 'waiting' && run.waits.some((w: { kind: string }) => w.kind === kind);

const approvalGraph = (timeoutSeconds?: number) => ({
  nodes: [
    { id: 'gate', type: 'approval', config: { prompt: 'Ship it?', ...(timeoutSeconds ? { timeoutSeconds } : {}) }, onError: 'branch' },
    { id: 'yes', type: 'transform', config: { expression: '"shipped: " & comment' } },
    { id: 'no', type: 'transform', config: { expression: '"stopped"' } },
    { id: 'late', type: 'transform', config: { expression: '"timed out"' } },
  ],
  edges: [
    { source: 'start', target: 'gate' },
    { source: 'gate', target: 'yes', sourceHandle: 'approved' },
    { source: 'gate', target: 'no', sourceHandle: 'rejected' },
    { source: 'gate', target: 'late', sourceHandle: 'error' },
  ],
});

test('a wait node is a durable timer: the run is waiting with a timer wait, then resumes', async () => {
  const runId = await start(
    [
      { id: 'pause', type: 'wait', config: { seconds: 2 } },
      { id: 'after', type: 'transform', config: { expression: '"done"' } },
    ],
    [
      { source: 'start', target: 'pause' },
      { source: 'pause', target: 'after' },
    ],
  );
  const parked = await waitForRun(app, ws.token, runId, waiting('timer'));
  expect(parked.waits).toEqual([{ kind: 'timer', nodeId: 'pause', since: expect.any(String), until: expect.any(String) }]);
  expect(parked.steps.find((s: { nodeId: string }) => s.nodeId === 'pause').status).toBe('waiting');
  const done = await waitForRun(app, ws.token, runId);
  expect(done).toMatchObject({ status: 'succeeded', output: 'done', waits: [] });
});

test('an approval waits, is decided once through POST /api/runs/{id}/approval, and takes the chosen path', async () => {
  const g = approvalGraph();
  const runId = await start(g.nodes, g.edges);
  const parked = await waitForRun(app, ws.token, runId, waiting('approval'));
  expect(parked.waits[0]).toMatchObject({ kind: 'approval', nodeId: 'gate', prompt: 'Ship it?' });

  const viewer = await addUserWithKey(app, ws, 'viewer');
  const refused = await http(app, 'POST', `/api/runs/${runId}/approval`, { token: viewer.token, body: { decision: 'approved' } });
  expect(refused.status).toBe(403);
  expect((await http(app, 'POST', `/api/runs/${runId}/approval`, { token: ws.token, body: { decision: 'maybe' } })).status).toBe(400);

  const decided = await http(app, 'POST', `/api/runs/${runId}/approval`, {
    token: ws.token,
    body: { decision: 'approved', comment: 'LGTM' },
  });
  expect(decided.status).toBe(200);
  expect(decided.body.approval).toEqual({ nodeId: 'gate', decision: 'approved' });
  const again = await http(app, 'POST', `/api/runs/${runId}/approval`, { token: ws.token, body: { decision: 'rejected' } });
  expect(again.status).toBe(409);

  const done = await waitForRun(app, ws.token, runId);
  expect(done).toMatchObject({ status: 'succeeded', output: 'shipped: LGTM' });
  expect(done.steps.find((s: { nodeId: string }) => s.nodeId === 'gate').output).toMatchObject({
    decision: 'approved',
    comment: 'LGTM',
    decidedBy: ws.ownerId,
  });
});

test('a session member can reject an approval; a cross-origin session request cannot', async () => {
  const g = approvalGraph();
  const runId = await start(g.nodes, g.edges);
  await waitForRun(app, ws.token, runId, waiting('approval'));
  const cookie = await signInCookie(app, ws.ownerEmail, ws.ownerPassword);
  const csrf = await http(app, 'POST', `/api/runs/${runId}/approval`, {
    cookie,
    body: { decision: 'rejected' },
    headers: { origin: 'https://evil.example' },
  });
  expect(csrf.status).toBe(403);
  const res = await http(app, 'POST', `/api/runs/${runId}/approval`, { cookie, body: { decision: 'rejected' } });
  expect(res.status).toBe(200);
  expect((await waitForRun(app, ws.token, runId)).output).toBe('stopped');
});

test('an approval that times out takes the error path', async () => {
  const g = approvalGraph(1);
  const runId = await start(g.nodes, g.edges);
  const done = await waitForRun(app, ws.token, runId);
  expect(done).toMatchObject({ status: 'succeeded', output: 'timed out' });
  expect(done.steps.find((s: { nodeId: string }) => s.nodeId === 'gate')).toMatchObject({
    status: 'failed',
    error: expect.stringMatching(/timed out/),
  });
});

test('an event wait lists a single-use resume URL; the JSON body becomes the node output', async () => {
  const runId = await start(
    [
      { id: 'hook', type: 'event', config: {} },
      { id: 'use', type: 'transform', config: { expression: '"paid " & $string(amount)' } },
    ],
    [
      { source: 'start', target: 'hook' },
      { source: 'hook', target: 'use' },
    ],
  );
  const parked = await waitForRun(app, ws.token, runId, waiting('event'));
  const wait = parked.waits[0];
  expect(wait).toEqual({
    kind: 'event',
    nodeId: 'hook',
    since: expect.any(String),
    resumeUrl: expect.stringMatching(new RegExp(`^${app.url}/api/hooks/resume/rt_`)),
  });
  const path = new URL(wait.resumeUrl).pathname;

  expect((await http(app, 'POST', '/api/hooks/resume/rt_unknown')).status).toBe(404);
  const resumed = await http(app, 'POST', path, { body: { amount: 42 } });
  expect(resumed.status).toBe(202);
  expect(resumed.body).toEqual({ runId, nodeId: 'hook', status: 'resumed' });
  const second = await http(app, 'POST', path, { body: { amount: 1 } });
  expect(second.status).toBe(409);

  const done = await waitForRun(app, ws.token, runId);
  expect(done).toMatchObject({ status: 'succeeded', output: 'paid 42' });
  expect(done.steps.find((s: { nodeId: string }) => s.nodeId === 'hook').output).toEqual({ amount: 42 });
});

test('an event wait that times out fails its node; its token is then refused', async () => {
  const runId = await start([{ id: 'hook', type: 'event', config: { timeoutSeconds: 1 } }], [{ source: 'start', target: 'hook' }]);
  const parked = await waitForRun(app, ws.token, runId, waiting('event'));
  expect(parked.waits[0].expiresAt).toEqual(expect.any(String));
  const path = new URL(parked.waits[0].resumeUrl).pathname;
  const done = await waitForRun(app, ws.token, runId);
  expect(done).toMatchObject({ status: 'failed', errorNodeId: 'hook', error: expect.stringMatching(/timed out/) });
  expect((await http(app, 'POST', path, { body: {} })).status).toBe(409);
});

test('a waiting run can be canceled through Temporal cancellation', async () => {
  const g = approvalGraph();
  const runId = await start(g.nodes, g.edges);
  await waitForRun(app, ws.token, runId, waiting('approval'));
  const res = await http(app, 'POST', `/api/v1/runs/${runId}/cancel`, { token: ws.token });
  expect(res.status).toBe(200);
  expect(res.body.run.status).toBe('canceled');
  expect(res.body.run.waits).toEqual([]);
  const handle = app.deps.temporal.client.workflow.getHandle(runId);
  await handle.result().catch(() => undefined);
  expect((await handle.describe()).status.name).toBe('CANCELLED');
  expect((await http(app, 'POST', `/api/v1/runs/${runId}/cancel`, { token: ws.token })).status).toBe(409);
  expect((await http(app, 'POST', `/api/runs/${runId}/approval`, { token: ws.token, body: { decision: 'approved' } })).status).toBe(409);
});

test('waits and their tokens survive a worker restart', async () => {
  const runId = await start(
    [
      { id: 'hook', type: 'event', config: {} },
      { id: 'gate', type: 'approval', config: {} },
    ],
    [
      { source: 'start', target: 'hook' },
      { source: 'hook', target: 'gate' },
    ],
  );
  const parked = await waitForRun(app, ws.token, runId, waiting('event'));
  await worker.stop();
  worker = await startTestWorker(app);
  expect((await http(app, 'POST', new URL(parked.waits[0].resumeUrl).pathname, { body: { step: 1 } })).status).toBe(202);
  await waitForRun(app, ws.token, runId, waiting('approval'));
  await worker.stop();
  worker = await startTestWorker(app);
  expect((await http(app, 'POST', `/api/runs/${runId}/approval`, { token: ws.token, body: { decision: 'approved' } })).status).toBe(200);
  expect((await waitForRun(app, ws.token, runId)).status).toBe('succeeded');
});

test("another workspace's key cannot approve, cancel or see the run", async () => {
  const g = approvalGraph();
  const runId = await start(g.nodes, g.edges);
  await waitForRun(app, ws.token, runId, waiting('approval'));
  const other = await createWorkspace(app, 'Intruder');
  expect((await http(app, 'POST', `/api/runs/${runId}/approval`, { token: other.token, body: { decision: 'approved' } })).status).toBe(404);
  expect((await http(app, 'POST', `/api/v1/runs/${runId}/cancel`, { token: other.token })).status).toBe(404);
  expect((await http(app, 'GET', `/api/v1/runs/${runId}`, { token: other.token })).status).toBe(404);
  const still = await http(app, 'GET', `/api/v1/runs/${runId}`, { token: ws.token });
  expect(still.body.run.status).toBe('waiting');
  await http(app, 'POST', `/api/v1/runs/${runId}/cancel`, { token: ws.token });
});
