/**
 * Issue 26 item 2 (rows F3/F4): JSONata built-in functions, regexes and lambda signatures are
 * bounded (engine/expressionBounds.ts). In a live run on the worker each expression below used
 * to stall or abort the process (`$toMillis` with a backtracking picture aborted it); now the
 * transform node fails with a clear message (onError applies), no workflow task fails, and
 * another workspace's run on the same worker succeeds.
 */
import { readFile } from 'node:fs/promises';
import { Worker } from '@temporalio/worker';
import { testEnv } from '../../support/env';
import { testPayloadCodec } from '../../support/harness';
import {
  createWorkspace,
  deployWorkflow,
  executeAndWait,
  http,
  useTestStack,
  type Run,
  type WorkflowBody,
  type WorkspaceFixture,
} from '../../kit';
import { closedHistory } from '../../support/temporalHistory';

let other: WorkspaceFixture;

const stack = useTestStack();
beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Bystander workspace');
});

const ATTACKS = [
  {
    name: 'a million regex matches',
    expression: '$length($replace($pad("", 1000000, "a"), /a/, "b"))',
    message: /exceeded 10000 steps in regular expression matching/,
  },
  { name: 'a $map over 20,000 native calls', expression: '$count($map([1..20000], $string))', message: /exceeded 10000 steps in \$map/ },
  {
    // Inside $eval, so that saving the workflow (which refuses such a signature) cannot see it.
    name: 'a lambda signature that backtracks',
    expression: `$eval(${JSON.stringify(`(function($x)<${'n+'.repeat(12)}:n>{ $x })(${Array.from({ length: 30 }, () => 1).join(', ')}, "x")`)})`,
    message: /Function signature <n\+.* is too complex/,
  },
] as const;

function graph(expression: string, onError?: string) {
  return {
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'expr', type: 'transform', config: { expression }, ...(onError ? { onError } : {}) },
      { id: 'after', type: 'transform', config: { expression: '{ "after": true, "error": error.message }' } },
    ],
    edges: [
      { source: 'start', target: 'expr' },
      { source: 'expr', target: 'after' },
    ],
  };
}

/** Deploys `body` in `ws` and runs it once with `{ n: 2 }`. */
async function run(ws: WorkspaceFixture, body: WorkflowBody): Promise<Run> {
  const as = { app: stack.app, ws };
  const { workflowId } = await deployWorkflow(as, body);
  return executeAndWait(as, workflowId, { n: 2 }, { timeoutMs: 90_000 });
}

async function workflowTaskFailures(runId: string): Promise<number> {
  const history = await closedHistory(stack.app.deps.temporal.client, runId);
  return (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
}

/** Replays a run's history with the current workflow bundle; throws on any nondeterminism. */
async function replays(runId: string, patch = 'expression-bounds-v1'): Promise<void> {
  const history = await closedHistory(stack.app.deps.temporal.client, runId);
  const markers = (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch');
  const ids = markers
    .flatMap((e) => e.markerRecordedEventAttributes!.details?.['patch-data']?.payloads ?? [])
    .map((p) => JSON.parse(Buffer.from(p.data ?? []).toString('utf8')).id);
  expect(ids).toContain(patch);
  const bundle = { code: await readFile(testEnv('workflowBundle'), 'utf8') };
  await Worker.runReplayHistory({ workflowBundle: bundle, dataConverter: { payloadCodecs: [testPayloadCodec] } }, history, runId);
}

test('$toMillis with a backtracking picture runs on RE2 in a live run (it aborted the process)', async () => {
  const expression = `$exists($toMillis("${'1'.repeat(40)}x", "[f][f][f][f][f][f][f][f][f][f]"))`;
  const parsed = await run(stack.ws, graph(expression));
  expect(parsed).toMatchObject({ status: 'succeeded', output: { after: true } });
  expect(parsed.steps.find((s: { nodeId: string }) => s.nodeId === 'expr')).toMatchObject({ status: 'succeeded', output: false });
  expect(await workflowTaskFailures(parsed.id)).toBe(0);
}, 120_000);

test("a run whose nodes together exceed one workflow task's work ends in short tasks, and replays", async () => {
  // Twelve nodes that each use up an expression's budget (10,000 steps): in one activation their
  // work grows with the node count (up to 500) past the worker's isolateExecutionTimeout, whose
  // interrupt aborted the process. Each node now ends a slice (WORK_SLICE_STEPS = 2,000).
  const nodes = Array.from({ length: 12 }, (_, i) => ({
    id: `t${i}`,
    type: 'transform',
    config: { expression: `$length($replace($pad("", 1000000, "a"), /a/, "b")) + ${i}` },
    onError: 'continue',
  }));
  const body = {
    nodes: [{ id: 'start', type: 'start', config: {} }, ...nodes],
    edges: nodes.map((n, i) => ({ source: i === 0 ? 'start' : `t${i - 1}`, target: n.id })),
  };
  const as = { app: stack.app, ws: stack.ws };
  const { workflowId } = await deployWorkflow(as, body);
  const ended = await executeAndWait(as, workflowId, {}, { timeoutMs: 240_000 });
  expect(ended.status).toBe('succeeded');
  for (const node of nodes) {
    expect(ended.steps.find((s: { nodeId: string }) => s.nodeId === node.id)).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/exceeded 10000 steps in regular expression matching/),
    });
  }
  expect(await workflowTaskFailures(ended.id)).toBe(0);
  const history = await closedHistory(stack.app.deps.temporal.client, ended.id);
  // A slice ends with a 1 ms timer: after each node but the last.
  expect((history.events ?? []).filter((e) => e.timerStartedEventAttributes).length).toBeGreaterThanOrEqual(11);
  await replays(ended.id, 'work-slices-v1');
  // A bound for "hung": 300 s ran out beside a benchmark (the run's work is CPU-bound by design).
}, 900_000);

test('a lambda signature that backtracks is refused when the workflow is deployed', async () => {
  const expression = `(function($x)<${'n+'.repeat(12)}:n>{ $x })(1)`;
  const created = await stack.api.workflows.create(graph(expression));
  expect(created.status).toBe(201);
  const deployed = await http(stack.app, 'POST', `/api/v1/workflows/${created.body.workflow.id}/deploy`, { token: stack.ws.token });
  expect(deployed.status).toBe(400);
  expect(JSON.stringify(deployed.body)).toMatch(/Function signature <n\+.* is too complex/);
});

test.each(ATTACKS)(
  '$name fails its node with the limit in the message; onError applies; another workspace is unaffected',
  async (attack) => {
    const stopped = await run(stack.ws, graph(attack.expression));
    expect(stopped).toMatchObject({ status: 'failed', errorNodeId: 'expr', error: expect.stringMatching(attack.message) });
    expect(await workflowTaskFailures(stopped.id)).toBe(0);
    // The run recorded the patch, and its history replays (the bounds are deterministic).
    await replays(stopped.id);

    const continued = await run(stack.ws, graph(attack.expression, 'continue'));
    expect(continued).toMatchObject({ status: 'succeeded', output: { after: true, error: expect.stringMatching(attack.message) } });

    // The worker keeps polling: a bystander's run on it completes.
    const bystander = await run(other, graph('{ "doubled": n * 2, "sorted": $sort([3, 1, 2]) }'));
    expect(bystander).toMatchObject({ status: 'succeeded', output: { after: true } });
    expect(bystander.steps.find((s: { nodeId: string }) => s.nodeId === 'expr')).toMatchObject({
      status: 'succeeded',
      output: { doubled: 4, sorted: [1, 2, 3] },
    });
  },
  240_000,
);
