/**
 * Runs the baseline worker on its own task queue of the benchmark's dev server: in this process
 * (`startBaselineWorker`) or as its own process (`worker-main.ts`, the throughput shape, so its
 * CPU is measured apart like the service's worker).
 */
import path from 'node:path';
import { Client, type Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { spawnTsProcess } from '../stack';
import { createBaselineActivities } from './activities';

export const BASELINE_TASK_QUEUE = 'bench-baseline';

export async function createBaselineWorker(address: string, namespace: string): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue: BASELINE_TASK_QUEUE,
    workflowsPath: require.resolve('./workflows'),
    activities: createBaselineActivities(),
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

/** A baseline worker in its own process; resolves once it polls. */
export async function spawnBaselineWorker(address: string, namespace: string): Promise<{ pid: number; stop(): Promise<void> }> {
  return spawnTsProcess(['--import', 'tsx', path.join(__dirname, 'worker-main.ts')], { BASELINE_TEMPORAL_ADDRESS: address, BASELINE_TEMPORAL_NAMESPACE: namespace }, 'baseline worker started');
}

/** A client for the baseline on the stack's connection, without the service's payload codec (bare Temporal encrypts nothing). */
export function baselineClient(connection: Connection, namespace: string): Client {
  return new Client({ connection, namespace });
}
