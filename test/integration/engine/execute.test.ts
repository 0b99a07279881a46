import { createWorkspace, http, startTestApp, startTestWorker, waitForRun, type TestApp, type TestWorker, type WorkspaceFixture } from '../../support/harness';

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

const graph = {
  nodes: [
    { id: 'start', type: 'start', config: {} },
    { id: 'double', type: 'transform', config: { expression: '{ "n": n * 2 }' } },
    { id: 'check', type: 'condition', config: { expression: 'n > 5' } },
    { id: 'big', type: 'log', config: { level: 'info', message: '=\"big \" & $string(n)' } },
    { id: 'small', type: 'log', config: { level: 'warn', message: 'small' } },
  ],
  edges: [
    { source: 'start', target: 'double' },
    { source: 'double', target: 'check' },
    { source: 'check', target: 'big', sourceHandle: 'true' },
    { source: 'check', target: 'small', sourceHandle: 'false' },
  ],
};

test('create, deploy, execute: a real Temporal run with steps, logs and output', async () => {
  const created = await http(app, 'POST', '/api/v1/workflows', { token: ws.token, body: { name: 'Doubler', ...graph } });
  expect(created.status).toBe(201);
  const id = created.body.workflow.id;
  const deployed = await http(app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: ws.token });
  expect(deployed.status).toBe(200);
  const exec = await http(app, 'POST', `/api/v1/workflows/${id}/execute`, { token: ws.token, body: { input: { n: 4 } } });
  expect(exec.status).toBe(202);
  expect(exec.body.queued).toBe(true);
  const run = await waitForRun(app, ws.token, exec.body.run.id);
  expect(run.status).toBe('succeeded');
  expect(run.output).toEqual({ n: 8 });
  expect(run.steps.map((s: { nodeId: string; status: string }) => `${s.nodeId}:${s.status}`)).toEqual(
    expect.arrayContaining(['start:succeeded', 'double:succeeded', 'check:succeeded', 'big:succeeded', 'small:skipped']),
  );
  expect(run.logs.map((l: { message: string }) => l.message)).toContain('big 8');
});
