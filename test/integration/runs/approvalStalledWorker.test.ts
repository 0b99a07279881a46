/**
 * Approvals while the worker is stalled (issue 27): the worker runs in its own process, in a
 * Temporal namespace of this file alone (no other file's worker answers for it), and is stopped
 * with SIGSTOP while a run waits on an approval. The approval call neither hangs nor answers
 * 5xx: after APPROVAL_ANSWER_WAIT_MS it answers 202 `queued: true`, the decision is queued
 * durably, and it takes effect once the worker runs again.
 */
import type { ChildProcess } from 'node:child_process';
import { createWorkspace, http, startTestApp, waitForRun, type TestApp, type WorkspaceFixture } from '../../support/harness';
import { testEnv } from '../../support/env';
import { ensureNamespace } from '../../support/namespaces';
import { killWorker, spawnWorker } from '../../support/workerProcess';

const NAMESPACE = 'approvals-stalled-worker';
let app: TestApp;
let ws: WorkspaceFixture;
let worker: ChildProcess | undefined;

beforeAll(async () => {
  await ensureNamespace(NAMESPACE);
  app = await startTestApp({ approvalAnswerWaitMs: 1_500 }, undefined, { namespace: NAMESPACE });
  ws = await createWorkspace(app);
  worker = await spawnWorker({ TEMPORAL_NAMESPACE: NAMESPACE, WORKFLOW_BUNDLE_PATH: testEnv('workflowBundle') });
}, 120_000);
afterAll(async () => {
  if (worker) {
    worker.kill('SIGCONT');
    await killWorker(worker);
  }
  await app?.close();
});

async function deployApprovalWorkflow(): Promise<string> {
  const created = await http(app, 'POST', '/api/v1/workflows', {
    token: ws.token,
    body: {
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'gate', type: 'approval', config: { prompt: 'Ship it?' } },
        { id: 'yes', type: 'transform', config: { expression: '"approved: " & comment' } },
        { id: 'no', type: 'transform', config: { expression: '"rejected: " & comment' } },
      ],
      edges: [
        { source: 'start', target: 'gate' },
        { source: 'gate', target: 'yes', sourceHandle: 'approved' },
        { source: 'gate', target: 'no', sourceHandle: 'rejected' },
      ],
    },
  });
  expect(created.status).toBe(201);
  const id = created.body.workflow.id;
  expect((await http(app, 'POST', `/api/v1/workflows/${id}/deploy`, { token: ws.token })).status).toBe(200);
  return id;
}

const approve = (runId: string, body: Record<string, unknown>) =>
  http(app, 'POST', `/api/runs/${runId}/approval`, { token: ws.token, body });

test('with the worker stalled, approvals answer 202 queued (never 5xx), and the decision applies once the worker runs again', async () => {
  const workflowId = await deployApprovalWorkflow();
  const exec = await http(app, 'POST', `/api/v1/workflows/${workflowId}/execute`, { token: ws.token, body: { input: {} } });
  expect(exec.status).toBe(202);
  const runId = exec.body.run.id;
  await waitForRun(
    app,
    ws.token,
    runId,
    (run) => run.status === 'waiting' && run.waits.some((w: { kind: string }) => w.kind === 'approval'),
    60_000,
  );

  worker!.kill('SIGSTOP');
  const first = await approve(runId, { decision: 'approved', comment: 'first' });
  expect(first.status).toBe(202);
  expect(first.body).toMatchObject({
    queued: true,
    approval: { nodeId: 'gate', decision: 'approved' },
    run: { id: runId, status: 'waiting' },
  });
  // A retry while stalled is queued too; the node is decided once when the worker runs.
  const again = await approve(runId, { decision: 'approved', comment: 'first', nodeId: 'gate' });
  expect(again.status).toBe(202);
  expect(again.body).toMatchObject({ queued: true, approval: { nodeId: 'gate', decision: 'approved' } });
  // What the projection can refuse is still a clear 409.
  const elsewhere = await approve(runId, { decision: 'approved', nodeId: 'nowhere' });
  expect(elsewhere.status).toBe(409);
  expect(elsewhere.body).toEqual({ error: 'The run is not waiting for an approval at node "nowhere".' });

  worker!.kill('SIGCONT');
  const run = await waitForRun(app, ws.token, runId, undefined, 120_000);
  expect(run.status).toBe('succeeded');
  expect(run.output).toBe('approved: first');
  expect((await approve(runId, { decision: 'rejected' })).status).toBe(409);
}, 240_000);
