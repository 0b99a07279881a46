import { startTestApp, startTestWorker } from '../../support/harness';
import { client, waitRun, useTestStack, type QueuedReceipt } from '../../kit';

/** No worker beside the app: the last test starts one of its own. */
const stack = useTestStack({ worker: false });

test('/metrics exposes HTTP requests by route template and status, latency, runs and outbox depth', async () => {
  const { app } = stack;
  await stack.api.get('/api/v1/workspaces');
  await stack.as().get('/api/v1/workspaces');
  const wf = await stack.api.workflows.create({});
  await stack.api.post(`/api/v1/workflows/${wf.body.workflow.id}/execute`, { target: 'candidate' });

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
  const withUi = await startTestApp({ temporal: { ...stack.app.deps.config.temporal, uiUrl: 'http://ui.example.test:8233/' } });
  try {
    const api = client(withUi, stack.ws.token);
    const wf = await api.workflows.create({});
    await api.workflows.deploy(wf.body.workflow.id);
    const live = await api.post<QueuedReceipt>(`/api/v1/workflows/${wf.body.workflow.id}/execute`, {});
    expect(live.body.links.temporal).toBe(`http://ui.example.test:8233/namespaces/default/workflows/${live.body.run.id}`);
    const fetched = await api.runs.get(live.body.run.id);
    expect(fetched.body.links.temporal).toBe(live.body.links.temporal);
    const dry = await api.post<QueuedReceipt>(`/api/v1/workflows/${wf.body.workflow.id}/execute`, { target: 'candidate' });
    expect(dry.body.links.temporal).toBeUndefined();
    // Without a configured UI there is no link.
    const plain = await stack.api.runs.get(live.body.run.id);
    expect(plain.body.links.temporal).toBeUndefined();
  } finally {
    await withUi.close();
  }
});

test('/metrics includes the Temporal SDK worker metrics of a worker running in the same process', async () => {
  const { app } = stack;
  const worker = await startTestWorker(app);
  try {
    const wf = await stack.api.workflows.create({});
    await stack.api.workflows.deploy(wf.body.workflow.id);
    const live = await stack.api.post<QueuedReceipt>(`/api/v1/workflows/${wf.body.workflow.id}/execute`, {});
    await waitRun(stack, live.body.run.id);

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
