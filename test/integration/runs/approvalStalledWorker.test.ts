/**
 * Approvals while the worker is stalled (issue 27): the worker runs in its own process, in a
 * Temporal namespace of this file alone (no other file's worker answers for it), and is stopped
 * with SIGSTOP while a run waits on an approval. The approval call neither hangs nor answers
 * 5xx: after APPROVAL_ANSWER_WAIT_MS it answers 202 `queued: true`, the decision is queued
 * durably, and it takes effect once the worker runs again.
 */
import type { ChildProcess } from 'node:child_process';
import { deployWorkflow, executeWorkflow, node, useTestStack, waitRun } from '../../kit';
import { ensureNamespace } from '../../support/namespaces';
import { killWorker, spawnWorker } from '../../support/workerProcess';

const NAMESPACE = 'approvals-stalled-worker';
let worker: ChildProcess | undefined;

const stack = useTestStack(async () => {
  await ensureNamespace(NAMESPACE);
  // The worker is a child process (spawned below), so it can be stopped with SIGSTOP.
  return { config: { approvalAnswerWaitMs: 1_500 }, temporal: { namespace: NAMESPACE }, worker: false };
});
beforeAll(async () => {
  worker = await spawnWorker({ TEMPORAL_NAMESPACE: NAMESPACE });
  stack.beforeClose(async () => {
    if (worker) {
      worker.kill('SIGCONT');
      await killWorker(worker);
    }
  });
}, 120_000);

/** start → gate (approval) → yes (approved) or no (rejected). */
const approvalGraph = {
  nodes: [
    node.start(),
    node.approval('gate', 'Ship it?'),
    node.transform('yes', '"approved: " & comment'),
    node.transform('no', '"rejected: " & comment'),
  ],
  edges: [
    { source: 'start', target: 'gate' },
    { source: 'gate', target: 'yes', sourceHandle: 'approved' },
    { source: 'gate', target: 'no', sourceHandle: 'rejected' },
  ],
};

const approve = (runId: string, body: Record<string, unknown>) => stack.api.post(`/api/runs/${runId}/approval`, body);

test('with the worker stalled, approvals answer 202 queued (never 5xx), and the decision applies once the worker runs again', async () => {
  const { workflowId } = await deployWorkflow(stack, approvalGraph);
  const runId = await executeWorkflow(stack, workflowId);
  await waitRun(stack, runId, {
    until: (run) => run.status === 'waiting' && run.waits.some((w) => w.kind === 'approval'),
    timeoutMs: 60_000,
  });

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
  const run = await waitRun(stack, runId, { timeoutMs: 120_000 });
  expect(run.status).toBe('succeeded');
  expect(run.output).toBe('approved: first');
  expect((await approve(runId, { decision: 'rejected' })).status).toBe(409);
}, 240_000);
