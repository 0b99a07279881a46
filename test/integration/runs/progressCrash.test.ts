/**
 * The run read model converges to Temporal after a worker is SIGKILLed between its progress sink
 * calls and their writes (issue 30 point 1). The first worker's writer is set never to flush
 * in time (RUN_PROGRESS_FLUSH_MS of an hour): what it emitted is lost with it, except a run's
 * end, which a local activity writes after storing the writer's batches. One run closes and one
 * parks on a timer before the kill; the reconciler's pass then writes what Temporal knows of the
 * parked one, and the second worker's replay (for the query) re-emits the rest.
 */
import { chain, deployWorkflow, executeWorkflow, node, useTestStack, waitRun } from '../../kit';
import { eventually } from '../../support/harness';
import { killWorker, spawnWorker } from '../../support/workerProcess';
import { reconcileRunReadModel } from '../../../services/runs';
import { progressQuery } from '../../../temporal/shared';

const stack = useTestStack({ worker: false });

test('a worker killed before writing its progress: the reconciler brings closed and parked runs in line with Temporal', async () => {
  let worker = await spawnWorker({ RUN_PROGRESS_FLUSH_MS: '3600000' });
  try {
    const done = await deployWorkflow(stack, chain(node.transform('double', '$.n * 2'), node.log('note', 'doubled')));
    // A timer wait: an approval wait is written by the local activity (temporal/workflows/runs.ts), so it would survive the kill.
    // 60 s: long enough that the run is still parked when the reconciler's result is read, on a loaded machine too.
    const parked = await deployWorkflow(stack, chain(node.transform('before', '1'), node.wait('pause', 60), node.transform('after', '2')));
    const doneRun = await executeWorkflow(stack, done.workflowId, { n: 21 });
    const parkedRun = await executeWorkflow(stack, parked.workflowId);
    const client = stack.app.deps.temporal.client;
    await client.workflow.getHandle(doneRun).result();
    await eventually(
      () => client.workflow.getHandle(parkedRun).query(progressQuery),
      (p) => p.status === 'waiting',
    );
    await killWorker(worker);

    // Of what the first worker emitted, only the finished run's end reached PostgreSQL: the end is
    // written by a local activity after the writer's pending batches, which it stores first.
    const conn = stack.app.orm.em.fork().getConnection();
    const statusOf = async (id: string) =>
      ((await conn.execute('select status from runs where id = ?', [id])) as Array<{ status: string }>)[0]?.status;
    expect(await statusOf(doneRun)).toBe('succeeded');
    expect(await statusOf(parkedRun)).toBe('queued');

    worker = await spawnWorker();
    const repaired = await reconcileRunReadModel(stack.app.orm.em.fork(), stack.app.deps.services.runs.launcher, {
      staleMs: 0,
      queryBudgetMs: 30_000,
    });
    expect(repaired).toEqual([parkedRun]);

    const closed = await waitRun(stack, doneRun);
    expect(closed).toMatchObject({ status: 'succeeded', output: 42, error: null });
    expect(closed.finishedAt).toBeTruthy();
    // Steps and logs: the writer's batches, stored by the final activity before the end.
    expect(closed.steps.map((s) => [s.nodeId, s.status])).toEqual([
      ['start', 'succeeded'],
      ['double', 'succeeded'],
      ['note', 'succeeded'],
    ]);
    const detail = await eventually(
      () => stack.api.get<{ timeline: Array<{ message?: string }> }>(`/api/v1/logs/executions/${doneRun}`),
      (r) => r.body.timeline.some((e) => e.message === 'doubled'),
    );
    expect(detail.body.timeline.map((e) => e.message)).toEqual(expect.arrayContaining(['doubled', 'Run succeeded']));

    const waiting = await waitRun(stack, parkedRun, { until: (r) => r.status === 'waiting' });
    expect(waiting.waits).toEqual([expect.objectContaining({ kind: 'timer', nodeId: 'pause' })]);
    expect(waiting.steps.find((s) => s.nodeId === 'before')).toMatchObject({ status: 'succeeded' });

    // The run goes on with the second worker when its timer fires, and the read model takes its batches.
    const finished = await waitRun(stack, parkedRun, { timeoutMs: 240_000 });
    expect(finished.status).toBe('succeeded');
    expect(finished.steps.map((s) => s.nodeId)).toEqual(['start', 'before', 'pause', 'after']);
  } finally {
    await killWorker(worker);
  }
}, 600_000);
