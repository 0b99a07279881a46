/**
 * Issue 26, F4: a live run with the `$toMillis` picture of F3 aborted the whole process
 * ("async hook stack has become corrupted") from a worker thread's message port. The other F3
 * expressions run live here too, each its own case. Contract: A's run ends with the node
 * failed naming the limit (or the right result), the worker keeps polling, B keeps running.
 */
import { waitForRun } from '../support/harness';
import { F3_ACCEPTED, F3_EXPRESSIONS, F4_CHAIN_LENGTH, F4_EXPRESSION, f3Result, f4ChainExpression } from './attacks';
import { CLEAR_LIMIT_MESSAGE, expect4xx, expectFailedOrSucceeded, abuseStackPerFile, transformNode } from './kit';

const kit = abuseStackPerFile();

const PICTURE = '$toMillis with a ten-[f] picture' as const;

test('a live run with the $toMillis picture ends, and the process, the worker and B carry on', async () => {
  expect(F3_EXPRESSIONS[PICTURE]).toBe(F4_EXPRESSION);
  await kit.survives(async () => {
    const run = await kit.runLive(kit.a, [transformNode(F4_EXPRESSION)]);
    expectFailedOrSucceeded(run, F3_ACCEPTED[PICTURE].message, f3Result(PICTURE));
  });
});

test('five live runs with the picture at once, while B probes', async () => {
  await kit.survives(async () => {
    const runs = await Promise.all(Array.from({ length: 5 }, () => kit.runLive(kit.a, [transformNode(F4_EXPRESSION)])));
    for (const run of runs) expectFailedOrSucceeded(run, F3_ACCEPTED[PICTURE].message, f3Result(PICTURE));
  });
});

test('a run whose nodes together do more work than one workflow task may ends, in short tasks', async () => {
  await kit.survives(async () => {
    const nodes = Array.from({ length: F4_CHAIN_LENGTH }, (_, i) => ({
      ...transformNode(f4ChainExpression(i), `t${i}`),
      onError: 'continue',
    }));
    const created = await kit.createWorkflow(kit.a, {
      nodes: [{ id: 'start', type: 'start', config: {} }, ...nodes],
      edges: chainEdges(nodes),
    });
    await kit.deploy(kit.a, created);
    const exec = await kit.execute(kit.a, created);
    expect(exec.status).toBe(202);
    // Generous: this is "not hung" (a dozen expression budgets of work on a possibly busy machine).
    const run = await waitForRun(kit.app, kit.a.token, exec.body.run.id, undefined, 240_000);
    expect(run.status).toBe('succeeded');
    const steps = (run.steps as Array<{ nodeId: string; status: string; error: string | null }>).filter((s) => s.nodeId.startsWith('t'));
    expect(steps).toHaveLength(F4_CHAIN_LENGTH);
    for (const step of steps) expect(step).toMatchObject({ status: 'failed', error: expect.stringMatching(CLEAR_LIMIT_MESSAGE) });
  });
});

const chainEdges = (nodes: Array<{ id: string }>) => nodes.map((n, i) => ({ source: i === 0 ? 'start' : nodes[i - 1]!.id, target: n.id }));

describe.each((Object.keys(F3_EXPRESSIONS) as Array<keyof typeof F3_EXPRESSIONS>).filter((k) => k !== PICTURE))(
  'a live run of %s',
  (name) => {
    test('ends with the node failed naming the limit (or the right result); B probes meanwhile and after', async () => {
      await kit.survives(async () => {
        // The service may refuse the expression at deploy, before anything runs: a 4xx naming why.
        const outcome = await kit.tryRunLive(kit.a, [transformNode(F3_EXPRESSIONS[name])]);
        if ('refused' in outcome) return expect4xx(outcome.refused, F3_ACCEPTED[name].message);
        expectFailedOrSucceeded(outcome.run, F3_ACCEPTED[name].message, f3Result(name));
        if (outcome.run.status === 'failed') expect(outcome.run.errorNodeId).toBe('expr');
      });
    });
  },
);
