/**
 * Issue 26, F1: a live code node throws (or logs, or returns) text that is not well-formed
 * UTF-16 or that PostgreSQL cannot store. It once failed the Temporal worker for every
 * workspace, and the run's retry killed each new worker within seconds. Contract: A's run
 * fails (or succeeds) with well-formed text, B keeps running, and a worker restarted while the
 * poisonous run is still in Temporal keeps polling.
 */
import { F1_SOURCES, F1_SUCCEEDING_SOURCES } from './attacks';
import { codeNode, expectFailedNode, expectWellFormed, abuseStackPerFile } from './kit';

const kit = abuseStackPerFile();

describe.each(Object.entries(F1_SOURCES))('a live code node with %s', (_name, source) => {
  test('fails its node with well-formed text; B probes meanwhile and after; the worker keeps polling', async () => {
    await kit.survives(async () => {
      const run = await kit.runLive(kit.a, [codeNode(source)]);
      expectFailedNode(run, /poison|Bad/, 'code');
      expectWellFormed({ error: run.error, steps: run.steps });
      const logs = await kit.request(kit.a, 'GET', `/api/v1/logs/executions/${run.id}`);
      expect(logs.status).toBe(200);
      expectWellFormed(logs.body);
    });
  });
});

describe.each(Object.entries(F1_SUCCEEDING_SOURCES))('a live code node with %s', (_name, source) => {
  test('succeeds with the text made well-formed; B probes meanwhile and after', async () => {
    await kit.survives(async () => {
      const run = await kit.runLive(kit.a, [codeNode(source)]);
      expect({ status: run.status, error: run.error ?? null }).toEqual({ status: 'succeeded', error: null });
      expectWellFormed({ output: run.output, steps: run.steps });
      expect(run.output).toMatchObject({ logged: true });
      const detail = await kit.request(kit.a, 'GET', `/api/v1/logs/executions/${run.id}`);
      expect(detail.status).toBe(200);
      expectWellFormed(detail.body);
    });
  });
});

test('a worker restarted while the poisonous run is still in Temporal keeps polling, and the run ends failed', async () => {
  await kit.survives(async () => {
    const id = await kit.createWorkflow(kit.a, {
      nodes: [{ id: 'start', type: 'start', config: {} }, codeNode(F1_SOURCES['a thrown message with a lone high surrogate'])],
      edges: [{ source: 'start', target: 'code' }],
    });
    await kit.deploy(kit.a, id);
    // Let the poisonous run reach the worker (and today fail it: the run then stays in Temporal,
    // unfinished) before the restart, so the new worker meets it again.
    const exec = await kit.execute(kit.a, id);
    expect(exec.status).toBe(202);
    await kit.waitForRun(kit.a, exec.body.run.id).catch(() => undefined);
    await kit.restartWorker();
    const more = await Promise.all([kit.execute(kit.a, id), kit.execute(kit.a, id)]);
    for (const m of more) expect(m.status).toBe(202);
    for (const runId of [exec.body.run.id, ...more.map((m) => m.body.run.id)]) {
      const run = await kit.waitForRun(kit.a, runId);
      expectFailedNode(run, /poison/, 'code');
    }
  });
});
