/**
 * End-user gateway keys (execute rule 4): they execute their allowed workflows for an end
 * user, read and cancel only their own runs under /api/v1/end-users/runs, and see only the
 * end-user run summary; every other v1 route refuses them.
 */
import {
  createWorkspace,
  deployWorkflow,
  http,
  signInCookie,
  useTestStack,
  waitRun,
  type ApiError,
  type TestApp,
  type WorkflowBody,
  type WorkspaceFixture,
} from '../../kit';
import { startTestApp } from '../../support/harness';
import { RunSchema } from '../../../db/entities';
import type { z } from 'zod';
import type { endUserExecuteAnswer, endUserRunSchema } from '../../../api/routes/endUsers';

const stack = useTestStack({ config: { endUsersEnabled: true } });
let flow: { echo: string; approval: string; notAllowed: string };
let gateway: string;

const WORKSPACE_KEY_REQUIRED = { error: 'A workspace API key is required.' };
const GATEWAY_KEY_REQUIRED = { error: 'An end-user gateway API key is required.' };
const TERMINAL = ['succeeded', 'failed', 'canceled'];
const END_USER_RUNS = '/api/v1/end-users/runs';

const echoGraph = {
  nodes: [
    { id: 'start', type: 'start', config: {} },
    { id: 'reply', type: 'transform', config: { expression: '{ "reply": "echo " & message, "user": endUser.externalId, "plan": plan }' } },
  ],
  edges: [{ source: 'start', target: 'reply' }],
};
const approvalGraph = {
  nodes: [
    { id: 'start', type: 'start', config: {} },
    { id: 'gate', type: 'approval', config: { prompt: 'Answer this end user?' } },
    { id: 'after', type: 'transform', config: { expression: '"answered"' } },
  ],
  edges: [
    { source: 'start', target: 'gate' },
    { source: 'gate', target: 'after', sourceHandle: 'approved' },
  ],
};

const deployedWorkflow = async (fixture: WorkspaceFixture, graph: WorkflowBody) =>
  (await deployWorkflow({ app: stack.app, ws: fixture }, graph)).workflowId;

/** A gateway key created the way admins create them: through the session key routes. */
async function createGatewayKey(fixture: WorkspaceFixture, allowedWorkflowIds: string[]): Promise<string> {
  const cookie = await signInCookie(stack.app, fixture.ownerEmail, fixture.ownerPassword);
  const res = await http<{ token: string }>(stack.app, 'POST', '/api/api-keys', {
    cookie,
    body: { name: `Gateway ${Math.random()}`, scope: 'end_user_gateway', allowedWorkflowIds },
  });
  expect(res.status).toBe(201);
  return res.body.token;
}

/** The execute answer (a gateway key's; a workspace key's has the same `run.id`), or on a refusal its `error`. */
type ExecuteAnswer = z.infer<typeof endUserExecuteAnswer> & { error?: string };

const execute = (id: string, body: object, opts: { token?: string; key?: string; target?: TestApp } = {}) =>
  http<ExecuteAnswer>(opts.target ?? stack.app, 'POST', `/api/v1/workflows/${id}/execute`, {
    token: opts.token ?? gateway,
    body,
    headers: opts.key ? { 'idempotency-key': opts.key } : undefined,
  });

/** The end-user run summary (its fields are checked by the tests). */
type EndUserRun = z.infer<typeof endUserRunSchema>;
type EndUserRunAnswer = { run: EndUserRun; error?: string };

/** Polls the end-user run route (the gateway key cannot read /api/v1/runs) until `done` holds. */
async function waitForEndUserRun(
  id: string,
  done: (run: EndUserRun) => boolean = (run) => TERMINAL.includes(run.status),
  token = gateway,
): Promise<EndUserRun> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const res = await http<EndUserRunAnswer>(stack.app, 'GET', `${END_USER_RUNS}/${id}`, { token });
    expect(res.status).toBe(200);
    if (done(res.body.run)) return res.body.run;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`end-user run ${id} did not reach the expected state`);
}

beforeAll(async () => {
  flow = {
    echo: await deployedWorkflow(stack.ws, echoGraph),
    approval: await deployedWorkflow(stack.ws, approvalGraph),
    notAllowed: await deployedWorkflow(stack.ws, echoGraph),
  };
  gateway = await createGatewayKey(stack.ws, [flow.echo, flow.approval]);
});

describe('POST /api/v1/workflows/{id}/execute with an end-user gateway key', () => {
  test('an allowed workflow is queued (202) with end-user links, runs with the message, and answers only the summary', async () => {
    const res = await execute(flow.echo, { endUser: { externalId: 'cust-1' }, message: 'hello', input: { plan: 'pro' } });
    expect(res.status).toBe(202);
    const id = res.body.run.id;
    expect(Object.keys(res.body).sort()).toEqual(['cancelUrl', 'queued', 'run', 'statusUrl']);
    expect(res.body).toMatchObject({
      queued: true,
      statusUrl: `${stack.app.url}${END_USER_RUNS}/${id}`,
      cancelUrl: `${stack.app.url}${END_USER_RUNS}/${id}/cancel`,
    });
    expect(Object.keys(res.body.run).sort()).toEqual([
      'active',
      'createdAt',
      'durationMs',
      'endUser',
      'finishedAt',
      'id',
      'output',
      'startedAt',
      'status',
      'workflowId',
    ]);
    expect(res.body.run).toMatchObject({ workflowId: flow.echo, endUser: { externalId: 'cust-1' }, output: null });

    const done = await waitForEndUserRun(id);
    expect(done).toMatchObject({ status: 'succeeded', active: false, output: { reply: 'echo hello', user: 'cust-1', plan: 'pro' } });

    // The workspace sees the run in full: the message and end user are part of its input.
    const full = await waitRun(stack, id);
    expect(full).toMatchObject({
      trigger: 'api',
      input: { plan: 'pro', message: 'hello', endUser: { externalId: 'cust-1' } },
      executionEvidence: { requestedTarget: 'active' },
    });
    const row = await stack.app.orm.em.fork().findOneOrFail(RunSchema, { id });
    expect(row.endUserExternalId).toBe('cust-1');
  });

  test('the caller input cannot override the message or the end user', async () => {
    const res = await execute(flow.echo, {
      endUser: { externalId: 'cust-2' },
      message: 'real',
      input: { message: 'spoofed', endUser: { externalId: 'someone-else' } },
    });
    expect(res.status).toBe(202);
    expect((await waitForEndUserRun(res.body.run.id)).output).toMatchObject({ reply: 'echo real', user: 'cust-2' });
  });

  test('a workflow outside the allowlist is refused like any unreachable workflow (403)', async () => {
    const res = await execute(flow.notAllowed, { endUser: { externalId: 'cust-1' }, message: 'hello' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'API key cannot access this workflow' });
    const other = await createWorkspace(stack.app, 'Other product');
    const foreign = await deployedWorkflow(other, echoGraph);
    expect((await execute(foreign, { endUser: { externalId: 'cust-1' }, message: 'hello' })).status).toBe(403);
  });

  test.each([
    ['no message', { endUser: { externalId: 'cust-1' } }],
    ['a blank message', { endUser: { externalId: 'cust-1' }, message: '   ' }],
    ['no endUser', { message: 'hello' }],
    ['the candidate', { endUser: { externalId: 'cust-1' }, message: 'hello', target: 'candidate' }],
    ['a dry run', { endUser: { externalId: 'cust-1' }, message: 'hello', dryRun: true }],
    ['a destination', { endUser: { externalId: 'cust-1' }, message: 'hello', executionTargetId: 'preview-1' }],
    ['a start node', { endUser: { externalId: 'cust-1' }, message: 'hello', startNodeId: 'reply' }],
    ['a non-object input', { endUser: { externalId: 'cust-1' }, message: 'hello', input: [1, 2] }],
  ])('%s is a 400, and no run is created', async (_case, body) => {
    const before = await stack.app.orm.em.fork().count(RunSchema, { workflowId: flow.echo });
    const res = await execute(flow.echo, body);
    expect(res.status).toBe(400);
    expect(typeof res.body.error).toBe('string');
    expect(await stack.app.orm.em.fork().count(RunSchema, { workflowId: flow.echo })).toBe(before);
  });

  test('a workspace key sending endUser or message still gets 400', async () => {
    for (const body of [{ message: 'hello' }, { endUser: { externalId: 'cust-1' } }]) {
      const res = await execute(flow.echo, body, { token: stack.ws.token });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/gateway/);
    }
  });

  test('the Idempotency-Key fingerprint covers the message: a repeat replays, another message is a 409', async () => {
    const body = { endUser: { externalId: 'cust-3' }, message: 'first' };
    const first = await execute(flow.echo, body, { key: 'end-user-idem-1' });
    expect(first.status).toBe(202);
    const replay = await execute(flow.echo, body, { key: 'end-user-idem-1' });
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.run.id).toBe(first.body.run.id);
    const other = await execute(flow.echo, { ...body, message: 'second' }, { key: 'end-user-idem-1' });
    expect(other.status).toBe(409);
    expect(await stack.app.orm.em.fork().count(RunSchema, { endUserExternalId: 'cust-3' })).toBe(1);
  });

  test('a start the engine refuses answers 503 (end-user runs are never run inline)', async () => {
    const refusing = await startTestApp(
      { endUsersEnabled: true, temporal: { ...stack.app.deps.config.temporal, namespace: 'no-such-namespace' } },
      undefined,
      { namespace: 'no-such-namespace' },
    );
    try {
      const res = await execute(flow.echo, { endUser: { externalId: 'cust-503' }, message: 'hello' }, { target: refusing });
      expect(res.status).toBe(503);
      const row = await stack.app.orm.em.fork().findOneOrFail(RunSchema, { endUserExternalId: 'cust-503' });
      expect(row.status).toBe('canceled');
    } finally {
      await refusing.close();
    }
  });
});

describe('/api/v1/end-users/runs/{id}', () => {
  let waitingRun: string;
  beforeAll(async () => {
    const res = await execute(flow.approval, { endUser: { externalId: 'cust-9' }, message: 'please' });
    expect(res.status).toBe(202);
    waitingRun = res.body.run.id;
    await waitForEndUserRun(waitingRun, (run) => run.status === 'waiting');
  });

  test('the key reads its own run as the summary, without input, steps, logs or waits', async () => {
    const res = await http<EndUserRunAnswer & { cancelUrl: string }>(stack.app, 'GET', `${END_USER_RUNS}/${waitingRun}`, {
      token: gateway,
    });
    expect(res.status).toBe(200);
    expect(res.body.run).toMatchObject({
      id: waitingRun,
      status: 'waiting',
      active: true,
      output: null,
      endUser: { externalId: 'cust-9' },
    });
    for (const field of ['input', 'steps', 'logs', 'waits', 'error', 'versionId', 'executionEvidence'])
      expect(res.body.run).not.toHaveProperty(field);
    expect(res.body.cancelUrl).toBe(`${stack.app.url}${END_USER_RUNS}/${waitingRun}/cancel`);
  });

  test('another gateway key, of this workspace or another, gets 404 for that run and cannot cancel it', async () => {
    const sameWorkspace = await createGatewayKey(stack.ws, [flow.approval]);
    const other = await createWorkspace(stack.app, 'Other product');
    const otherWorkspace = await createGatewayKey(other, [await deployedWorkflow(other, echoGraph)]);
    for (const token of [sameWorkspace, otherWorkspace]) {
      const read = await http(stack.app, 'GET', `${END_USER_RUNS}/${waitingRun}`, { token });
      expect(read.status).toBe(404);
      expect(read.body).toEqual({ error: 'Run not found' });
      expect((await http(stack.app, 'POST', `${END_USER_RUNS}/${waitingRun}/cancel`, { token })).status).toBe(404);
    }
    expect((await http(stack.app, 'GET', `${END_USER_RUNS}/run_does_not_exist`, { token: gateway })).status).toBe(404);
  });

  test('runs not started by the key are 404 even in its workspace', async () => {
    const workspaceRun = await execute(flow.echo, { input: { plan: 'x' } }, { token: stack.ws.token });
    expect(workspaceRun.status).toBe(202);
    expect((await http(stack.app, 'GET', `${END_USER_RUNS}/${workspaceRun.body.run.id}`, { token: gateway })).status).toBe(404);
  });

  test('a workspace key gets 403 on the end-user routes', async () => {
    const read = await http(stack.app, 'GET', `${END_USER_RUNS}/${waitingRun}`, { token: stack.ws.token });
    expect(read.status).toBe(403);
    expect(read.body).toEqual(GATEWAY_KEY_REQUIRED);
    expect((await http(stack.app, 'POST', `${END_USER_RUNS}/${waitingRun}/cancel`, { token: stack.ws.token })).status).toBe(403);
  });

  test('the gateway key gets 403 on the workspace run routes', async () => {
    for (const [method, path] of [
      ['GET', `/api/v1/runs/${waitingRun}`],
      ['POST', `/api/v1/runs/${waitingRun}/cancel`],
      ['GET', '/api/v1/runs'],
      ['GET', `/api/v1/workflows/${flow.approval}/status?runId=${waitingRun}`],
    ]) {
      const res = await http(stack.app, method, path, { token: gateway });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(WORKSPACE_KEY_REQUIRED);
    }
  });

  test('the key cancels its own run; a second cancel is a 409', async () => {
    const res = await http<EndUserRunAnswer>(stack.app, 'POST', `${END_USER_RUNS}/${waitingRun}/cancel`, { token: gateway });
    expect(res.status).toBe(200);
    expect(res.body.run).toMatchObject({ id: waitingRun, status: 'canceled', active: false, output: null });
    expect((await stack.api.runs.get(waitingRun)).body.run.status).toBe('canceled');
    const again = await http(stack.app, 'POST', `${END_USER_RUNS}/${waitingRun}/cancel`, { token: gateway });
    expect(again.status).toBe(409);
  });

  test('gateway keys are refused everywhere while the deployment has end users disabled', async () => {
    const disabled = await startTestApp();
    try {
      const read = await http<ApiError>(disabled, 'GET', `${END_USER_RUNS}/${waitingRun}`, { token: gateway });
      expect(read.status).toBe(403);
      expect(read.body.error).toMatch(/not enabled/);
      expect((await execute(flow.echo, { endUser: { externalId: 'cust-1' }, message: 'hello' }, { target: disabled })).status).toBe(403);
    } finally {
      await disabled.close();
    }
  });
});
