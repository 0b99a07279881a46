/** Durable waits: timers, approvals and events — resumed, timed out, canceled, and surviving a worker restart. */
import type { z } from 'zod';
import type { approvalResultSchema, resumeResultSchema } from '../../../api/schemas/runs';
import { startTestWorker } from '../../support/harness';
import { addUserWithKey, createWorkspace, signInCookie, useTestStack, waitRun, type Refusable, type Run, type TestWorker } from '../../kit';

type ApprovalAnswer = Refusable<z.infer<typeof approvalResultSchema>>;
type ResumeAnswer = Refusable<z.infer<typeof resumeResultSchema>>;

const stack = useTestStack();
/** The worker that replaces the stack's in the restart test; stopped before the stack closes. */
let worker: TestWorker | undefined;
stack.beforeClose(() => worker?.stop());

async function start(nodes: object[], edges: object[], input: unknown = {}, token = stack.ws.token): Promise<string> {
  const created = await stack.as(token).workflows.create({ nodes: [{ id: 'start', type: 'start', config: {} }, ...nodes], edges });
  const id = created.body.workflow.id;
  expect((await stack.as(token).workflows.deploy(id)).status).toBe(200);
  const exec = await stack.as(token).workflows.execute(id, input);
  expect(exec.status).toBe(202);
  return exec.body.run.id;
}
/** The path of an event wait's resume URL; fails the test when the wait has none. */
function resumePath(wait: { resumeUrl?: string }): string {
  if (!wait.resumeUrl) throw new Error(`the wait has no resumeUrl: ${JSON.stringify(wait)}`);
  return new URL(wait.resumeUrl).pathname;
}
const waiting = (kind: string) => (run: Run) => run.status === 'waiting' && run.waits.some((w) => w.kind === kind);

const approvalGraph = (timeoutSeconds?: number) => ({
  nodes: [
    { id: 'gate', type: 'approval', config: { prompt: 'Ship it?', ...(timeoutSeconds ? { timeoutSeconds } : {}) }, onError: 'branch' },
    { id: 'yes', type: 'transform', config: { expression: '"shipped: " & comment' } },
    { id: 'no', type: 'transform', config: { expression: '"stopped"' } },
    { id: 'late', type: 'transform', config: { expression: '"timed out"' } },
  ],
  edges: [
    { source: 'start', target: 'gate' },
    { source: 'gate', target: 'yes', sourceHandle: 'approved' },
    { source: 'gate', target: 'no', sourceHandle: 'rejected' },
    { source: 'gate', target: 'late', sourceHandle: 'error' },
  ],
});

test('a wait node is a durable timer: the run is waiting with a timer wait, then resumes', async () => {
  const runId = await start(
    [
      { id: 'pause', type: 'wait', config: { seconds: 2 } },
      { id: 'after', type: 'transform', config: { expression: '"done"' } },
    ],
    [
      { source: 'start', target: 'pause' },
      { source: 'pause', target: 'after' },
    ],
  );
  const parked = await waitRun(stack, runId, { until: waiting('timer') });
  expect(parked.waits).toEqual([{ kind: 'timer', nodeId: 'pause', since: expect.any(String), until: expect.any(String) }]);
  expect(parked.steps.find((s) => s.nodeId === 'pause')?.status).toBe('waiting');
  const done = await waitRun(stack, runId);
  expect(done).toMatchObject({ status: 'succeeded', output: 'done', waits: [] });
});

test('an approval waits, is decided once through POST /api/runs/{id}/approval, and takes the chosen path', async () => {
  const g = approvalGraph();
  const runId = await start(g.nodes, g.edges);
  const parked = await waitRun(stack, runId, { until: waiting('approval') });
  expect(parked.waits[0]).toMatchObject({ kind: 'approval', nodeId: 'gate', prompt: 'Ship it?' });

  const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
  const refused = await stack.as(viewer.token).post<ApprovalAnswer>(`/api/runs/${runId}/approval`, { decision: 'approved' });
  expect(refused.status).toBe(403);
  expect((await stack.api.post<ApprovalAnswer>(`/api/runs/${runId}/approval`, { decision: 'maybe' })).status).toBe(400);

  const decided = await stack.api.post<ApprovalAnswer>(`/api/runs/${runId}/approval`, { decision: 'approved', comment: 'LGTM' });
  expect(decided.status).toBe(200);
  expect(decided.body.approval).toEqual({ nodeId: 'gate', decision: 'approved' });
  const again = await stack.api.post<ApprovalAnswer>(`/api/runs/${runId}/approval`, { decision: 'rejected' });
  expect(again.status).toBe(409);

  const done = await waitRun(stack, runId);
  expect(done).toMatchObject({ status: 'succeeded', output: 'shipped: LGTM' });
  expect(done.steps.find((s) => s.nodeId === 'gate')?.output).toMatchObject({
    decision: 'approved',
    comment: 'LGTM',
    decidedBy: stack.ws.ownerId,
  });
});

test('a session member can reject an approval; a cross-origin session request cannot', async () => {
  const g = approvalGraph();
  const runId = await start(g.nodes, g.edges);
  await waitRun(stack, runId, { until: waiting('approval') });
  const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
  const csrf = await stack
    .as()
    .post<ApprovalAnswer>(`/api/runs/${runId}/approval`, { decision: 'rejected' }, { cookie, headers: { origin: 'https://evil.example' } });
  expect(csrf.status).toBe(403);
  const res = await stack.as().post<ApprovalAnswer>(`/api/runs/${runId}/approval`, { decision: 'rejected' }, { cookie });
  expect(res.status).toBe(200);
  expect((await waitRun(stack, runId)).output).toBe('stopped');
});

test('an approval that times out takes the error path', async () => {
  const g = approvalGraph(1);
  const runId = await start(g.nodes, g.edges);
  const done = await waitRun(stack, runId);
  expect(done).toMatchObject({ status: 'succeeded', output: 'timed out' });
  expect(done.steps.find((s) => s.nodeId === 'gate')).toMatchObject({
    status: 'failed',
    error: expect.stringMatching(/timed out/),
  });
});

test('an event wait lists a single-use resume URL; the JSON body becomes the node output', async () => {
  const runId = await start(
    [
      { id: 'hook', type: 'event', config: {} },
      { id: 'use', type: 'transform', config: { expression: '"paid " & $string(amount)' } },
    ],
    [
      { source: 'start', target: 'hook' },
      { source: 'hook', target: 'use' },
    ],
  );
  const parked = await waitRun(stack, runId, { until: waiting('event') });
  const wait = parked.waits[0];
  expect(wait).toEqual({
    kind: 'event',
    nodeId: 'hook',
    since: expect.any(String),
    resumeUrl: expect.stringMatching(new RegExp(`^${stack.app.url}/api/hooks/resume/rt_`)),
  });
  const path = resumePath(wait);

  expect((await stack.as().post('/api/hooks/resume/rt_unknown')).status).toBe(404);
  const resumed = await stack.as().post<ResumeAnswer>(path, { amount: 42 });
  expect(resumed.status).toBe(202);
  expect(resumed.body).toEqual({ runId, nodeId: 'hook', status: 'resumed' });
  const second = await stack.as().post(path, { amount: 1 });
  expect(second.status).toBe(409);

  const done = await waitRun(stack, runId);
  expect(done).toMatchObject({ status: 'succeeded', output: 'paid 42' });
  expect(done.steps.find((s) => s.nodeId === 'hook')?.output).toEqual({ amount: 42 });
});

test('an event wait that times out fails its node; its token is then refused', async () => {
  const runId = await start([{ id: 'hook', type: 'event', config: { timeoutSeconds: 1 } }], [{ source: 'start', target: 'hook' }]);
  const parked = await waitRun(stack, runId, { until: waiting('event') });
  expect(parked.waits[0].expiresAt).toEqual(expect.any(String));
  const path = resumePath(parked.waits[0]);
  const done = await waitRun(stack, runId);
  expect(done).toMatchObject({ status: 'failed', errorNodeId: 'hook', error: expect.stringMatching(/timed out/) });
  expect((await stack.as().post(path, {})).status).toBe(409);
});

test('a waiting run can be canceled through Temporal cancellation', async () => {
  const g = approvalGraph();
  const runId = await start(g.nodes, g.edges);
  await waitRun(stack, runId, { until: waiting('approval') });
  const res = await stack.api.runs.cancel(runId);
  expect(res.status).toBe(200);
  expect(res.body.run.status).toBe('canceled');
  expect(res.body.run.waits).toEqual([]);
  const handle = stack.app.deps.temporal.client.workflow.getHandle(runId);
  await handle.result().catch(() => undefined);
  expect((await handle.describe()).status.name).toBe('CANCELLED');
  expect((await stack.api.runs.cancel(runId)).status).toBe(409);
  expect((await stack.api.post<ApprovalAnswer>(`/api/runs/${runId}/approval`, { decision: 'approved' })).status).toBe(409);
});

test('waits and their tokens survive a worker restart', async () => {
  const runId = await start(
    [
      { id: 'hook', type: 'event', config: {} },
      { id: 'gate', type: 'approval', config: {} },
    ],
    [
      { source: 'start', target: 'hook' },
      { source: 'hook', target: 'gate' },
    ],
  );
  const parked = await waitRun(stack, runId, { until: waiting('event') });
  await (worker ?? stack.worker).stop();
  worker = await startTestWorker(stack.app);
  expect((await stack.as().post(resumePath(parked.waits[0]), { step: 1 })).status).toBe(202);
  await waitRun(stack, runId, { until: waiting('approval') });
  await worker.stop();
  worker = await startTestWorker(stack.app);
  expect((await stack.api.post<ApprovalAnswer>(`/api/runs/${runId}/approval`, { decision: 'approved' })).status).toBe(200);
  expect((await waitRun(stack, runId)).status).toBe('succeeded');
});

test("another workspace's key cannot approve, cancel or see the run", async () => {
  const g = approvalGraph();
  const runId = await start(g.nodes, g.edges);
  await waitRun(stack, runId, { until: waiting('approval') });
  const other = await createWorkspace(stack.app, 'Intruder');
  expect((await stack.as(other.token).post<ApprovalAnswer>(`/api/runs/${runId}/approval`, { decision: 'approved' })).status).toBe(404);
  expect((await stack.as(other.token).runs.cancel(runId)).status).toBe(404);
  expect((await stack.as(other.token).runs.get(runId)).status).toBe(404);
  const still = await stack.api.runs.get(runId);
  expect(still.body.run.status).toBe('waiting');
  await stack.api.runs.cancel(runId);
});
