/**
 * Issue 26, F8: a dry run whose code node returned "x\u0000y" or a lone surrogate answered
 * 500 and left its run row `queued` for ever; 50 such rows made run admission refuse every
 * live run of that workspace with 503. Contract: the dry run answers 201 with the run ended
 * and its text well-formed, no row is left queued, and later live runs of A and B are admitted.
 */
import { F8_FLOOD, F8_SOURCES } from './attacks';
import { codeNode, expectWellFormed, abuseStackPerFile } from './kit';

const kit = abuseStackPerFile();

describe.each(Object.entries(F8_SOURCES))('a dry run whose code node %s', (_name, source) => {
  test('answers 201 with the run ended and well-formed text; nothing left queued; B probes meanwhile and after', async () => {
    await kit.survives(async () => {
      const res = await kit.dryRun(kit.a, [codeNode(source)]);
      expect([res.status, res.text.slice(0, 300)]).toEqual([201, expect.anything()]);
      expect(['succeeded', 'failed']).toContain(res.body.run.status);
      expectWellFormed(res.body);
      const stored = await kit.request(kit.a, 'GET', `/api/v1/runs/${res.body.run.id}`);
      expect(stored.status).toBe(200);
      expect(stored.body.run.status).toBe(res.body.run.status);
    });
  });
});

test(`${F8_FLOOD} such dry runs leave no run queued, and A's and B's live runs are still admitted`, async () => {
  await kit.survives(async () => {
    const sources = Object.values(F8_SOURCES);
    const ids = await Promise.all(
      sources.map((s) =>
        kit.createWorkflow(kit.a, {
          nodes: [{ id: 'start', type: 'start', config: {} }, codeNode(s)],
          edges: [{ source: 'start', target: 'code' }],
        }),
      ),
    );
    for (let i = 0; i < F8_FLOOD; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => kit.dryRunWorkflow(kit.a, ids[(i + j) % ids.length])));
      for (const res of batch) expect(res.status).toBe(201);
    }
    await kit.assertNoQueuedRuns(kit.a);
    // Admission counts A's unfinished runs: a live run of A must be admitted (202) and run.
    await kit.assertWorkerPolling(kit.a);
    await kit.assertWorkerPolling(kit.b);
  });
});
