import {
  createWorkspace,
  http,
  startTestApp,
  startTestWorker,
  waitForRun,
  type TestApp,
  type WorkspaceFixture,
} from '../../support/harness';

let app: TestApp;
let ws: WorkspaceFixture;

beforeAll(async () => {
  app = await startTestApp();
  ws = await createWorkspace(app);
});
afterAll(() => app.close());

test('/metrics exposes HTTP requests by route template and status, latency, runs and outbox depth', async () => {
  await http(app, 'GET', '/api/v1/workspaces', { token: ws.token });
  await http(app, 'GET', '/api/v1/workspaces');
  const wf = await http(app, 'POST', '/api/v1/workflows', { token: ws.token, body: {} });
  await http(app, 'POST', `/api/v1/workflows/${wf.body.workflow.id}/execute`, { token: ws.token, body: { target: 'candidate' } });

  const res = await fetch(`${app.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/plain/);
  const text = await res.text();
  expect(text).toMatch(/svc_http_requests_total\{route="\/api\/v1\/workspaces",method="GET",status="200"\} [1-9]/);
  expect(text).toMatch(/svc_http_requests_total\{route="\/api\/v1\/workspaces",method="GET",status="401"\} [1-9]/);
  // Route templates, not raw paths: ids never become label values.
  expect(text).toContain('route="/api/v1/workflows/:id/execute"');
  expect(text).not.toContain(wf.body.workflow.id);
  expect(text).toMatch(/svc_http_request_duration_seconds_bucket\{le="0.05",route="\/api\/v1\/workspaces",method="GET"\}/);
  expect(text).toMatch(/svc_runs\{status="succeeded",trigger="api"\} [1-9]/);
  expect(text).toMatch(/svc_webhook_outbox_depth \d+/);
});

test('runs link into the Temporal Web UI when its address is configured; dry runs do not', async () => {
  const withUi = await startTestApp({ temporal: { ...app.deps.config.temporal, uiUrl: 'http://ui.example.test:8233/' } });
  try {
    const wf = await http(withUi, 'POST', '/api/v1/workflows', { token: ws.token, body: {} });
    await http(withUi, 'POST', `/api/v1/workflows/${wf.body.workflow.id}/deploy`, { token: ws.token });
    const live = await http(withUi, 'POST', `/api/v1/workflows/${wf.body.workflow.id}/execute`, { token: ws.token, body: {} });
    expect(live.body.links.temporal).toBe(`http://ui.example.test:8233/namespaces/default/workflows/${live.body.run.id}`);
    const fetched = await http(withUi, 'GET', `/api/v1/runs/${live.body.run.id}`, { token: ws.token });
    expect(fetched.body.links.temporal).toBe(live.body.links.temporal);
    const dry = await http(withUi, 'POST', `/api/v1/workflows/${wf.body.workflow.id}/execute`, {
      token: ws.token,
      body: { target: 'candidate' },
    });
    expect(dry.body.links.temporal).toBeUndefined();
    // Without a configured UI there is no link.
    const plain = await http(app, 'GET', `/api/v1/runs/${live.body.run.id}`, { token: ws.token });
    expect(plain.body.links.temporal).toBeUndefined();
  } finally {
    await withUi.close();
  }
});

test('/metrics includes the Temporal SDK worker metrics of a worker running in the same process', async () => {
  const worker = await startTestWorker(app);
  try {
    const wf = await http(app, 'POST', '/api/v1/workflows', { token: ws.token, body: {} });
    await http(app, 'POST', `/api/v1/workflows/${wf.body.workflow.id}/deploy`, { token: ws.token });
    const live = await http(app, 'POST', `/api/v1/workflows/${wf.body.workflow.id}/execute`, { token: ws.token, body: {} });
    await waitForRun(app, ws.token, live.body.run.id);

    const text = await (await fetch(`${app.url}/metrics`)).text();
    // Our own metrics stay in the same document.
    expect(text).toMatch(/svc_runs\{status="succeeded",trigger="api"\} [1-9]/);
    expect(text).toMatch(/temporal_worker_task_slots_available\{[^}]*task_queue="workflow-runs"[^}]*\} \d+/);
    expect(text).toMatch(/temporal_workflow_completed_total\{[^}]*task_queue="workflow-runs"[^}]*\} [1-9]/);
    expect(text).toMatch(/temporal_workflow_task_execution_latency_bucket\{/);
  } finally {
    await worker.stop();
  }
});
