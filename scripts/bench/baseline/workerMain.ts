// The baseline worker as its own process (see worker.ts).
import { createBaselineWorker } from './worker';

async function main(): Promise<void> {
  const maxCached = process.env.BASELINE_MAX_CACHED_WORKFLOWS;
  const { worker, connection } = await createBaselineWorker(
    process.env.BASELINE_TEMPORAL_ADDRESS!,
    process.env.BASELINE_TEMPORAL_NAMESPACE ?? 'default',
    {
      maxCachedWorkflows: maxCached ? Number(maxCached) : undefined,
      workflowBundlePath: process.env.BASELINE_WORKFLOW_BUNDLE || undefined,
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  const running = worker.run();
  process.stdout.write('baseline worker started\n');
  await running;
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
