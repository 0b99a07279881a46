/**
 * Abuse class "text that is not well-formed" (issue 26, F1 and F8, item 3): workspace A's nodes
 * produce U+0000 and lone surrogates in errors, outputs and logs, live and dry. A's runs end
 * with a clear status and U+FFFD where the bad code unit was; B keeps probing and the worker
 * keeps polling, also after a restart with A's poisonous run still in Temporal.
 * (The full property over every node type is test/integration/runs/wellFormedText.property.test.ts;
 * a restart of a worker process is test/integration/runs/poisonText.test.ts.)
 */
import { waitForRun } from '../support/harness';
import { chain, codeNode, expectFailedNode, RUN_DEADLINE_MS, startAbuseStack, type AbuseStack } from './kit';

let kit: AbuseStack;
beforeAll(async () => {
  kit = await startAbuseStack();
}, 120_000);
afterAll(() => kit?.close());

const LONE_THROW = 'throw new Error("e" + String.fromCharCode(0xd800));';

test('F1: A throws an error with a lone surrogate from a live code node: A fails with U+FFFD, the worker keeps serving B', async () => {
  await kit.survives(async () => {
    expectFailedNode(await kit.runLive(kit.a, [codeNode(LONE_THROW)]), /e\ufffd/, 'code');
  });
}, 240_000);

test('F1 variants: a fail node and a log node with NUL and lone surrogates from expressions', async () => {
  await kit.survives(async () => {
    expectFailedNode(await kit.runLive(kit.a, [{ id: 'boom', type: 'fail', config: { message: '="x\\u0000" & "\\udc00y"' } }]), /x\ufffd\ufffdy/, 'boom');
    const logged = await kit.runLive(kit.a, [{ id: 'say', type: 'log', config: { level: 'warn', message: '="\\ud800\\u0000"' } }]);
    expect(logged.status).toBe('succeeded');
    expect(logged.logs.map((l: { message: string }) => l.message)).toContain('\ufffd\ufffd');
  });
}, 240_000);

test('F1 across a worker restart: the poisonous run is still in Temporal; it fails readably on the new worker, which keeps polling', async () => {
  await kit.survives(async () => {
    const id = await kit.createWorkflow(kit.a, {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'pause', type: 'wait', config: { seconds: 2 } },
        { id: 'code', type: 'code', config: { source: LONE_THROW } },
      ],
      edges: [
        { source: 'start', target: 'pause' },
        { source: 'pause', target: 'code' },
      ],
    });
    await kit.deploy(kit.a, id);
    const exec = await kit.execute(kit.a, id);
    expect(exec.status).toBe(202);
    await waitForRun(kit.app, kit.a.token, exec.body.run.id, (run) => run.status === 'waiting', RUN_DEADLINE_MS);
    await kit.restartWorker();
    expectFailedNode(await waitForRun(kit.app, kit.a.token, exec.body.run.id, undefined, RUN_DEADLINE_MS), /e\ufffd/, 'code');
  });
}, 240_000);

/** A dry run of the workflow's draft (target candidate), as an editor runs it. */
async function dryRunDraft(source: string) {
  const id = await kit.createWorkflow(kit.a, chain([codeNode(source)]));
  return kit.request(kit.a, 'POST', `/api/v1/workflows/${id}/execute`, { input: {}, dryRun: true, target: 'candidate' });
}

test('F8: dry runs returning U+0000 or a lone surrogate answer 201, finished, with U+FFFD; none is left queued', async () => {
  await kit.survives(async () => {
    for (const [source, expected] of [
      ['return "x\\u0000y";', 'x\ufffdy'],
      ['return "x" + String.fromCharCode(0xd800) + "y";', 'x\ufffdy'],
    ]) {
      const res = await dryRunDraft(source);
      expect([res.status, res.body.run?.status, res.body.run?.output]).toEqual([201, 'succeeded', expected]);
    }
    const failed = await dryRunDraft(LONE_THROW);
    expect([failed.status, failed.body.run?.status]).toEqual([201, 'failed']);
    expect(failed.body.run.error).toMatch(/e\ufffd/);
  });
}, 240_000);
