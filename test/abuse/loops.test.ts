/**
 * Loops (issue 29 point 4) as an attacker writes them: a loop that never exits, a fan-out over
 * more items than a loop may iterate, a loop whose collected results grow without end, and a
 * bound far over the limit. Contract: A's run fails naming the limit (or the graph is refused
 * with a 4xx naming it), the worker keeps polling, and B's runs complete meanwhile.
 */
import { expect4xx, expectFailedNode, abuseStackPerFile, type WorkflowBody } from './kit';

const kit = abuseStackPerFile();

/** start → `seed` → a loop whose condition `check` never lets it go (loop-back to itself). */
const forever = (maxIterations?: number): WorkflowBody => ({
  nodes: [
    { id: 'start', type: 'start', config: {} },
    { id: 'seed', type: 'transform', config: { expression: '{ "n": 0 }' } },
    { id: 'check', type: 'condition', config: { expression: 'true' } },
    { id: 'never', type: 'transform', config: { expression: '$' } },
  ],
  edges: [
    { source: 'start', target: 'seed' },
    { source: 'seed', target: 'check' },
    { source: 'check', target: 'check', sourceHandle: 'true', loop: true, ...(maxIterations ? { maxIterations } : {}) },
    { source: 'check', target: 'never', sourceHandle: 'false' },
  ],
});

test('a loop that never exits stops at the default bound, naming its head; B runs meanwhile', async () => {
  await kit.survives(async () => {
    const run = await kit.runLive(kit.a, forever());
    expectFailedNode(run, /^Loop at node "check" reached its limit of 1000 iterations/, 'check');
  });
});

test('a fan-out over 100,000 items stops at its loop bound', async () => {
  await kit.survives(async () => {
    const run = await kit.runLive(kit.a, {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'many', type: 'transform', config: { expression: '[1..100000]' } },
        { id: 'each', type: 'loop', config: { batchSize: 1 } },
        { id: 'body', type: 'transform', config: { expression: '$ * 2' } },
        { id: 'after', type: 'transform', config: { expression: '$count($)' } },
      ],
      edges: [
        { source: 'start', target: 'many' },
        { source: 'many', target: 'each' },
        { source: 'each', target: 'body', sourceHandle: 'loop' },
        { source: 'body', target: 'each', loop: true, maxIterations: 300 },
        { source: 'each', target: 'after', sourceHandle: 'done' },
      ],
    });
    expectFailedNode(run, /^Loop at node "each" reached its limit of 300 iterations/, 'each');
  });
});

test("a loop whose results outgrow a node's output limit fails the loop node, not the process", async () => {
  await kit.survives(async () => {
    const run = await kit.runLive(kit.a, {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'many', type: 'transform', config: { expression: '[1..900]' } },
        { id: 'each', type: 'loop', config: {} },
        { id: 'fat', type: 'transform', config: { expression: '$pad("", 2000, "x")' } },
      ],
      edges: [
        { source: 'start', target: 'many' },
        { source: 'many', target: 'each' },
        { source: 'each', target: 'fat', sourceHandle: 'loop' },
        { source: 'fat', target: 'each', loop: true },
      ],
    });
    expectFailedNode(run, /^The loop's collected output is \d+ bytes, over the 1\.5 MB limit/, 'each');
  });
});

test('a bound over the hard limit, or a cycle without a loop-back edge, is refused before anything runs', async () => {
  await kit.survives(async () => {
    const huge = await kit.tryRunLive(kit.a, forever(1e12));
    expect('refused' in huge).toBe(true);
    if ('refused' in huge) expect4xx(huge.refused, /must be at most 10000/);
    const body = forever();
    body.edges = body.edges.map(({ loop: _loop, ...e }) => e);
    const unmarked = await kit.tryRunLive(kit.a, body);
    expect('refused' in unmarked).toBe(true);
    if ('refused' in unmarked) expect4xx(unmarked.refused, /without a loop-back edge/);
  });
});
