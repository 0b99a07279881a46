/**
 * Parked runs and the worker's sticky cache: a worker whose cache holds 2 runs parks more runs
 * than that on timers, approvals and events; the cache stays bounded (the others are evicted),
 * and every evicted run, replayed from its history when it wakes, ends with its own output.
 */
import { http, waitForRun } from '../../support/harness';
import { deployWorkflow, executeWorkflow, node, useTestStack } from '../../kit';

const CACHE_SIZE = 2;

const stack = useTestStack({ worker: { maxCachedWorkflows: CACHE_SIZE } });

const deploy = async (nodes: object[], edges: object[]) =>
  (await deployWorkflow(stack, { nodes: [node.start(), ...nodes], edges })).workflowId;

const execute = (workflowId: string, input: unknown) => executeWorkflow(stack, workflowId, input);

const waitingOn = (kind: string) => (run: any) => run.status === 'waiting' && run.waits.some((w: { kind: string }) => w.kind === kind);

/** Starts one run per input (one after another, so the cache sees them in this order) and waits until each is parked. */
async function park(workflowId: string, kind: string, inputs: string[]): Promise<Array<{ runId: string; name: string; run: any }>> {
  const out: Array<{ runId: string; name: string; run: any }> = [];
  for (const name of inputs) {
    const runId = await execute(workflowId, { name });
    out.push({ runId, name, run: await waitForRun(stack.app, stack.ws.token, runId, waitingOn(kind)) });
  }
  return out;
}

test('runs parked beyond the sticky cache are evicted and resume with their own output (approval, event, timer)', async () => {
  const approvalWf = await deploy(
    [
      { id: 'gate', type: 'approval', config: { prompt: 'Go?' } },
      { id: 'yes', type: 'transform', config: { expression: '"approved " & $trigger.name & ": " & comment' } },
      { id: 'no', type: 'transform', config: { expression: '"rejected " & $trigger.name' } },
    ],
    [
      { source: 'start', target: 'gate' },
      { source: 'gate', target: 'yes', sourceHandle: 'approved' },
      { source: 'gate', target: 'no', sourceHandle: 'rejected' },
    ],
  );
  const eventWf = await deploy(
    [
      { id: 'hook', type: 'event', config: {} },
      { id: 'use', type: 'transform', config: { expression: '"event " & $trigger.name & ": " & $string(amount)' } },
    ],
    [
      { source: 'start', target: 'hook' },
      { source: 'hook', target: 'use' },
    ],
  );
  // Long enough for the runs parked after these to push them out of the cache first.
  const timerWf = await deploy(
    [
      { id: 'pause', type: 'wait', config: { seconds: 15 } },
      { id: 'after', type: 'transform', config: { expression: '"timer " & $trigger.name' } },
    ],
    [
      { source: 'start', target: 'pause' },
      { source: 'pause', target: 'after' },
    ],
  );

  const approvals = await park(approvalWf, 'approval', ['a1', 'a2', 'a3']);
  const events = await park(eventWf, 'event', ['e1', 'e2', 'e3']);
  const timers = await park(timerWf, 'timer', ['t1', 't2', 't3']);
  // Parked last, never resumed: they hold the cache's slots, so every run above is out of it.
  const fillers = await park(approvalWf, 'approval', ['f1', 'f2', 'f3']);

  // 12 runs parked (the timers may have fired on a slow machine; the other 9 are certainly waiting),
  // yet the worker holds at most CACHE_SIZE of them.
  const cached = stack.worker.cachedWorkflows();
  expect(cached).toBeLessThanOrEqual(CACHE_SIZE);
  for (const p of [...approvals, ...events, ...fillers]) {
    expect((await http(stack.app, 'GET', `/api/v1/runs/${p.runId}`, { token: stack.ws.token })).body.run.status).toBe('waiting');
  }

  for (const [i, a] of approvals.entries()) {
    const decision = i === 2 ? 'rejected' : 'approved';
    const res = await http(stack.app, 'POST', `/api/runs/${a.runId}/approval`, {
      token: stack.ws.token,
      body: { decision, comment: `ok ${a.name}` },
    });
    expect(res.status).toBe(200);
  }
  for (const [i, e] of events.entries()) {
    const path = new URL(e.run.waits[0].resumeUrl).pathname;
    expect((await http(stack.app, 'POST', path, { body: { amount: 10 * (i + 1) } })).status).toBe(202);
  }

  const outputs = async (parked: Array<{ runId: string }>) => {
    const out: unknown[] = [];
    for (const p of parked) {
      const run = await waitForRun(stack.app, stack.ws.token, p.runId, undefined, 60_000);
      expect(run.status).toBe('succeeded');
      out.push(run.output);
    }
    return out;
  };
  expect(await outputs(approvals)).toEqual(['approved a1: ok a1', 'approved a2: ok a2', 'rejected a3']);
  expect(await outputs(events)).toEqual(['event e1: 10', 'event e2: 20', 'event e3: 30']);
  expect(await outputs(timers)).toEqual(['timer t1', 'timer t2', 'timer t3']);
  expect(stack.worker.cachedWorkflows()).toBeLessThanOrEqual(CACHE_SIZE);

  for (const f of fillers)
    expect((await http(stack.app, 'POST', `/api/v1/runs/${f.runId}/cancel`, { token: stack.ws.token })).status).toBe(200);
}, 180_000);
