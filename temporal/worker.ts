import path from 'node:path';
import type { PayloadCodec } from '@temporalio/common';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { TASK_QUEUE } from './shared';
import { temporalCommandEngine } from './commands-client';

export const WORKFLOWS_PATH = path.join(__dirname, 'workflows', 'index');

/**
 * Bundles the workflow code once (webpack; takes several seconds). Workers can share a
 * bundle, which keeps test suites from paying for it on every worker start.
 */
export async function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: require.resolve(WORKFLOWS_PATH), logger: quietBundlerLogger });
}

export interface WorkerOptions {
  connection: NativeConnection;
  namespace: string;
  deps: ActivityDeps;
  /** A prebuilt bundle; when omitted the worker bundles `temporal/workflows` itself. */
  workflowBundle?: { code: string };
  identity?: string;
  /** The deployment's payload codec (services/payloadCodec.ts); must match the clients'. */
  payloadCodec?: PayloadCodec;
}

/** A worker on the `workflow-runs` task queue serving every workflow and activity of the service. */
export async function createWorker(opts: WorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: TASK_QUEUE,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: require.resolve(WORKFLOWS_PATH) }),
    activities: createActivities({ commandEngineFor: temporalCommandEngine, ...opts.deps }),
    ...(opts.identity ? { identity: opts.identity } : {}),
    ...(opts.payloadCodec ? { dataConverter: { payloadCodecs: [opts.payloadCodec] } } : {}),
  });
}

const noop = () => undefined;
const quietBundlerLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };
