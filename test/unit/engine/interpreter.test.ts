/**
 * The interpreter's synchronous path (pure nodes without a Promise, patch sync-expressions-v1)
 * gives the same outcome, steps and logs as the all-async path that older runs replay with.
 */
import { promiseHooks } from 'node:v8';
import { runGraph, type EngineHost, type LogRecord, type StepRecord } from '../../../engine/interpreter';
import type { WorkflowGraph } from '../../../engine/types';

function host(syncExpressions: boolean, actionOutput: unknown = { ok: true }) {
  const steps = new Map<string, StepRecord>();
  const logs: LogRecord[] = [];
  const h: EngineHost = {
    now: () => 1_700_000_000_000,
    syncExpressions,
    runAction: async (node, config) => ({ output: { node: node.id, config, ...(actionOutput as object) } }),
    waitTimer: async () => undefined,
    waitApproval: async () => ({ decision: 'approved' }),
    waitEvent: async () => ({ event: true }),
    runSubworkflow: async () => ({ child: true }),
    onStep: (s) => void steps.set(s.nodeId, s),
    onLog: (l) => void logs.push(l),
    onResponse: () => undefined,
    isCancellation: () => false,
  };
  return { h, steps, logs };
}

const graph = (nodes: WorkflowGraph['nodes'], edges: WorkflowGraph['edges']): WorkflowGraph => ({ nodes, edges }) as WorkflowGraph;

const SHAPES: Array<[string, WorkflowGraph, unknown]> = [
  [
    'branches, a merge, a condition that skips a branch, a switch, a log, a disabled node',
    graph(
      [
        { id: 'start', type: 'start', config: {} },
        { id: 'a', type: 'transform', config: { expression: 'x + 1' } },
        { id: 'b', type: 'transform', config: { expression: 'x * 10' } },
        { id: 'join', type: 'merge', config: {} },
        { id: 'big', type: 'condition', config: { expression: 'a + b > 100' } },
        { id: 'yes', type: 'transform', config: { expression: '"big"' } },
        { id: 'no', type: 'transform', config: { expression: '"small: " & $string(a + b)' } },
        { id: 'route', type: 'switch', config: { expression: '$', cases: [{ value: 'small: 23', handle: 's' }] } },
        { id: 'say', type: 'log', config: { level: 'info', message: '="routed " & $' } },
        { id: 'off', type: 'transform', config: { expression: '"never"' }, disabled: true },
        { id: 'call', type: 'http', config: { method: 'POST', url: 'http://example.test', body: { v: '=$' } } },
      ],
      [
        { source: 'start', target: 'a' },
        { source: 'start', target: 'b' },
        { source: 'a', target: 'join' },
        { source: 'b', target: 'join' },
        { source: 'join', target: 'big' },
        { source: 'big', target: 'yes', sourceHandle: 'true' },
        { source: 'big', target: 'no', sourceHandle: 'false' },
        { source: 'no', target: 'route' },
        { source: 'route', target: 'say', sourceHandle: 's' },
        { source: 'say', target: 'off' },
        { source: 'off', target: 'call' },
      ],
    ),
    { x: 2 },
  ],
  [
    'an expression outside the synchronous subset and a failing one (onError: continue)',
    graph(
      [
        { id: 'start', type: 'start', config: {} },
        { id: 'sorted', type: 'transform', config: { expression: '$sort(items)' } },
        { id: 'bad', type: 'transform', config: { expression: '"a" + 1' }, onError: 'continue' },
        { id: 'after', type: 'transform', config: { expression: 'error.message' } },
      ],
      [
        { source: 'start', target: 'sorted' },
        { source: 'sorted', target: 'bad' },
        { source: 'bad', target: 'after' },
      ],
    ),
    { items: [3, 1, 2] },
  ],
];

describe.each(SHAPES)('%s', (_name, g, input) => {
  it('ends the same on the synchronous and the all-async path', async () => {
    const fast = host(true);
    const slow = host(false);
    const a = await runGraph({ graph: g, input, trigger: 'api' }, fast.h);
    const b = await runGraph({ graph: g, input, trigger: 'api' }, slow.h);
    expect(a).toEqual(b);
    const byNode = (m: Map<string, StepRecord>) =>
      Object.fromEntries([...m.values()].map((s) => [s.nodeId, { status: s.status, output: s.output, error: s.error }]));
    expect(byNode(fast.steps)).toEqual(byNode(slow.steps));
    const messages = (logs: LogRecord[]) => logs.map((l) => `${l.nodeId}:${l.message}`).sort();
    expect(messages(fast.logs)).toEqual(messages(slow.logs));
  });
});

it('the branches shape routes as expected', async () => {
  const { h, steps } = host(true);
  const outcome = await runGraph({ graph: SHAPES[0][1], input: { x: 2 }, trigger: 'api' }, h);
  expect(outcome.status).toBe('succeeded');
  expect(steps.get('yes')!.status).toBe('skipped');
  expect(steps.get('join')!.output).toEqual({ a: 3, b: 20 });
  expect(steps.get('say')!.status).toBe('succeeded');
  expect(outcome.output).toMatchObject({ node: 'call', config: { body: { v: 'small: 23' } } });
});

it('pure steps create no promise each on the synchronous path, and a long chain needs no deep stack', async () => {
  const chain = (n: number) =>
    graph(
      [
        { id: 'start', type: 'start', config: {} },
        ...Array.from({ length: n }, (_, i) => ({ id: `t${i + 1}`, type: 'transform' as const, config: { expression: '{ "i": i + 1 }' } })),
      ],
      Array.from({ length: n }, (_, i) => ({ source: i === 0 ? 'start' : `t${i}`, target: `t${i + 1}` })),
    );
  const promisesFor = async (sync: boolean, n: number) => {
    let created = 0;
    const stop = promiseHooks.onInit(() => void created++);
    try {
      const outcome = await runGraph({ graph: chain(n), input: { i: 0 }, trigger: 'api' }, host(sync).h);
      expect(outcome.output).toEqual({ i: n });
    } finally {
      stop();
    }
    return created;
  };
  const fast = await promisesFor(true, 40);
  const slow = await promisesFor(false, 40);
  // The async path creates several promises per step (JSONata's evaluator, the interpreter's
  // awaits); the synchronous one a handful per run.
  expect(slow).toBeGreaterThan(40 * 5);
  expect(fast).toBeLessThan(20);
  // 5,000 pure nodes in a chain run from a queue, not by recursion.
  expect((await runGraph({ graph: chain(5000), input: { i: 0 }, trigger: 'api' }, host(true).h)).output).toEqual({ i: 5000 });
});

describe('expression bounds (patch expression-bounds-v1)', () => {
  // Over the bounds (20,000 awaited native calls), within JSONata's own limits.
  const heavy = graph(
    [
      { id: 'start', type: 'start', config: {} },
      { id: 'expr', type: 'transform', config: { expression: '$count($map([1..20000], $string))' } },
      { id: 'cond', type: 'condition', config: { expression: '$sum(items.$length($string($$))) > 0' } },
    ],
    [
      { source: 'start', target: 'expr' },
      { source: 'start', target: 'cond' },
    ],
  );

  test.each([true, false])(
    'new runs fail the node with the limit; runs recorded before the bounds keep their outcome (sync path %s)',
    async (sync) => {
      const bounded = host(sync);
      const outcome = await runGraph({ graph: heavy, input: { items: [1] }, trigger: 'api' }, { ...bounded.h, boundedExpressions: true });
      expect(outcome).toMatchObject({ status: 'failed', error: { nodeId: 'expr', message: expect.stringContaining('steps in $map') } });
      const replayed = host(sync);
      const old = await runGraph({ graph: heavy, input: { items: [1] }, trigger: 'api' }, { ...replayed.h, boundedExpressions: false });
      expect(old.status).toBe('succeeded');
      expect(replayed.steps.get('expr')).toMatchObject({ status: 'succeeded', output: 20_000 });
    },
  );
});

describe('work slices (patch work-slices-v1)', () => {
  // Each node exhausts its own step budget (10,000 steps) and fails; onError lets the chain go on.
  const HEAVY = '$length($replace($pad("", 1000000, "a"), /a/, "b"))';
  const heavyChain = (n: number, parallel = false) => {
    const nodes: WorkflowGraph['nodes'] = [{ id: 'start', type: 'start', config: {} }];
    const edges: WorkflowGraph['edges'] = [];
    for (let i = 0; i < n; i++) {
      // Distinct sources: evaluations of one cached expression share its budget.
      nodes.push({ id: `t${i}`, type: 'transform', config: { expression: `${HEAVY} + ${i}` }, onError: 'continue' });
      edges.push({ source: parallel || i === 0 ? 'start' : `t${i - 1}`, target: `t${i}` });
    }
    return graph(nodes, edges);
  };

  /** Runs `g` with slices, recording how much work each activation (the span between two ends) did. */
  async function sliced(g: WorkflowGraph, sync: boolean) {
    const { h, steps } = host(sync);
    const { WORK_METER } = await import('../../../engine/expressionBounds');
    const activations: number[] = [];
    let began = WORK_METER.steps;
    const outcome = await runGraph(
      { graph: g, input: {}, trigger: 'api' },
      {
        ...h,
        sliceSteps: 2_000,
        endActivation: async () => {
          activations.push(WORK_METER.steps - began);
          await new Promise((resolve) => setImmediate(resolve));
          began = WORK_METER.steps;
        },
      },
    );
    activations.push(WORK_METER.steps - began);
    return { outcome, steps, activations };
  }

  test.each([true, false])('no activation does more than a slice plus one expression (sync path %s)', async (sync) => {
    const { outcome, steps, activations } = await sliced(heavyChain(6), sync);
    expect(outcome.status).toBe('succeeded');
    for (let i = 0; i < 6; i++) expect(steps.get(`t${i}`)).toMatchObject({ status: 'failed', error: expect.stringContaining('steps in') });
    // Without slices the six budgets (60,000 steps) would be one activation.
    expect(activations.length).toBeGreaterThanOrEqual(6);
    for (const work of activations) expect(work).toBeLessThan(2_000 + 10_000 + 1_000);
  });

  test.each([true, false])('parallel branches are evaluated one at a time, each in a slice (sync path %s)', async (sync) => {
    const { activations, steps } = await sliced(heavyChain(4, true), sync);
    expect([...steps.values()].filter((s) => s.status === 'failed')).toHaveLength(4);
    // Each branch's budget is a slice's worth, so each ends one activation: four, not one.
    expect(activations).toHaveLength(4);
    for (const work of activations) expect(work).toBeLessThan(2_000 + 10_000 + 1_000);
  });

  test('the outcome, steps and logs are those of an unsliced run', async () => {
    const g = graph(
      [
        { id: 'start', type: 'start', config: {} },
        { id: 'a', type: 'transform', config: { expression: '$count($map([1..3000], $string))' } },
        { id: 'b', type: 'transform', config: { expression: '$sum([1..3000])' } },
        { id: 'say', type: 'log', config: { level: 'info', message: '="sum " & $string($)' } },
        { id: 'c', type: 'transform', config: { expression: '{"n": $count($map([1..3000], $string)), "s": $}' } },
      ],
      [
        { source: 'start', target: 'a' },
        { source: 'a', target: 'b' },
        { source: 'b', target: 'say' },
        { source: 'say', target: 'c' },
      ],
    );
    const plain = host(true);
    const expected = await runGraph({ graph: g, input: {}, trigger: 'api' }, plain.h);
    const { outcome, steps, activations } = await sliced(g, true);
    expect(activations.length).toBeGreaterThan(1);
    expect(outcome).toEqual(expected);
    expect([...steps.values()].map((s) => [s.nodeId, s.status, s.output])).toEqual(
      [...plain.steps.values()].map((s) => [s.nodeId, s.status, s.output]),
    );
  });
});
