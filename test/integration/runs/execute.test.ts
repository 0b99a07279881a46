/** POST /workflows/{id}/execute: the spec's rules 1 to 4, dry runs, idempotency and refused starts. */
import { startTestApp } from '../../support/harness';
import { addUserWithKey, expectStatus, http, useTestStack, waitRun, type QueuedReceipt, type WorkflowBody } from '../../kit';
import { startFakeServer } from '../../support/fakeServer';
import { RunSchema } from '../../../db/entities';

let outside: Awaited<ReturnType<typeof startFakeServer>>;

const stack = useTestStack();
beforeAll(async () => {
  outside = await startFakeServer();
});
stack.beforeClose(async () => {
  await outside?.close();
});

const doubler = {
  nodes: [
    { id: 'start', type: 'start', config: {} },
    { id: 'double', type: 'transform', config: { expression: '{ "n": n * 2 }' } },
    { id: 'check', type: 'condition', config: { expression: 'n > 5' } },
    { id: 'big', type: 'log', config: { level: 'info', message: '="big " & $string(n)' } },
    { id: 'small', type: 'log', config: { level: 'warn', message: 'small' } },
  ],
  edges: [
    { source: 'start', target: 'double' },
    { source: 'double', target: 'check' },
    { source: 'check', target: 'big', sourceHandle: 'true' },
    { source: 'check', target: 'small', sourceHandle: 'false' },
  ],
};

async function createWorkflow(body: WorkflowBody, token = stack.ws.token): Promise<string> {
  return expectStatus(await stack.as(token).workflows.create(body), 201, 'create workflow').body.workflow.id;
}
/** The execute answer: queued (202) or a dry run (201) with the full run; on a refusal, its `error`. */
type ExecuteAnswer = Omit<QueuedReceipt, 'queued'> & { queued: boolean; error?: string; runId?: string };
const execute = (id: string, body: object, opts: { token?: string; key?: string } = {}) =>
  http<ExecuteAnswer>(stack.app, 'POST', `/api/v1/workflows/${id}/execute`, {
    token: opts.token ?? stack.ws.token,
    body,
    headers: opts.key ? { 'idempotency-key': opts.key } : undefined,
  });

test('a deployed workflow runs on Temporal: 202, then steps, logs and output', async () => {
  const id = await createWorkflow({ name: 'Doubler', ...doubler });
  expect((await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token })).status).toBe(200);
  const exec = await execute(id, { input: { n: 4 } });
  expect(exec.status).toBe(202);
  expect(exec.body).toMatchObject({
    queued: true,
    execution: { workflowId: exec.body.run.id, taskQueue: 'workflow-runs', mode: 'temporal' },
  });
  expect(exec.body.statusUrl).toBe(`${stack.app.url}/api/v1/workflows/${id}/status?runId=${exec.body.run.id}`);
  expect(exec.body.cancelUrl).toBe(`${stack.app.url}/api/v1/runs/${exec.body.run.id}/cancel`);
  expect(exec.body.run).toMatchObject({
    status: 'queued',
    trigger: 'api',
    workflowId: id,
    executionEvidence: { requestedTarget: 'active', resourceMode: 'workspace-live' },
  });

  const run = await waitRun(stack, exec.body.run.id);
  expect(run.status).toBe('succeeded');
  expect(run.output).toEqual({ n: 8 });
  const steps = Object.fromEntries(run.steps.map((s: { nodeId: string; status: string }) => [s.nodeId, s.status]));
  expect(steps).toEqual({ start: 'succeeded', double: 'succeeded', check: 'succeeded', big: 'succeeded', small: 'skipped' });
  expect(run.steps.find((s: { nodeId: string }) => s.nodeId === 'double')).toMatchObject({ input: { n: 4 }, output: { n: 8 } });
  expect(run.logs.map((l: { message: string }) => l.message)).toContain('big 8');
  expect(run.durationMs).toEqual(expect.any(Number));

  // The Temporal execution carries the business id and the search attributes operators filter by.
  // The run row says succeeded just before the workflow returns: wait for Temporal's own end.
  const handle = stack.app.deps.temporal.client.workflow.getHandle(run.id);
  await handle.result();
  const description = await handle.describe();
  expect(description.status.name).toBe('COMPLETED');
  expect(description.searchAttributes).toMatchObject({ WorkspaceId: [stack.ws.workspaceId], SvcWorkflowId: [id], SvcTrigger: ['api'] });
});

test('target active on a workflow that was never deployed is a clear 400', async () => {
  const id = await createWorkflow(doubler);
  const res = await execute(id, { input: { n: 1 } });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatch(/no deployed version/);
  expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId: id })).toBe(0);
});

test('candidate defaults to a dry run: pure nodes for real, side effects simulated, 201 with the finished run', async () => {
  const id = await createWorkflow({
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'call', type: 'http', config: { method: 'POST', url: `${outside.url}/hook`, body: { n: '=n' } } },
      { id: 'shape', type: 'transform', config: { expression: '$nodes.call.request.body' } },
    ],
    edges: [
      { source: 'start', target: 'call' },
      { source: 'call', target: 'shape' },
    ],
  });
  const before = outside.requests.length;
  const res = await execute(id, { target: 'candidate', input: { n: 3 } });
  expect(res.status).toBe(201);
  expect(res.body.queued).toBe(false);
  expect(res.body.run).toMatchObject({
    status: 'succeeded',
    dryRun: true,
    executionEvidence: { requestedTarget: 'candidate', resourceMode: 'simulated' },
  });
  expect(res.body.run.output).toEqual({ n: 3 });
  expect(res.body.run.steps.find((s) => s.nodeId === 'call')?.output).toMatchObject({ simulated: true });
  expect(outside.requests.length).toBe(before); // no outbound call
});

test('live candidate execution needs dryRun false, confirm true and the matching expectedVersionId', async () => {
  const id = await createWorkflow(doubler);
  const wf = (await stack.api.workflows.get(id)).body.workflow;
  expect(wf.candidateVersionId).toMatch(/^cand_/);

  const noConfirm = await execute(id, { target: 'candidate', dryRun: false, expectedVersionId: wf.candidateVersionId, input: { n: 1 } });
  expect(noConfirm.status).toBe(400);
  const noVersion = await execute(id, { target: 'candidate', dryRun: false, confirm: true, input: { n: 1 } });
  expect(noVersion.status).toBe(400);
  const stale = await execute(id, { target: 'candidate', dryRun: false, confirm: true, expectedVersionId: 'cand_stale', input: { n: 1 } });
  expect(stale.status).toBe(409);

  const live = await execute(id, {
    target: 'candidate',
    dryRun: false,
    confirm: true,
    expectedVersionId: wf.candidateVersionId,
    input: { n: 1 },
  });
  expect(live.status).toBe(202);
  const run = await waitRun(stack, live.body.run.id);
  expect(run).toMatchObject({
    status: 'succeeded',
    versionId: wf.candidateVersionId,
    executionEvidence: { requestedTarget: 'candidate', resourceMode: 'workspace-live' },
  });
  // Testing a candidate never changes the active version.
  const after = (await stack.api.workflows.get(id)).body.workflow;
  expect(after.activeVersionId).toBeNull();
});

test('startNodeId starts the run at that node; an unknown node is a 400', async () => {
  const id = await createWorkflow(doubler);
  await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token });
  const res = await execute(id, { startNodeId: 'check', input: { n: 1 } });
  expect(res.status).toBe(202);
  const run = await waitRun(stack, res.body.run.id);
  expect(run.steps.map((s: { nodeId: string }) => s.nodeId)).not.toContain('double');
  expect(run.output).toEqual({ n: 1 });
  expect((await execute(id, { startNodeId: 'nope' })).status).toBe(400);
});

test('Idempotency-Key: a replay returns the same run with Idempotency-Replayed; another body or principal is 409', async () => {
  const id = await createWorkflow(doubler);
  await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token });
  const first = await execute(id, { input: { n: 2 } }, { key: 'exec-1' });
  expect(first.status).toBe(202);
  const replay = await execute(id, { input: { n: 2 } }, { key: 'exec-1' });
  expect(replay.status).toBe(202);
  expect(replay.headers.get('idempotency-replayed')).toBe('true');
  expect(replay.body.run.id).toBe(first.body.run.id);
  expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId: id })).toBe(1);

  expect((await execute(id, { input: { n: 3 } }, { key: 'exec-1' })).status).toBe(409);
  const other = await addUserWithKey(stack.app, stack.ws, 'member');
  expect((await execute(id, { input: { n: 2 } }, { key: 'exec-1', token: other.token })).status).toBe(409);
});

test('endUser and message are refused from anything but a product gateway key', async () => {
  const id = await createWorkflow(doubler);
  await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token });
  const res = await execute(id, { endUser: { externalId: 'u1' }, message: 'hi' });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatch(/gateway/);
});

test('viewers and personal keys cannot execute', async () => {
  const id = await createWorkflow(doubler);
  await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token });
  const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
  expect((await execute(id, {}, { token: viewer.token })).status).toBe(403);
  const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
  const res = await execute(id, {}, { token: personal.token });
  expect(res.status).toBe(403);
  expect(res.body).toEqual({ error: 'A workspace API key is required.' });
});

test('a start that Temporal refuses leaves the run canceled with the reason, and answers 503', async () => {
  const id = await createWorkflow(doubler);
  await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token });
  // An app whose Temporal namespace does not exist: every start is refused by the server.
  const refusing = await startTestApp({ temporal: { ...stack.app.deps.config.temporal, namespace: 'no-such-namespace' } }, undefined, {
    namespace: 'no-such-namespace',
  });
  try {
    const res = await http<ExecuteAnswer>(refusing, 'POST', `/api/v1/workflows/${id}/execute`, {
      token: stack.ws.token,
      body: { input: { n: 1 } },
    });
    expect(res.status).toBe(503);
    const run = await stack.app.orm.em.fork().findOneOrFail(RunSchema, { id: res.body.runId });
    expect(run.status).toBe('canceled');
    expect(run.cancelReason).toMatch(/refused/);
  } finally {
    await refusing.close();
  }
});
