/**
 * Abuse cases of the sandbox host (issue 26 items 2, 5 and 7; rows F3 (dry runs on the API's
 * event loop), F4 and F6; F7 is test/abuse/f7SandboxMemory.test.ts): A's code and dry runs run in the sandbox host, a child process
 * with per-workspace fair queues, memory caps and outside deadlines, so B's probe keeps
 * succeeding and /healthz keeps answering; a kill -9 of the host mid-load heals by itself.
 * Outcomes only: generous deadlines, no timings.
 */
import { closeSandboxPool, configureSandbox, sandboxHostPid, sandboxHostStats } from '../../services/kernel/sandbox/sandbox';
import { RunSchema } from '../../db/entities';
import { waitForRun } from '../support/harness';
import {
  chain,
  codeNode,
  PROBE_INPUT,
  PROBE_OUTPUT,
  startAbuseStack,
  transformNode,
  type AbuseStack,
  type GraphNode,
  type WorkflowBody,
} from './kit';

/** A short dry-run deadline, so a runaway dry run ends within the case (the default is 30 s). */
const DRY_RUN_TIMEOUT_MS = 8_000;

let kit: AbuseStack;
beforeAll(async () => {
  await closeSandboxPool();
  configureSandbox({ dryRunTimeoutMs: DRY_RUN_TIMEOUT_MS });
  kit = await startAbuseStack();
}, 120_000);
afterAll(async () => {
  await kit?.close();
  configureSandbox({});
});

/**
 * Creates the workflow and dry-runs its candidate (no deploy needed). The kit's `dryRun` executes
 * the active version, which an undeployed workflow does not have (400).
 */
async function dryRun(nodes: GraphNode[] | WorkflowBody, input: unknown = {}) {
  const id = await kit.createWorkflow(kit.a, Array.isArray(nodes) ? chain(nodes) : nodes);
  return kit.request(kit.a, 'POST', `/api/v1/workflows/${id}/execute`, { input, target: 'candidate', dryRun: true });
}

/** start → `count` code nodes side by side, each running `source` (a failure continues, so every node runs). */
function fanOut(count: number, source: string): WorkflowBody {
  const nodes: GraphNode[] = [{ id: 'start', type: 'start', config: {} }];
  for (let i = 0; i < count; i++) nodes.push({ ...codeNode(source, `spin${i}`), onError: 'continue' });
  return { name: `fan-out of ${count}`, nodes, edges: nodes.slice(1).map((n) => ({ source: 'start', target: n.id })) };
}

const SPIN = 'while (true) {}';

test("F6: A runs 40 spinning code nodes live; B's probe succeeds meanwhile", async () => {
  await kit.survives(async () => {
    const run = await kit.runLive(kit.a, fanOut(40, SPIN));
    expect(['succeeded', 'failed']).toContain(run.status);
    const spins = run.steps.filter((s: { nodeId: string }) => s.nodeId.startsWith('spin'));
    expect(spins.length).toBeGreaterThan(0);
    for (const s of spins) expect(s.status).toBe('failed');
  });
});

test("F6: A dry-runs 40 spinning code nodes; it ends failed with a clear message, B's probe succeeds meanwhile", async () => {
  await kit.survives(async () => {
    const res = await dryRun(fanOut(40, SPIN));
    expect([res.status, res.text.slice(0, 300)]).toEqual([201, expect.anything()]);
    expect(res.body.run.dryRun).toBe(true);
    // Every node fails at its deadline and the run goes on (onError continue), or the dry run's own deadline ends it.
    if (res.body.run.status === 'failed') expect(res.body.run.error).toMatch(/time limit/);
    else expect(res.body.run.status).toBe('succeeded');
  });
});

test('F3/F4: dry runs with heavy expressions end with an outcome (never a 500 or a queued row) while the API keeps answering', async () => {
  await kit.survives(async () => {
    const heavy = [
      '$count($sort([1..100000]))',
      '$count($distinct([1..60000]))',
      '$length($replace($pad("", 1000000, "a"), /a/, "b"))',
      // F4's picture, in a dry run: it runs in a graph thread of the sandbox host, not on the API's event loop.
      `$exists($toMillis("${'1'.repeat(40)}x", "[f][f][f][f][f][f][f][f][f][f]"))`,
    ];
    for (const expression of heavy) {
      const res = await dryRun([transformNode(expression)]);
      expect([res.status, res.text.slice(0, 300)]).toEqual([201, expect.anything()]);
      expect(['succeeded', 'failed']).toContain(res.body.run.status);
      if (res.body.run.status === 'failed') expect(res.body.run.error).toEqual(expect.any(String));
    }
  });
});

test('a dry run past its deadline is stopped from outside and stored failed', async () => {
  // 20 spinning code nodes one after another (each failing at 1 s and continuing) outlast the dry run's deadline.
  const nodes = Array.from({ length: 20 }, (_, i) => ({
    ...codeNode('async function s(){ for(;;){} }\nfor(;;) s();', `c${i}`),
    onError: 'continue',
  }));
  const res = await dryRun(nodes);
  expect(res.status).toBe(201);
  expect(res.body.run).toMatchObject({
    status: 'failed',
    dryRun: true,
    error: `The dry run exceeded its time limit of ${DRY_RUN_TIMEOUT_MS} ms and was stopped`,
  });
  await kit.assertNoQueuedRuns(kit.a);
});

test('item 7: kill -9 of the sandbox host mid-load; it comes back by itself and every run completes exactly once', async () => {
  const restartsBefore = sandboxHostStats.restarts;
  // Make sure a host runs, then load it: B's live probes and A's dry runs with a code node that works a little.
  await kit.probeB();
  const first = sandboxHostPid()!;
  expect(first).toBeDefined();
  const work = 'let x = 0; for (let i = 0; i < 300000; i++) x += i % 7; return { x, n: input.n ?? null };';
  const dryWorkflow = await kit.createWorkflow(kit.a, chain([codeNode(work)]));
  const liveRuns = Array.from({ length: 6 }, async () => {
    const exec = await kit.execute(kit.b, kit.probeWorkflowId, PROBE_INPUT);
    expect(exec.status).toBe(202);
    return exec.body.run.id as string;
  });
  const dryRuns = Array.from({ length: 3 }, (_, n) =>
    kit.request(kit.a, 'POST', `/api/v1/workflows/${dryWorkflow}/execute`, { input: { n }, target: 'candidate', dryRun: true }),
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  process.kill(first, 'SIGKILL');

  const ids = await Promise.all(liveRuns);
  for (const id of ids) {
    const run = await waitForRun(kit.app, kit.b.token, id, undefined, 120_000);
    expect({ status: run.status, output: run.output, error: run.error ?? null }).toEqual({
      status: 'succeeded',
      output: PROBE_OUTPUT,
      error: null,
    });
  }
  const dry = await Promise.all(dryRuns);
  for (const [n, res] of dry.entries()) {
    expect([res.status, res.text.slice(0, 300)]).toEqual([201, expect.anything()]);
    expect(res.body.run).toMatchObject({ status: 'succeeded', dryRun: true, output: { x: expect.any(Number), n } });
  }
  // Exactly once: one row per accepted request, none left queued or running.
  const em = kit.app.orm.em.fork();
  expect(await em.count(RunSchema, { id: { $in: ids } })).toBe(ids.length);
  expect(await em.count(RunSchema, { workflowId: dryWorkflow })).toBe(dry.length);
  await kit.assertNoQueuedRuns(kit.a);
  await kit.assertNoQueuedRuns(kit.b);
  // The host came back by itself and serves B again.
  expect(sandboxHostStats.restarts).toBeGreaterThan(restartsBefore);
  await kit.probeB();
  expect(sandboxHostPid()).not.toBe(first);
  await kit.healthz();
  const metrics = await (await fetch(`${kit.app.url}/metrics`)).text();
  expect(Number(/svc_sandbox_host_events_total\{event="restarts"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThan(0);
});
