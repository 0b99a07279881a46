/**
 * Issue 26, F6: one dry run with 40 code nodes of `while(true){}` once took B's live runs from
 * 0.65 s to 13.3 s (no fairness in the sandbox pool). Contract: A's spinning nodes fail at
 * their time limit, B's probe (which needs the sandbox) succeeds meanwhile and after. How
 * much B is slowed is measured by `npm run bench -- abuse`, not asserted here.
 */
import { F6_SOURCE, F6_SPINNERS } from './attacks';
import { codeNode, expectDryRunEnded, expectFailedNode, abuseStackPerFile, type WorkflowBody } from './kit';

const kit = abuseStackPerFile();

/** A start node fanned out to `n` spinning code nodes side by side. */
function spinners(n: number): WorkflowBody {
  const nodes = Array.from({ length: n }, (_, i) => codeNode(F6_SOURCE, `spin${i + 1}`));
  return { nodes: [{ id: 'start', type: 'start', config: {} }, ...nodes], edges: nodes.map((n) => ({ source: 'start', target: n.id })) };
}

test(`a dry run with ${F6_SPINNERS} code nodes of while(true){}: fails at the time limit, B probes meanwhile and after`, async () => {
  await kit.survives(async () => {
    const res = await kit.dryRun(kit.a, spinners(F6_SPINNERS));
    expectDryRunEnded(res, /time limit/i);
  });
});

/** Spinners per dry run when several run at once: still more than A's share of code threads (the 40 of the finding are the case above). */
const CONCURRENT_SPINNERS = 8;

test(`three dry runs of ${CONCURRENT_SPINNERS} such nodes at once: each fails at the time limit, B probes meanwhile`, async () => {
  await kit.survives(async () => {
    const all = await Promise.all([1, 2, 3].map(() => kit.dryRun(kit.a, spinners(CONCURRENT_SPINNERS))));
    for (const res of all) expectDryRunEnded(res, /time limit/i);
  });
});

test(`a live run with ${F6_SPINNERS} spinning code nodes side by side: fails at the time limit, B probes meanwhile`, async () => {
  await kit.survives(async () => {
    const run = await kit.runLive(kit.a, spinners(F6_SPINNERS));
    expectFailedNode(run, /time limit/i);
  });
});

test(`${F6_SPINNERS} live runs of one spinning code node at once: each fails at the time limit, B probes meanwhile`, async () => {
  await kit.survives(async () => {
    const id = await kit.createWorkflow(kit.a, spinners(1));
    await kit.deploy(kit.a, id);
    const started = await Promise.all(Array.from({ length: F6_SPINNERS }, () => kit.execute(kit.a, id)));
    // Below run admission's per-workspace limit (50), so every start is accepted.
    expect(started.map((s) => s.status)).toEqual(started.map(() => 202));
    for (const s of started) expectFailedNode(await kit.waitForRun(kit.a, s.body.run.id), /time limit/i, 'spin1');
  });
});
