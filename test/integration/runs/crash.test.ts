/**
 * Crash safety: a worker process is SIGKILLed in the middle of a run and another one takes
 * over. The run finishes, and a step that had finished (an outside HTTP call) is not
 * executed again: Temporal replays its recorded result.
 */
import { createWorkspace, http, startTestApp, waitForRun, type TestApp, type WorkspaceFixture } from '../../support/harness';
import { spawnWorker } from '../../support/workerProcess';
import { startFakeServer } from '../../support/fakeServer';

let app: TestApp;
let ws: WorkspaceFixture;

beforeAll(async () => {
  app = await startTestApp();
  ws = await createWorkspace(app);
});
afterAll(() => app.close());

test('a worker killed mid-run is replaced; the run finishes and finished steps are not executed again', async () => {
  const service = await startFakeServer();
  let worker = await spawnWorker();
  try {
    const created = await http(app, 'POST', '/api/v1/workflows', {
      token: ws.token,
      body: {
        nodes: [
          { id: 'start', type: 'start', config: {} },
          { id: 'charge', type: 'http', config: { method: 'POST', url: `${service.url}/charge`, body: { order: '=order' } } },
          { id: 'pause', type: 'wait', config: { seconds: 3 } },
          { id: 'notify', type: 'http', config: { method: 'POST', url: `${service.url}/notify` } },
        ],
        edges: [
          { source: 'start', target: 'charge' },
          { source: 'charge', target: 'pause' },
          { source: 'pause', target: 'notify' },
        ],
      },
    });
    const id = created.body.workflow.id;
    await http(app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: ws.token });
    const exec = await http(app, 'POST', `/api/v1/workflows/${id}/execute`, { token: ws.token, body: { input: { order: 'o-1' } } });
    const runId = exec.body.run.id;

    await waitForRun(app, ws.token, runId, (run) => run.status === 'waiting');
    expect(service.requests.map((r) => r.path)).toEqual(['/charge']);
    worker.kill('SIGKILL');
    await new Promise((resolve) => worker.once('exit', resolve));

    worker = await spawnWorker();
    const done = await waitForRun(app, ws.token, runId, undefined, 60_000);
    expect(done.status).toBe('succeeded');
    expect(service.requests.map((r) => r.path)).toEqual(['/charge', '/notify']);
    expect(done.steps.find((s: { nodeId: string }) => s.nodeId === 'charge')).toMatchObject({ status: 'succeeded', attempts: 1 });
  } finally {
    worker.kill('SIGKILL');
    await service.close();
  }
}, 120_000);
