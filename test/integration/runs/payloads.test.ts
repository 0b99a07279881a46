/**
 * Large run payloads (issue 10, item 6) over real HTTP, PostgreSQL and Temporal:
 * - lists (GET /api/v1/runs, the session's GET /api/logs) return summaries, never input,
 *   output, steps or logs, so runs with megabytes of output keep the list small;
 * - GET /api/v1/runs/{id} caps each user value at 256 KiB with a marker whose href returns the
 *   whole value (workspace-scoped, full projection only);
 * - a node output over 1.5 MB fails the node with a size message before it can reach a
 *   Temporal payload (2 MB limit), and Temporal's execution status agrees with the run row.
 */
import {
  addUserWithKey,
  chain,
  createWorkspace,
  deployWorkflow,
  executeWorkflow,
  http,
  node,
  signInCookie,
  useTestStack,
  waitRun,
  type ApiError,
  type RunSummary,
  type WorkspaceFixture,
} from '../../kit';
import type { z } from 'zod';
import type { runValueSchema, truncatedValueSchema } from '../../../api/schemas/runs';

type TruncatedValue = z.infer<typeof truncatedValueSchema>;
type RunValue = z.infer<typeof runValueSchema>;

/** Narrows a capped value the test expects to be a marker (fails the test when it is not). */
function marker(value: unknown): TruncatedValue {
  expect(value).toMatchObject({ truncated: true, href: expect.any(String) });
  return value as TruncatedValue;
}

const stack = useTestStack({ workspaceName: 'Payloads workspace' });
let other: WorkspaceFixture;

/** 700,000 characters: the input is about 0.7 MB, a transform doubling it about 1.4 MB (under 1.5 MiB). */
const BLOB = 'x'.repeat(700_000);
const LARGE_RUNS = 3;

const deployed = async (name: string, graph: ReturnType<typeof chain>) => (await deployWorkflow(stack, graph, { name })).workflowId;
const execute = (workflowId: string, input: unknown) => executeWorkflow(stack, workflowId, input);

/** Polls Temporal until the execution is closed; returns its status name. */
async function temporalStatus(runId: string): Promise<string> {
  const handle = stack.app.deps.temporal.client.workflow.getHandle(runId);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const name = (await handle.describe()).status.name;
    if (name !== 'RUNNING' || Date.now() > deadline) return name;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const pathOf = (href: string) => new URL(href).pathname;

let bigWorkflow: string;
const bigRuns: string[] = [];

beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other payloads workspace');
  bigWorkflow = await deployed('Doubler', chain(node.transform('double', '{ "a": $, "b": $ }')));
  for (let i = 0; i < LARGE_RUNS; i++) bigRuns.push(await execute(bigWorkflow, { blob: BLOB, i }));
  for (const id of bigRuns) expect((await waitRun(stack, id)).status).toBe('succeeded');
}, 120_000);

describe('lists return run summaries', () => {
  const expectSummary = (r: RunSummary) => {
    for (const field of ['input', 'output', 'steps', 'logs', 'waits', 'executionEvidence']) expect(r).not.toHaveProperty(field);
    expect(r).toMatchObject({
      workflowId: bigWorkflow,
      workflowName: 'Doubler',
      status: 'succeeded',
      active: false,
      stepCount: 2,
      error: null,
      dryRun: false,
    });
    expect(r.logCount).toBeGreaterThanOrEqual(2);
  };

  test('GET /api/v1/runs of runs with 1.4 MB outputs is a few kilobytes of summaries', async () => {
    const res = await stack.api.runs.list(`?workflowId=${bigWorkflow}&limit=200`);
    expect(res.status).toBe(200);
    expect(res.body.runs.map((r) => r.id).sort()).toEqual([...bigRuns].sort());
    res.body.runs.forEach(expectSummary);
    // Before: every run came with its input, output and steps (over 4 MB each here).
    expect(res.text.length).toBeLessThan(10_000);
  });

  test('the session logs list returns the same summaries', async () => {
    const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword, stack.ws.workspaceId);
    const res = await http<{ runs: RunSummary[] }>(stack.app, 'GET', `/api/logs?workflowId=${bigWorkflow}`, { cookie });
    expect(res.status).toBe(200);
    expect(res.body.runs).toHaveLength(LARGE_RUNS);
    res.body.runs.forEach(expectSummary);
    expect(res.text.length).toBeLessThan(10_000);
  });

  test('a viewer gets safe summaries: no error, the workspace-safe.v1 marker', async () => {
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    const res = await http<{ runs: Array<Record<string, unknown>> }>(stack.app, 'GET', `/api/v1/runs?workflowId=${bigWorkflow}`, {
      token: viewer.token,
    });
    expect(res.status).toBe(200);
    for (const r of res.body.runs) {
      expect(r).not.toHaveProperty('error');
      expect(r.redaction).toMatchObject({ applied: true, contractVersion: 'workspace-safe.v1' });
      expect(r.stepCount).toBe(2);
    }
  });
});

describe('GET /api/v1/runs/{id} caps large values', () => {
  test('input, output and step values over 256 KiB become markers whose href returns the whole value', async () => {
    const id = bigRuns[0];
    const res = await stack.api.runs.get(id);
    expect(res.status).toBe(200);
    const run = res.body.run;
    const base = `${stack.app.url}/api/v1/runs/${id}`;
    const fullInput = { blob: BLOB, i: 0 };
    const fullOutput = { a: fullInput, b: fullInput };
    // PostgreSQL's jsonb may reorder keys: sizes and previews are of the stored JSON text.
    expect(run.input).toEqual({
      truncated: true,
      bytes: JSON.stringify(fullInput).length,
      preview: expect.any(String),
      href: `${base}/input`,
    });
    const input = marker(run.input);
    expect(input.preview).toHaveLength(1024);
    expect(run.output).toMatchObject({ truncated: true, bytes: JSON.stringify(fullOutput).length, href: `${base}/output` });
    const step = run.steps.find((s) => s.nodeId === 'double');
    expect(step?.input).toMatchObject({ truncated: true, href: `${base}/steps/double/input` });
    expect(step?.output).toMatchObject({ truncated: true, href: `${base}/steps/double/output` });
    expect(res.text.length).toBeLessThan(20_000);

    const output = await http(stack.app, 'GET', pathOf(marker(run.output).href), { token: stack.ws.token });
    expect(output.status).toBe(200);
    expect(output.body).toEqual({ runId: id, nodeId: null, field: 'output', bytes: JSON.stringify(fullOutput).length, value: fullOutput });
    const stepOutput = await http(stack.app, 'GET', pathOf(marker(step?.output).href), { token: stack.ws.token });
    expect(stepOutput.status).toBe(200);
    expect(stepOutput.body).toMatchObject({ runId: id, nodeId: 'double', field: 'output', value: fullOutput });
    const whole = await http<RunValue>(stack.app, 'GET', pathOf(input.href), { token: stack.ws.token });
    expect(whole.body.value).toEqual(fullInput);
    expect(whole.body.bytes).toBe(input.bytes);
    expect(JSON.stringify(whole.body.value).startsWith(input.preview)).toBe(true);
  });

  test('small values stay inline', async () => {
    const small = await deployed('Small', chain(node.transform('echo', '{ "echo": $ }')));
    const id = await execute(small, { hello: 'world' });
    const run = await waitRun(stack, id);
    expect(run.output).toEqual({ echo: { hello: 'world' } });
    expect(run.steps.find((s) => s.nodeId === 'echo')?.output).toEqual({ echo: { hello: 'world' } });
  });

  test('the value routes are scoped like the run: 404 for another workspace, 403 for safe readers, 404 for unknown steps', async () => {
    const id = bigRuns[0];
    for (const path of [`/api/v1/runs/${id}/output`, `/api/v1/runs/${id}/input`, `/api/v1/runs/${id}/steps/double/output`]) {
      const foreign = await http(stack.app, 'GET', path, { token: other.token });
      expect({ path, status: foreign.status, body: foreign.body }).toEqual({ path, status: 404, body: { error: 'Run not found' } });
    }
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    const restricted = await http(stack.app, 'GET', `/api/v1/runs/${id}/output`, { token: viewer.token });
    expect(restricted.status).toBe(403);
    expect(restricted.text).not.toContain('xxxx');
    const unknown = await http<ApiError>(stack.app, 'GET', `/api/v1/runs/${id}/steps/nope/output`, { token: stack.ws.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('Step not found');
  });
});

describe('node outputs over the Temporal payload limit', () => {
  // 800,000 characters tripled: about 2.4 MB of JSON, over Temporal's 2 MB payload limit.
  const HUGE_INPUT = { blob: 'y'.repeat(800_000) };
  const TRIPLE = '{ "a": $, "b": $, "c": $ }';

  test('a transform producing > 2 MB fails its node with the size message; Temporal agrees with the row', async () => {
    const wf = await deployed('Tripler', chain(node.transform('triple', TRIPLE)));
    const id = await execute(wf, HUGE_INPUT);
    const run = await waitRun(stack, id);
    expect(run.status).toBe('failed');
    expect(run.errorNodeId).toBe('triple');
    expect(run.error).toMatch(/^Node output is \d+ bytes, over the 1\.5 MB limit$/);
    const bytes = Number(/is (\d+) bytes/.exec(run.error ?? '')![1]);
    expect(bytes).toBeGreaterThan(2_000_000);
    expect(run.steps.find((s) => s.nodeId === 'triple')).toMatchObject({ status: 'failed', error: run.error, output: null });
    expect(await temporalStatus(id)).toBe('FAILED');
  });

  test('onError applies: with "continue" the run goes on with the error and succeeds, in Temporal too', async () => {
    const wf = await deployed(
      'Tripler that continues',
      chain({ ...node.transform('triple', TRIPLE), onError: 'continue' }, node.transform('after', '{ "seen": error.message }')),
    );
    const id = await execute(wf, HUGE_INPUT);
    const run = await waitRun(stack, id);
    expect(run.status).toBe('succeeded');
    expect(run.output).toMatchObject({ seen: expect.stringMatching(/^Node output is \d+ bytes, over the 1\.5 MB limit$/) });
    expect(await temporalStatus(id)).toBe('COMPLETED');
  });
});
