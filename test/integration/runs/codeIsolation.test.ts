/** Issue 10 item 1: code nodes run off the API's and the worker's thread, and every call ends at its deadline. */
import { http, waitForRun } from '../../support/harness';
import { useTestStack } from '../../kit';

const stack = useTestStack();

/** A deployed workflow whose single code node runs `source` once (no retries). */
async function codeWorkflow(source: string): Promise<string> {
  const created = await http(stack.app, 'POST', '/api/v1/workflows', {
    token: stack.ws.token,
    body: {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'code', type: 'code', config: { source }, retry: { maxAttempts: 1, backoffSeconds: 0 } },
      ],
      edges: [{ source: 'start', target: 'code' }],
    },
  });
  expect(created.status).toBe(201);
  const id = created.body.workflow.id as string;
  expect((await http(stack.app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: stack.ws.token })).status).toBe(200);
  return id;
}

async function startRun(workflowId: string): Promise<string> {
  const exec = await http(stack.app, 'POST', `/api/v1/workflows/${workflowId}/execute`, { token: stack.ws.token, body: { input: {} } });
  expect(exec.status).toBe(202);
  return exec.body.run.id as string;
}

/** GET /healthz in a loop until `stop` resolves; returns every answer's latency. */
async function measureHealthz(stop: Promise<unknown>): Promise<number[]> {
  let done = false;
  void stop.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const started = Date.now();
    const res = await fetch(`${stack.app.url}/healthz`);
    await res.text();
    latencies.push(Date.now() - started);
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 25));
  }
  return latencies;
}

test('ten concurrent while(true) code nodes fail at their deadline while /healthz keeps answering', async () => {
  const workflowId = await codeWorkflow('while (true) {}');
  const runIds = await Promise.all(Array.from({ length: 10 }, () => startRun(workflowId)));
  const finished = Promise.all(runIds.map((id) => waitForRun(stack.app, stack.ws.token, id, undefined, 45_000)));
  const latencies = await measureHealthz(finished);
  const runs = await finished;
  for (const run of runs) {
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/Code exceeded its time limit of 1000 ms/);
  }
  // Outcome, not timing (the issue saw /healthz silent for 19 of 20.7 s): it answered 200 while the guests
  // still spun. The first answer arriving before the runs ended is what a second request proves; how many
  // answers fit in the runs' time depends on the machine's load.
  expect(latencies.length).toBeGreaterThan(1);
});

test('an async function that swallows the interrupt fails the node at the deadline instead of running 10 s', async () => {
  const workflowId = await codeWorkflow(
    'async function spin(){ for(;;){} } let n=0; const t=Date.now(); while(Date.now()-t < 10000){ spin(); n++ } return {n, ms: Date.now()-t}',
  );
  const runId = await startRun(workflowId);
  const latencies = await measureHealthz(waitForRun(stack.app, stack.ws.token, runId));
  const run = await waitForRun(stack.app, stack.ws.token, runId);
  expect(run.status).toBe('failed');
  expect(run.error).toMatch(/Code exceeded its time limit of 1000 ms/);
  expect(run.steps.find((s: { nodeId: string }) => s.nodeId === 'code')).toMatchObject({ status: 'failed' });
  expect(latencies.length).toBeGreaterThan(0);
});

test('a dry run of for(;;) spin() answers with a failed run, and the API keeps answering meanwhile', async () => {
  const created = await http(stack.app, 'POST', '/api/v1/workflows', {
    token: stack.ws.token,
    body: {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'code', type: 'code', config: { source: 'async function spin(){ for(;;){} }\nfor(;;) spin();' } },
      ],
      edges: [{ source: 'start', target: 'code' }],
    },
  });
  const dry = http(stack.app, 'POST', `/api/v1/workflows/${created.body.workflow.id}/execute`, {
    token: stack.ws.token,
    body: { target: 'candidate', input: {} },
  });
  const latencies = await measureHealthz(dry);
  const res = await dry;
  expect(res.status).toBe(201);
  expect(res.body.run).toMatchObject({ status: 'failed', dryRun: true });
  expect(res.body.run.error).toMatch(/Code exceeded its time limit of 1000 ms/);
  expect(latencies.length).toBeGreaterThan(0);
});
