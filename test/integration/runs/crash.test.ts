/**
 * Crash safety: a worker process is SIGKILLed in the middle of a run and another one takes
 * over. The run finishes, and a step that had finished (an outside HTTP call) is not
 * executed again: Temporal replays its recorded result.
 */
import { chain, deployWorkflow, executeWorkflow, node, useTestStack, waitRun } from '../../kit';
import { spawnWorker } from '../../support/workerProcess';
import { startFakeServer } from '../../support/fakeServer';

const stack = useTestStack({ worker: false });

test('a worker killed mid-run is replaced; the run finishes and finished steps are not executed again', async () => {
  const service = await startFakeServer();
  let worker = await spawnWorker();
  try {
    const { workflowId: id } = await deployWorkflow(
      stack,
      chain(
        node.of('http', 'charge', { method: 'POST', url: `${service.url}/charge`, body: { order: '=order' } }),
        node.wait('pause', 3),
        node.of('http', 'notify', { method: 'POST', url: `${service.url}/notify` }),
      ),
    );
    const runId = await executeWorkflow(stack, id, { order: 'o-1' });

    await waitRun(stack, runId, { until: (run) => run.status === 'waiting' });
    expect(service.requests.map((r) => r.path)).toEqual(['/charge']);
    worker.kill('SIGKILL');
    await new Promise((resolve) => worker.once('exit', resolve));

    worker = await spawnWorker();
    const done = await waitRun(stack, runId, { timeoutMs: 60_000 });
    expect(done.status).toBe('succeeded');
    expect(service.requests.map((r) => r.path)).toEqual(['/charge', '/notify']);
    expect(done.steps.find((s) => s.nodeId === 'charge')).toMatchObject({ status: 'succeeded', attempts: 1 });
  } finally {
    worker.kill('SIGKILL');
    await service.close();
  }
}, 120_000);
