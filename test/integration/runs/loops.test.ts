/**
 * Loops in the engine (issue 29 point 4): loop-back edges run bounded loops on Temporal, each
 * iteration visible in the run's steps, a long loop continuing as new in the same run, and the
 * validation of bad loops. Through real HTTP, PostgreSQL and Temporal.
 */
import type { z } from 'zod';
import type { runStepSchema } from '../../../api/schemas/runs';
import { deployWorkflow, executeAndWait, expectStatus, http, node, useTestStack, type BuiltGraph } from '../../kit';

type Step = z.infer<typeof runStepSchema>;

// A low threshold, so that a loop of a few dozen timers continues as new several times.
const CONTINUE_AFTER_EVENTS = 40;
const stack = useTestStack({ config: { loopContinueAfterEvents: CONTINUE_AFTER_EVENTS } });

/** start → init → body ⇄ check (loop-back while `n < until`) → done. */
function whileLoop(until: number, opts: { maxIterations?: number; body?: ReturnType<typeof node.of> } = {}): BuiltGraph {
  return {
    nodes: [
      node.start(),
      node.transform('init', '{ "n": 0, "seen": [] }'),
      opts.body ?? node.transform('body', '{ "n": n + 1, "seen": $append(seen, n) }'),
      node.of('condition', 'check', { expression: `n < ${until}` }),
      node.transform('done', 'seen'),
    ],
    edges: [
      { id: 'e1', source: 'start', target: 'init' },
      { id: 'e2', source: 'init', target: 'body' },
      { id: 'e3', source: 'body', target: 'check' },
      {
        id: 'back',
        source: 'check',
        target: 'body',
        sourceHandle: 'true',
        loop: true,
        ...(opts.maxIterations ? { maxIterations: opts.maxIterations } : {}),
      },
      { id: 'e4', source: 'check', target: 'done', sourceHandle: 'false' },
    ],
  };
}

const stepsOf = (steps: Step[], nodeId: string) => steps.filter((s) => s.nodeId === nodeId);

test('a native loop runs N iterations, each visible in the run steps with its iteration', async () => {
  const { workflowId } = await deployWorkflow(stack, whileLoop(5));
  const run = await executeAndWait(stack, workflowId, {});
  expect(run).toMatchObject({ status: 'succeeded', output: [0, 1, 2, 3, 4] });

  const body = stepsOf(run.steps, 'body');
  expect(body.map((s) => [s.iteration, s.status, s.output])).toEqual([
    [0, 'succeeded', { n: 1, seen: [0] }],
    [1, 'succeeded', { n: 2, seen: [0, 1] }],
    [2, 'succeeded', { n: 3, seen: [0, 1, 2] }],
    [3, 'succeeded', { n: 4, seen: [0, 1, 2, 3] }],
    [4, 'succeeded', { n: 5, seen: [0, 1, 2, 3, 4] }],
  ]);
  // The exit waits for the last iteration: skipped in the others.
  expect(stepsOf(run.steps, 'done').map((s) => [s.iteration, s.status])).toEqual([
    [0, 'skipped'],
    [1, 'skipped'],
    [2, 'skipped'],
    [3, 'skipped'],
    [4, 'succeeded'],
  ]);
  // Nodes before the loop run once, as iteration 0.
  expect(stepsOf(run.steps, 'init').map((s) => s.iteration)).toEqual([0]);
});

test('a loop node passes batches on "loop" and everything that came back on "done"', async () => {
  const graph: BuiltGraph = {
    nodes: [
      node.start(),
      node.transform('items', '[1, 2, 3, 4, 5]'),
      node.of('loop', 'each', { batchSize: 2 }),
      node.transform('double', '$map($, function($v) { $v * 2 })'),
      node.transform('out', '$'),
    ],
    edges: [
      { id: 'e1', source: 'start', target: 'items' },
      { id: 'e2', source: 'items', target: 'each' },
      { id: 'e3', source: 'each', target: 'double', sourceHandle: 'loop' },
      { id: 'back', source: 'double', target: 'each', loop: true },
      { id: 'e4', source: 'each', target: 'out', sourceHandle: 'done' },
    ],
  };
  const { workflowId } = await deployWorkflow(stack, graph);
  const run = await executeAndWait(stack, workflowId, {});
  // JSONata maps a one-item array to a single value: the last batch comes back as 10, not [10].
  expect(run).toMatchObject({ status: 'succeeded', output: [[2, 4], [6, 8], 10] });
  expect(stepsOf(run.steps, 'each').map((s) => [s.iteration, s.output])).toEqual([
    [0, [1, 2]],
    [1, [3, 4]],
    [2, [5]],
    [3, [[2, 4], [6, 8], 10]],
  ]);
});

test('a loop at its maxIterations fails the run, naming the loop head', async () => {
  const { workflowId } = await deployWorkflow(stack, whileLoop(1_000_000, { maxIterations: 3 }));
  const run = await executeAndWait(stack, workflowId, {});
  expect(run.status).toBe('failed');
  expect(run.errorNodeId).toBe('body');
  expect(run.error).toBe('Loop at node "body" reached its limit of 3 iterations (maxIterations of its loop-back edge)');
  expect(stepsOf(run.steps, 'body').map((s) => [s.iteration, s.status])).toEqual([
    [0, 'succeeded'],
    [1, 'succeeded'],
    [2, 'succeeded'],
    [3, 'failed'],
  ]);
});

test('a long loop continues as new on Temporal and still reports one run', async () => {
  // Each iteration waits on a durable timer: about ten history events, so the run continues as new every few iterations.
  const body = node.of('wait', 'body', { seconds: 0.01 });
  const graph = whileLoop(12);
  graph.nodes = graph.nodes.map((n) => (n.id === 'body' ? body : n));
  graph.nodes.splice(3, 0, node.transform('count', '{ "n": n + 1, "seen": $append(seen, n) }'));
  graph.edges = graph.edges.map((e) => (e.id === 'e3' ? { ...e, target: 'count' } : e));
  graph.edges.push({ id: 'e5', source: 'count', target: 'check' });
  const { workflowId } = await deployWorkflow(stack, graph);
  const run = await executeAndWait(stack, workflowId, {});
  expect(run).toMatchObject({ status: 'succeeded', output: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] });
  expect(stepsOf(run.steps, 'count').map((s) => s.iteration)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  expect(stepsOf(run.steps, 'body').every((s) => s.status === 'succeeded')).toBe(true);

  // The run's Temporal execution is the last of a chain: the first started it, the others continued it.
  const history = await stack.app.deps.temporal.client.workflow.getHandle(run.id).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  expect(started?.continuedExecutionRunId).toBeTruthy();
  // One run in the API, whatever the number of executions.
  const listed = expectStatus(await stack.api.runs.list(`?workflowId=${workflowId}`), 200, 'list runs');
  expect(listed.body.runs.map((r) => r.id)).toEqual([run.id]);
});

describe('validation of loops', () => {
  const validate = async (graph: BuiltGraph) => {
    const created = expectStatus(await stack.api.workflows.create({ name: 'Loop check', ...graph }), 201, 'create');
    const res = await http<{
      error: string;
      report: { errors: Array<{ code: string; message: string; nodeId?: string; edgeId?: string }> };
    }>(stack.app, 'POST', `/api/v1/workflows/${created.body.workflow.id}/deploy`, { token: stack.ws.token });
    expect(res.status).toBe(400);
    return res.body.report.errors;
  };

  test('a cycle without a loop-back edge is refused, saying how to mark it', async () => {
    const graph = whileLoop(3);
    graph.edges = graph.edges.map((e) => (e.id === 'back' ? { id: 'back', source: 'check', target: 'body', sourceHandle: 'true' } : e));
    const errors = await validate(graph);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          code: 'cycle',
          message: 'cycle: body → check → body without a loop-back edge (mark the edge that goes back with "loop": true)',
        }),
      ]),
    );
  });

  test('a loop-back edge that does not go back is refused', async () => {
    const graph = whileLoop(3);
    graph.edges.push({ id: 'skip', source: 'init', target: 'done', loop: true });
    const errors = await validate(graph);
    expect(errors).toEqual([
      expect.objectContaining({
        code: 'cycle',
        edgeId: 'skip',
        message: 'edge "skip": loop-back edge from "init" to "done" does not close a loop: "init" does not come after "done"',
      }),
    ]);
  });

  test('maxIterations out of range, or on an ordinary edge, is refused', async () => {
    const errors = await validate(whileLoop(3, { maxIterations: 10_001 }));
    expect(errors).toEqual([
      expect.objectContaining({ code: 'invalid_config', edgeId: 'back', message: expect.stringContaining('must be at most 10000') }),
    ]);
    const graph = whileLoop(3);
    graph.edges = graph.edges.map((e) => (e.id === 'e1' ? { ...e, maxIterations: 5 } : e));
    expect(await validate(graph)).toEqual([
      expect.objectContaining({
        code: 'invalid_config',
        edgeId: 'e1',
        message: 'edge "e1": maxIterations applies only to a loop-back edge ("loop": true)',
      }),
    ]);
  });
});
