/**
 * Issue 26, F1: a live code node throwing an error whose message holds a lone surrogate
 * (`"e" + String.fromCharCode(0xd800)`) failed the Temporal worker (the failure proto must be
 * valid UTF-8), and the run's retried workflow task failed every new worker. Now the failure
 * crosses into Temporal with U+FFFD in place of the bad code unit: the run ends `failed` with a
 * readable message, and the worker (a real worker process, as production runs it) keeps polling
 * for every workspace, across a restart with the poisonous run still in Temporal.
 */
import type { ChildProcess } from 'node:child_process';
import { createWorkspace, line, node, useTestStack, waitRun, type NodeInput, type WorkspaceFixture } from '../../kit';
import { killWorker, spawnWorker } from '../../support/workerProcess';

let attacker: WorkspaceFixture;
let bystander: WorkspaceFixture;
let worker: ChildProcess | undefined;

// The bundle global setup built (with our converters in it): no webpack at each worker start.
const startWorker = () => spawnWorker();

/** Workers are real worker processes here: none in the test process. */
const stack = useTestStack({ worker: false, workspaceName: 'Attacker' });
beforeAll(async () => {
  attacker = stack.ws;
  bystander = await createWorkspace(stack.app, 'Bystander');
});
stack.beforeClose(async () => {
  if (worker) await killWorker(worker);
});

async function execute(ws: WorkspaceFixture, nodes: NodeInput[]): Promise<string> {
  const api = stack.as(ws.token);
  const created = await api.workflows.create(line(node.start(), ...nodes));
  expect(created.status).toBe(201);
  const id = created.body.workflow.id;
  expect((await api.workflows.deploy(id)).status).toBe(200);
  const exec = await api.workflows.execute(id, { n: 2 });
  expect(exec.status).toBe(202);
  return exec.body.run.id;
}

// Retries only absorb a sandbox time limit hit on a busy machine; the throw fails every attempt the same way.
const RETRY = { maxAttempts: 4, backoffSeconds: 0.1 };
const POISON: NodeInput = {
  id: 'poison',
  type: 'code',
  retry: RETRY,
  config: { source: 'throw new Error("e" + String.fromCharCode(0xd800));' },
};

/** Workspace B's probe: a transform and a code node; it must succeed whatever A did. */
async function probeSucceeds(): Promise<void> {
  const runId = await execute(bystander, [
    { id: 'double', type: 'transform', config: { expression: '{ "n": n * 2 }' } },
    { id: 'code', type: 'code', retry: RETRY, config: { source: 'return { n: input.n + 1 };' } },
  ]);
  const done = await waitRun(stack, runId, { token: bystander.token, timeoutMs: 60_000 });
  expect(done.status).toBe('succeeded');
  expect(done.output).toEqual({ n: 5 });
}

/** The run failed in PostgreSQL and in Temporal, with U+FFFD where the lone surrogate was. */
async function expectPoisonFailedReadably(runId: string): Promise<void> {
  const done = await waitRun(stack, runId, { token: attacker.token, timeoutMs: 60_000 });
  expect(done.status).toBe('failed');
  expect(done.error).toContain('e\ufffd');
  expect(done.steps.find((s) => s.nodeId === 'poison')).toMatchObject({
    status: 'failed',
    error: expect.stringContaining('e\ufffd'),
  });
  const handle = stack.app.deps.temporal.client.workflow.getHandle(runId);
  const description = await handle.describe();
  expect(description.status.name).toBe('FAILED');
  const failure = await handle.result().then(
    () => null,
    (err: Error) => err,
  );
  expect(String((failure?.cause as Error | undefined)?.message)).toContain('e\ufffd');
}

test('F1: the lone-surrogate error fails only its run, and the worker keeps serving every workspace', async () => {
  worker = await startWorker();
  const runId = await execute(attacker, [POISON]);
  await expectPoisonFailedReadably(runId);
  expect(worker.exitCode).toBeNull();
  await probeSucceeds();
}, 180_000);

test('F1 across a restart: the poisonous run is still in Temporal when a new worker starts; that worker keeps polling', async () => {
  worker ??= await startWorker();
  // The wait parks the run in Temporal, so the throw happens on the new worker, after replay.
  const runId = await execute(attacker, [{ id: 'pause', type: 'wait', config: { seconds: 2 } }, POISON]);
  await waitRun(stack, runId, { token: attacker.token, until: (run) => run.status === 'waiting' });
  await killWorker(worker);
  // Started while no worker polls: it waits in Temporal with the poisonous run.
  const second = await execute(attacker, [POISON]);
  worker = await startWorker();
  await expectPoisonFailedReadably(runId);
  await expectPoisonFailedReadably(second);
  await probeSucceeds();
  // The same worker process is still alive and polling after both.
  expect(worker.exitCode).toBeNull();
  await probeSucceeds();
}, 240_000);
