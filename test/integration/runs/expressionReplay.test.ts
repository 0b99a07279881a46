/**
 * Replay safety of the synchronous expression evaluator (engine/syncExpressions.ts).
 *
 * The fixtures in test/fixtures/histories/ are histories of runs recorded before the evaluator
 * existed (commit 9aa892a: every expression through JSONata); each `.meta.json` holds the run's
 * id, output and steps as the API returned them. transform-run-jsonata is a run of `graph()`
 * below. branches-run-jsonata is a run of two parallel branches: `quick` (a transform in the
 * sync subset, heavy for JSONata) then a code node, and `slow` (a transform outside the subset,
 * light for JSONata: `[1..2]`) then an http GET. Recorded, the GET was scheduled first; with
 * the sync path the code node would be, and the replay would fail on the activity type.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { testEnv } from '../../support/env';
import { startFakeServer } from '../../support/fakeServer';
import { testPayloadCodec } from '../../support/harness';
import { deployWorkflow, executeAndWait, useTestStack } from '../../kit';
import { closedHistory } from '../../support/temporalHistory';

const History = temporal.api.history.v1.History;
const FIXTURES = path.join(__dirname, '../../fixtures/histories');
/** The patch marker new runs record (temporal/workflows/runs.ts); old histories have none. */
const PATCH = 'sync-expressions-v1';

/** Transforms, conditions, a switch and templated fields, in three parallel branches. */
function graph(serviceUrl: string) {
  return {
    nodes: [
      { id: 'start', type: 'start', config: {} },
      {
        id: 'a',
        type: 'transform',
        config: { expression: '{ "total": $sum(items.(price * qty)), "names": items.name, "first": items[0].name, "n": $count(items) }' },
      },
      { id: 'b', type: 'transform', config: { expression: '$map(items, function($i) { $i.price })' } },
      { id: 'c', type: 'transform', config: { expression: '$uppercase(customer.name) & " / " & $string(items[price > 2].qty)' } },
      { id: 'getA', type: 'http', config: { method: 'GET', url: `${serviceUrl}/a?x={{x}}`, query: { total: '=$string($nodes.a.total)' } } },
      { id: 'getB', type: 'http', config: { method: 'GET', url: `${serviceUrl}/b` } },
      { id: 'getC', type: 'http', config: { method: 'GET', url: `${serviceUrl}/c`, headers: { 'x-name': '=$nodes.c' } } },
      { id: 'join', type: 'merge', config: {} },
      { id: 'cond', type: 'condition', config: { expression: '$nodes.a.total > 10 and $exists($trigger.customer)' } },
      {
        id: 'route',
        type: 'switch',
        config: {
          expression: '$nodes.a.n > 2 ? "many" : "few"',
          cases: [
            { value: 'many', handle: 'many' },
            { value: 'few', handle: 'few' },
          ],
        },
      },
      { id: 'many', type: 'log', config: { message: '="many items: " & $join($nodes.a.names, ", ")', level: 'info' } },
      { id: 'few', type: 'log', config: { message: '="few"', level: 'info' } },
      { id: 'join2', type: 'merge', config: {} },
      {
        id: 'out',
        type: 'transform',
        config: {
          expression:
            '{ "a": $nodes.a, "b": $nodes.b, "c": $nodes.c, "keys": $keys($nodes), "j": $nodes.join2, "missing": nothing, "len": $length($trigger.customer.name) }',
        },
      },
    ],
    edges: [
      { source: 'start', target: 'a' },
      { source: 'start', target: 'b' },
      { source: 'start', target: 'c' },
      { source: 'a', target: 'getA' },
      { source: 'b', target: 'getB' },
      { source: 'c', target: 'getC' },
      { source: 'getA', target: 'join' },
      { source: 'getB', target: 'join' },
      { source: 'getC', target: 'join' },
      { source: 'join', target: 'cond' },
      { source: 'cond', target: 'route', sourceHandle: 'true' },
      { source: 'route', target: 'many', sourceHandle: 'many' },
      { source: 'route', target: 'few', sourceHandle: 'few' },
      { source: 'many', target: 'join2' },
      { source: 'few', target: 'join2' },
      { source: 'join2', target: 'out' },
    ],
  };
}
const INPUT = {
  customer: { name: 'ada' },
  items: [
    { name: 'pen', price: 2, qty: 3 },
    { name: 'ink', price: 5, qty: 1 },
    { name: 'pad', price: 4, qty: 2 },
  ],
};

/** A run's output as an object; fails the test when it is none. */
function outputObject(output: unknown): Record<string, unknown> {
  if (typeof output !== 'object' || output === null || Array.isArray(output))
    throw new Error(`output is not an object: ${JSON.stringify(output)}`);
  return output as Record<string, unknown>;
}
type AnyHistory = Parameters<typeof Worker.runReplayHistory>[1];

const replay = async (history: AnyHistory, workflowId: string) =>
  Worker.runReplayHistory(
    { workflowBundle: { code: await readFile(testEnv('workflowBundle'), 'utf8') }, dataConverter: { payloadCodecs: [testPayloadCodec] } },
    history,
    workflowId,
  );

type MarkerEvent = {
  markerRecordedEventAttributes?: {
    markerName?: string | null;
    details?: Record<string, { payloads?: Array<{ data?: Uint8Array | null }> | null }> | null;
  } | null;
};
/** Ids of the patches a history recorded (core writes them as plain JSON payloads). */
const patchIds = (history: { events?: MarkerEvent[] | null }) =>
  (history.events ?? [])
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .flatMap((e) => e.markerRecordedEventAttributes!.details?.['patch-data']?.payloads ?? [])
    .map((p) => (JSON.parse(Buffer.from(p.data ?? []).toString('utf8')) as { id: string }).id);

describe('expression evaluation and replay', () => {
  const stack = useTestStack();

  test('a history recorded with the JSONata-only evaluator replays with the current workflow code', async () => {
    const meta = JSON.parse(await readFile(path.join(FIXTURES, 'transform-run-jsonata.meta.json'), 'utf8')) as { workflowId: string };
    const history = History.fromObject(JSON.parse(await readFile(path.join(FIXTURES, 'transform-run-jsonata.json'), 'utf8')));
    expect(patchIds(history as never)).toEqual(['node-output-limit-v1', 'local-actions-v1']);
    // Throws DeterminismViolationError (or any replay failure) when the commands differ.
    await replay(history, meta.workflowId);
  });

  test('branch order: a recorded run whose slower JSONata branch scheduled second replays in its recorded order', async () => {
    const meta = JSON.parse(await readFile(path.join(FIXTURES, 'branches-run-jsonata.meta.json'), 'utf8')) as {
      workflowId: string;
      steps: Array<{ nodeId: string }>;
    };
    const history = History.fromObject(JSON.parse(await readFile(path.join(FIXTURES, 'branches-run-jsonata.json'), 'utf8')));
    const actions = meta.steps.map((s) => s.nodeId).filter((id) => id === 'compute' || id === 'fetch');
    expect(actions).toEqual(['fetch', 'compute']);
    // Without the patch (sync path on replay too) this fails with a nondeterminism error.
    await replay(history, meta.workflowId);
  });

  test('a new run evaluates on the sync path, gives the recorded values, records the patch and replays', async () => {
    const { app } = stack;
    const meta = JSON.parse(await readFile(path.join(FIXTURES, 'transform-run-jsonata.meta.json'), 'utf8')) as {
      output: Record<string, unknown>;
    };
    const service = await startFakeServer(() => ({ body: { ok: true, items: [1, 2, 3] } }));
    try {
      const { workflowId: id } = await deployWorkflow(stack, graph(service.url));
      const run = await executeAndWait(stack, id, INPUT);
      expect(run.status).toBe('succeeded');
      const output = outputObject(run.output);

      const values = ({ a, b, c, len }: Record<string, unknown>) => ({ a, b, c, len });
      expect(values(output)).toEqual(values(meta.output));
      // Same nodes finished, in another order: `a` and `c` no longer wait for JSONata's promises,
      // while `b` (a lambda, outside the subset) still does. This is why recorded runs replay
      // with JSONata only (the patch): their branches scheduled their HTTP calls in the old order.
      const order = (keys: unknown) => (keys as string[]).filter((k) => ['a', 'b', 'c'].includes(k));
      expect(order(meta.output.keys)).toEqual(['b', 'c', 'a']);
      expect(order(output.keys)).toEqual(['a', 'c', 'b']);
      expect([...(output.keys as string[])].sort()).toEqual([...(meta.output.keys as string[])].sort());

      const history = await closedHistory(app.deps.temporal.client, run.id);
      expect(patchIds(history as never)).toContain(PATCH);
      await replay(history, run.id);
    } finally {
      await service.close();
    }
  });
});
