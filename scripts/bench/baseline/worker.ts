/**
 * Runs the baseline worker on its own task queue of the benchmark's dev server: in this process
 * (`startBaselineWorker`) or as its own process (`workerMain.ts`, the throughput shape, so its
 * CPU is measured apart like the service's worker).
 */
import path from 'node:path';
import { Client, type Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { stickyCacheOptions } from '../../../temporal/workerOptions';
import { DIST_ROOT, spawnTsProcess } from '../stack';
import { createBaselineActivities } from './activities';

export const BASELINE_TASK_QUEUE = 'bench-baseline';

export interface BaselineWorkerOptions {
  /** The sticky cache size, as the service worker's WORKER_MAX_CACHED_WORKFLOWS; unset: the SDK's default. */
  maxCachedWorkflows?: number;
  /** A prebuilt bundle of ./workflows (bundleWorkflowCode), as the service worker loads in production; unset: bundled at start. */
  workflowBundlePath?: string;
}

export async function createBaselineWorker(
  address: string,
  namespace: string,
  opts: BaselineWorkerOptions = {},
): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue: BASELINE_TASK_QUEUE,
    ...(opts.workflowBundlePath
      ? { workflowBundle: { codePath: opts.workflowBundlePath } }
      : { workflowsPath: require.resolve('./workflows') }),
    activities: createBaselineActivities(),
    ...(opts.maxCachedWorkflows !== undefined ? stickyCacheOptions(opts.maxCachedWorkflows) : {}),
  });
  return { worker, connection };
}

/** A baseline worker in this process; `stop()` shuts it down. */
export async function startBaselineWorker(address: string, namespace: string): Promise<{ stop(): Promise<void> }> {
  const { worker, connection } = await createBaselineWorker(address, namespace);
  const running = worker.run();
  return {
    stop: async () => {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/**
 * A baseline worker in its own process; resolves once it polls. `runtime: 'dist'` runs the
 * compiled worker (`npm run build`) with plain node, as the service's dist form.
 */
export async function spawnBaselineWorker(
  address: string,
  namespace: string,
  opts: BaselineWorkerOptions & { runtime?: 'tsx' | 'dist' } = {},
): Promise<{ pid: number; stop(): Promise<void> }> {
  const env: Record<string, string> = { BASELINE_TEMPORAL_ADDRESS: address, BASELINE_TEMPORAL_NAMESPACE: namespace };
  if (opts.maxCachedWorkflows !== undefined) env.BASELINE_MAX_CACHED_WORKFLOWS = String(opts.maxCachedWorkflows);
  if (opts.workflowBundlePath) env.BASELINE_WORKFLOW_BUNDLE = opts.workflowBundlePath;
  const entry =
    opts.runtime === 'dist'
      ? [path.join(DIST_ROOT, 'scripts', 'bench', 'baseline', 'workerMain.js')]
      : ['--import', 'tsx', path.join(__dirname, 'workerMain.ts')];
  // The same node flags as the service's worker (BENCH_WORKER_NODE_ARGS), so the ratio compares code, not flags.
  const flags = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return spawnTsProcess([...flags, ...entry], env, 'baseline worker started');
}

/** A client for the baseline on the stack's connection, without the service's payload codec (bare Temporal encrypts nothing). */
export function baselineClient(connection: Connection, namespace: string): Client {
  return new Client({ connection, namespace });
}
