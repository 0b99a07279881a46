/**
 * The abuse kit on its own (issue 26, item 6): the stack starts with B's probe succeeding at
 * rest, and an attack the service already withstands (a live code node spinning for ever)
 * passes every check of `survives`. The attack classes have their own files beside this one.
 */
import { codeNode, expectFailedNode, startAbuseStack, type AbuseStack } from './kit';

let kit: AbuseStack;
beforeAll(async () => {
  kit = await startAbuseStack();
}, 120_000);
afterAll(() => kit?.close());

test('at rest: B probes, /healthz answers, the worker polls, nothing of A is queued', async () => {
  await kit.probeB();
  await kit.healthz();
  await kit.assertWorkerPolling(kit.a);
  await kit.assertNoQueuedRuns(kit.a);
});

test('A runs a live code node with while(true){}: it fails at its deadline, B keeps probing', async () => {
  await kit.survives(async () => {
    const run = await kit.runLive(kit.a, [codeNode('while (true) {}')]);
    expectFailedNode(run, /time limit/, 'code');
  });
});
