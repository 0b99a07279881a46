/** What the run workflow does with a graph: branches, merges, retries, error paths, actions and child runs. */
import { createWorkspace, eventually, http, testPayloadCodec, waitForRun } from '../../support/harness';
import { runWorkflow, useTestStack, type WorkflowBody } from '../../kit';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { testEnv } from '../../support/env';
import { startFakeServer } from '../../support/fakeServer';
import { closedHistory } from '../../support/temporalHistory';

const stack = useTestStack();

const deployAndRun = (graph: WorkflowBody, input: unknown = {}) => runWorkflow(stack, graph, input);
const stepOf = (run: { steps: Array<{ nodeId: string }> }, nodeId: string) => run.steps.find((s) => s.nodeId === nodeId) as any;

test('parallel branches run and a merge receives an object keyed by predecessor id', async () => {
  const { run } = await deployAndRun(
    {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'a', type: 'transform', config: { expression: 'x + 1' } },
        { id: 'b', type: 'transform', config: { expression: 'x * 10' } },
        { id: 'join', type: 'merge', config: {} },
        { id: 'sum', type: 'transform', config: { expression: 'a + b' } },
      ],
      edges: [
        { source: 'start', target: 'a' },
        { source: 'start', target: 'b' },
        { source: 'a', target: 'join' },
        { source: 'b', target: 'join' },
        { source: 'join', target: 'sum' },
      ],
    },
    { x: 2 },
  );
  expect(run.status).toBe('succeeded');
  expect(stepOf(run, 'join').output).toEqual({ a: 3, b: 20 });
  expect(run.output).toBe(23);
});

test('switch routes by case handle with a default; expressions see $trigger and $nodes', async () => {
  const { run } = await deployAndRun(
    {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        {
          id: 'route',
          type: 'switch',
          config: {
            expression: 'kind',
            cases: [
              { value: 'a', handle: 'isA' },
              { value: 'b', handle: 'isB' },
            ],
          },
        },
        { id: 'onA', type: 'transform', config: { expression: '"A"' } },
        { id: 'onB', type: 'transform', config: { expression: '{ "kind": $trigger.kind, "seen": $nodes.start.kind }' } },
        { id: 'other', type: 'transform', config: { expression: '"other"' } },
      ],
      edges: [
        { source: 'start', target: 'route' },
        { source: 'route', target: 'onA', sourceHandle: 'isA' },
        { source: 'route', target: 'onB', sourceHandle: 'isB' },
        { source: 'route', target: 'other', sourceHandle: 'default' },
      ],
    },
    { kind: 'b' },
  );
  expect(run.output).toEqual({ kind: 'b', seen: 'b' });
  expect(stepOf(run, 'onA').status).toBe('skipped');
  expect(stepOf(run, 'other').status).toBe('skipped');
});

test('an http node calls the service for real; per-node retry recovers from 5xx; costCredits counts actions', async () => {
  const service = await startFakeServer((_req, count) =>
    count < 3 ? { status: 503, body: { error: 'busy' } } : { body: { hello: 'world' } },
  );
  try {
    const { run } = await deployAndRun(
      {
        nodes: [
          { id: 'start', type: 'start', config: {} },
          {
            id: 'call',
            type: 'http',
            config: { method: 'POST', url: `${service.url}/things`, body: { id: '=id' } },
            retry: { maxAttempts: 3, backoffSeconds: 0.05 },
          },
        ],
        edges: [{ source: 'start', target: 'call' }],
      },
      { id: 7 },
    );
    expect(run.status).toBe('succeeded');
    expect(service.requests).toHaveLength(3);
    expect(JSON.parse(service.requests[0].body)).toEqual({ id: 7 });
    expect(stepOf(run, 'call')).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect(run.output).toMatchObject({ status: 200, body: { hello: 'world' } });
    expect(run.costCredits).toBe(1);
  } finally {
    await service.close();
  }
});

test('code nodes and safe-method http nodes run as local activities; other http calls as regular activities', async () => {
  const service = await startFakeServer((req, count) => (req.method === 'GET' && count === 1 ? { status: 503 } : {}));
  try {
    const { run } = await deployAndRun({
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'compute', type: 'code', config: { source: 'return { n: 41 + 1 };' } },
        {
          id: 'read',
          type: 'http',
          config: { method: 'GET', url: `${service.url}/items` },
          retry: { maxAttempts: 2, backoffSeconds: 0.05 },
        },
        { id: 'peek', type: 'http', config: { method: 'HEAD', url: `${service.url}/items` } },
        { id: 'write', type: 'http', config: { method: 'PUT', url: `${service.url}/items/1`, body: { n: '=$nodes.compute.n' } } },
      ],
      edges: [
        { source: 'start', target: 'compute' },
        { source: 'compute', target: 'read' },
        { source: 'read', target: 'peek' },
        { source: 'peek', target: 'write' },
      ],
    });
    expect({ status: run.status, error: run.error }).toMatchObject({ status: 'succeeded' });
    // A local activity keeps its node's retry policy.
    expect(stepOf(run, 'read')).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(JSON.parse(service.requests.find((r) => r.method === 'PUT')!.body)).toEqual({ n: 42 });

    const events = (await closedHistory(stack.app.deps.temporal.client, run.id)).events ?? [];
    const scheduled = events
      .filter((e) => e.activityTaskScheduledEventAttributes)
      .map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name);
    const markers = events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
    // Only the PUT went through the server's task queue; code, GET and HEAD ran in the workflow task.
    expect(scheduled).toEqual(['httpNode']);
    // codeNode, httpNode (GET), httpNode (HEAD) and the projection writes.
    expect(markers).toBeGreaterThanOrEqual(3);
  } finally {
    await service.close();
  }
});

test('a run whose local actions span several projection writes replays deterministically from its history', async () => {
  // 60 ms per call: the 250 ms write interval falls between steps, so whether a step is followed
  // by a write depends on workflow time, which replay must reproduce exactly.
  const service = await startFakeServer(() => ({ delayMs: 60 }));
  try {
    const nodes: object[] = [{ id: 'start', type: 'start', config: {} }];
    const edges: object[] = [];
    for (let i = 1; i <= 12; i++) {
      nodes.push({ id: `get${i}`, type: 'http', config: { method: 'GET', url: `${service.url}/items/${i}` } });
      edges.push({ source: i === 1 ? 'start' : `get${i - 1}`, target: `get${i}` });
    }
    const { run } = await deployAndRun({ nodes, edges });
    expect(run.status).toBe('succeeded');
    expect(run.steps.filter((s: { status: string }) => s.status === 'succeeded')).toHaveLength(13);

    const history = await closedHistory(stack.app.deps.temporal.client, run.id);
    const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
    // 12 calls, the first and last writes, and at least one write in between.
    expect(markers).toBeGreaterThan(14);
    await Worker.runReplayHistory(
      { workflowBundle: { code: await readFile(testEnv('workflowBundle'), 'utf8') }, dataConverter: { payloadCodecs: [testPayloadCodec] } },
      history,
      run.id,
    );
  } finally {
    await service.close();
  }
});

test('onError: stop fails the run, continue passes the error on, branch follows the error handle', async () => {
  const failing = (onError?: string) => ({ id: 'boom', type: 'fail', config: { message: '="bad " & v' }, ...(onError ? { onError } : {}) });
  const stopped = await deployAndRun(
    {
      nodes: [{ id: 'start', type: 'start', config: {} }, failing(), { id: 'after', type: 'transform', config: { expression: '1' } }],
      edges: [
        { source: 'start', target: 'boom' },
        { source: 'boom', target: 'after' },
      ],
    },
    { v: 'x' },
  );
  expect(stopped.run).toMatchObject({ status: 'failed', error: 'bad x', errorNodeId: 'boom' });
  expect(stepOf(stopped.run, 'boom')).toMatchObject({ status: 'failed', error: 'bad x' });
  // The run's row is written just before the workflow's last task completes: wait for Temporal's close.
  const handle = stack.app.deps.temporal.client.workflow.getHandle(stopped.run.id);
  const description = await eventually(
    () => handle.describe(),
    (d) => d.status.name !== 'RUNNING',
  );
  expect(description.status.name).toBe('FAILED');

  const continued = await deployAndRun(
    {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        failing('continue'),
        { id: 'after', type: 'transform', config: { expression: 'error.message' } },
      ],
      edges: [
        { source: 'start', target: 'boom' },
        { source: 'boom', target: 'after' },
      ],
    },
    { v: 'y' },
  );
  expect(continued.run).toMatchObject({ status: 'succeeded', output: 'bad y' });

  const branched = await deployAndRun(
    {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        failing('branch'),
        { id: 'ok', type: 'transform', config: { expression: '"ok"' } },
        { id: 'handler', type: 'transform', config: { expression: '"handled: " & error.message' } },
      ],
      edges: [
        { source: 'start', target: 'boom' },
        { source: 'boom', target: 'ok' },
        { source: 'boom', target: 'handler', sourceHandle: 'error' },
      ],
    },
    { v: 'z' },
  );
  expect(branched.run).toMatchObject({ status: 'succeeded', output: 'handled: bad z' });
  expect(stepOf(branched.run, 'ok').status).toBe('skipped');
});

test('a code node runs in the sandbox inside a real run', async () => {
  const { run } = await deployAndRun(
    {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        {
          id: 'fib',
          type: 'code',
          config: {
            source:
              'const f = (n) => n < 2 ? n : f(n - 1) + f(n - 2); console.log("computing"); return { fib: f(input.n), env: typeof process };',
          },
        },
      ],
      edges: [{ source: 'start', target: 'fib' }],
    },
    { n: 10 },
  );
  expect(run.status).toBe('succeeded');
  expect(run.output).toEqual({ fib: 55, env: 'undefined' });
  expect(run.logs.map((l: { message: string }) => l.message)).toContain('computing');
});

test('a subworkflow runs as a child workflow whose run is linked to its parent', async () => {
  const child = await http(stack.app, 'POST', '/api/v1/workflows', {
    token: stack.ws.token,
    body: {
      name: 'Child',
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'inc', type: 'transform', config: { expression: '{ "v": v + 1 }' } },
      ],
      edges: [{ source: 'start', target: 'inc' }],
    },
  });
  await http(stack.app, 'POST', `/api/v1/workflows/${child.body.workflow.id}/deploy`, { token: stack.ws.token });
  const { run } = await deployAndRun(
    {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'sub', type: 'subworkflow', config: { workflowId: child.body.workflow.id, input: '={ "v": v * 2 }' } },
      ],
      edges: [{ source: 'start', target: 'sub' }],
    },
    { v: 5 },
  );
  expect(run.status).toBe('succeeded');
  expect(run.output).toEqual({ v: 11 });
  const children = await http(stack.app, 'GET', `/api/v1/runs?workflowId=${child.body.workflow.id}`, { token: stack.ws.token });
  // The list finds the child by its parent (summaries); the run itself carries input and output.
  const listed = children.body.runs.find((r: { parentRunId: string }) => r.parentRunId === run.id);
  expect(listed).toMatchObject({ status: 'succeeded', parentNodeId: 'sub' });
  const childRun = (await http(stack.app, 'GET', `/api/v1/runs/${listed.id}`, { token: stack.ws.token })).body.run;
  expect(childRun).toMatchObject({ status: 'succeeded', parentNodeId: 'sub', input: { v: 10 }, output: { v: 11 } });
  // An operator finds the child execution by workspace and by its workflow's name.
  const described = await stack.app.deps.temporal.client.workflow.getHandle(listed.id).describe();
  expect(described.searchAttributes).toMatchObject({ WorkspaceId: [stack.ws.workspaceId], SvcName: ['Child'] });
  // Both runs get a workflow task timeout that means "hung", not Temporal's 10 s that a loaded
  // machine exceeds on replay (temporal/shared.ts RUN_WORKFLOW_TASK_TIMEOUT).
  const parentDescribed = await stack.app.deps.temporal.client.workflow.getHandle(run.id).describe();
  for (const d of [described, parentDescribed]) {
    expect(Number(d.raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds)).toBe(60);
  }
});

test('a subworkflow naming a workflow of another workspace fails the node without running it', async () => {
  const other = await createWorkspace(stack.app, 'Other');
  const foreign = await http(stack.app, 'POST', '/api/v1/workflows', { token: other.token, body: {} });
  await http(stack.app, 'POST', `/api/v1/workflows/${foreign.body.workflow.id}/deploy`, { token: other.token });
  const { run } = await deployAndRun({
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'sub', type: 'subworkflow', config: { workflowId: foreign.body.workflow.id } },
    ],
    edges: [{ source: 'start', target: 'sub' }],
  });
  expect(run.status).toBe('failed');
  expect(run.error).toMatch(/does not exist in this workspace/);
});

// Durable actions share the 250 ms projection interval of local ones (patch `coalesced-progress-v1`):
// a run no longer pays one PostgreSQL write per durable step, still ends with every step in its
// projection, and runs started before the change replay as they ran.
const replay = async (history: temporal.api.history.v1.IHistory, workflowId: string) =>
  Worker.runReplayHistory(
    { workflowBundle: { code: await readFile(testEnv('workflowBundle'), 'utf8') }, dataConverter: { payloadCodecs: [testPayloadCodec] } },
    history,
    workflowId,
  );

const projectionWrites = (history: temporal.api.history.v1.IHistory) =>
  (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length;
const patches = (history: temporal.api.history.v1.IHistory) =>
  (history.events ?? [])
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .flatMap((e) =>
      Object.values(e.markerRecordedEventAttributes!.details ?? {}).flatMap((p) =>
        (p.payloads ?? []).map((x) => Buffer.from(x.data ?? []).toString()),
      ),
    );

test('twelve durable steps end fully projected with fewer writes than steps, and replay', async () => {
  const service = await startFakeServer(() => ({}));
  try {
    const nodes: object[] = [{ id: 'start', type: 'start', config: {} }];
    const edges: object[] = [];
    for (let i = 1; i <= 12; i++) {
      nodes.push({ id: `post${i}`, type: 'http', config: { method: 'POST', url: `${service.url}/items`, body: { i } } });
      edges.push({ source: i === 1 ? 'start' : `post${i - 1}`, target: `post${i}` });
    }
    const created = await http(stack.app, 'POST', '/api/v1/workflows', { token: stack.ws.token, body: { nodes, edges } });
    expect(created.status).toBe(201);
    const id = created.body.workflow.id;
    expect((await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token })).status).toBe(200);
    const exec = await http(stack.app, 'POST', `/api/v1/workflows/${id}/execute`, { token: stack.ws.token, body: { input: {} } });
    const run = await waitForRun(stack.app, stack.ws.token, exec.body.run.id);
    expect(run.status).toBe('succeeded');
    expect(run.steps.filter((s: { status: string }) => s.status === 'succeeded')).toHaveLength(13);
    expect(service.requests.filter((r) => r.method === 'POST')).toHaveLength(12);

    const history = await closedHistory(stack.app.deps.temporal.client, run.id);
    expect(patches(history).join(' ')).toContain('coalesced-progress-v1');
    // Before: the first write, one after each of the 12 steps, the last write (14). Now a write
    // follows a step only once 250 ms of workflow time have passed since the previous one.
    expect(projectionWrites(history)).toBeLessThan(14);
    await replay(history, run.id);
  } finally {
    await service.close();
  }
});

test('a run recorded before the change (a write after every durable step) replays deterministically', async () => {
  const dir = path.join(__dirname, '../../fixtures/histories');
  const meta = JSON.parse(await readFile(path.join(dir, 'durable-steps-before-coalescing.json'), 'utf8')) as { workflowId: string };
  const history = temporal.api.history.v1.History.decode(await readFile(path.join(dir, 'durable-steps-before-coalescing.pb')));
  expect(patches(history).join(' ')).not.toContain('coalesced-progress-v1');
  // 6 durable steps: the first write, one after each step and the last.
  expect(projectionWrites(history)).toBe(8);
  await replay(history, meta.workflowId);
});
