import { noopMetricMeter } from '@temporalio/common/lib/metrics';
import { DefaultLogger } from '@temporalio/worker';
import { compileWorkerOptions } from '@temporalio/worker/lib/worker-options';
import { ISOLATE_OPTIONS } from '../../../temporal/worker';

describe('worker options', () => {
  it('the SDK honours our isolateExecutionTimeout, which its WorkerOptions type does not list', () => {
    const compiled = compileWorkerOptions(
      { taskQueue: 'test', workflowBundle: { code: '' }, ...ISOLATE_OPTIONS },
      new DefaultLogger('ERROR'),
      noopMetricMeter,
    );
    expect(compiled.isolateExecutionTimeoutMs).toBe(30_000);
    // Without it, the SDK's 5 s: the value a starved worker reached (issue 26, F4).
    expect(
      compileWorkerOptions({ taskQueue: 'test', workflowBundle: { code: '' } }, new DefaultLogger('ERROR'), noopMetricMeter)
        .isolateExecutionTimeoutMs,
    ).toBe(5_000);
  });
});
