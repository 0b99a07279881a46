/**
 * Issue 26, F7: a code node allocating 300 × 1 MiB TypedArrays succeeded past the 32 MiB
 * limit and the process kept the 300 MB. Contract: every allocation counts, so the node fails
 * with a memory error, in live and dry runs, and B keeps running.
 */
import { F7_SOURCES } from './attacks';
import { codeNode, expectDryRunEnded, expectFailedNode, abuseStackPerFile } from './kit';

const kit = abuseStackPerFile();

/**
 * The memory error; or, on a machine too busy to give the thread the CPU to reach the limit
 * within the node's 1 s wall-clock budget, the time limit. Either way the allocations failed
 * and nothing was kept; what must never happen is a run that succeeds.
 */
const MEMORY = /memory|time limit/i;

describe.each(Object.entries(F7_SOURCES))('a code node allocating %s', (_name, source) => {
  test('fails with a memory error in a live run; B probes meanwhile and after', async () => {
    await kit.survives(async () => {
      const run = await kit.runLive(kit.a, [codeNode(source)]);
      expectFailedNode(run, MEMORY, 'code');
    });
  });

  test('fails with a memory error in a dry run; B probes meanwhile and after', async () => {
    await kit.survives(async () => {
      const res = await kit.dryRun(kit.a, [codeNode(source)]);
      expectDryRunEnded(res, MEMORY);
      if (res.status === 201) expect(res.body.run.status).toBe('failed');
    });
  });
});

test('ten live runs allocating 300 × 1 MiB Uint8Array at once: each fails with a memory error', async () => {
  await kit.survives(async () => {
    const runs = await Promise.all(Array.from({ length: 10 }, () => kit.runLive(kit.a, [codeNode(F7_SOURCES['300 × 1 MiB Uint8Array'])])));
    for (const run of runs) expectFailedNode(run, MEMORY, 'code');
  });
});
