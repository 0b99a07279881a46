/** The run read model writer (services/runs/readModel.ts): large batches, repeated nodes and replays. */
import { recordRunProgress } from '../../../services/runs/readModel';
import type { StepRecord } from '../../../engine/interpreter';
import { deployWorkflow, executeWorkflow, useTestStack } from '../../kit';

const stack = useTestStack({ worker: false });

const step = (nodeId: string, seq: number, status: StepRecord['status']): StepRecord => ({
  nodeId,
  nodeType: 'transform',
  nodeName: null,
  seq,
  status,
  attempts: 1,
  input: { seq },
  output: status === 'succeeded' ? { seq } : null,
  error: null,
  startedAt: '2026-01-01T00:00:00.000Z',
  finishedAt: status === 'succeeded' ? '2026-01-01T00:00:01.000Z' : null,
  durationMs: status === 'succeeded' ? 1000 : null,
});

test('one write of 1,200 steps and 1,100 logs lands whole (several statements), repeated nodes keep their last record, and a replay changes nothing', async () => {
  // A run row to write against: executing without a worker leaves it queued.
  const { workflowId } = await deployWorkflow(stack, {});
  const runId = await executeWorkflow(stack, workflowId);

  const steps = Array.from({ length: 1200 }, (_, i) => step(`n${i}`, i, 'running'));
  steps.push(step('n7', 7, 'succeeded')); // the same node again, later in the batch
  const logs = Array.from({ length: 1100 }, (_, i) => ({
    seq: 1000 + i,
    nodeId: `n${i}`,
    level: 'info' as const,
    message: `log ${i}`,
    data: null,
    createdAt: '2026-01-01T00:00:00.000Z',
  }));
  const progress = { runId, workspaceId: stack.ws.workspaceId, at: '2026-01-01T00:00:02.000Z', run: {}, steps, logs };
  await recordRunProgress(stack.app.orm.em.fork(), progress);
  await recordRunProgress(stack.app.orm.em.fork(), progress); // an activity retried after a crash

  const conn = stack.app.orm.em.fork().getConnection();
  const [{ n: stepRows }] = await conn.execute('select count(*)::int as n from run_steps where run_id = ?', [runId]);
  const [{ n: logRows }] = await conn.execute('select count(*)::int as n from run_logs where run_id = ?', [runId]);
  expect(stepRows).toBe(1200);
  expect(logRows).toBe(1100);
  const [n7] = await conn.execute(`select status, duration_ms from run_steps where id = ?`, [`${runId}:n7`]);
  expect(n7).toEqual({ status: 'succeeded', duration_ms: 1000 });
});
