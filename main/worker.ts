/**
 * The `worker` process: its entry point (`node dist/main/worker.js`, `npm run start:worker`)
 * and the wiring of the worker, the one place that hands activities/ to temporal/.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Worker } from '@temporalio/worker';
import { openOrm } from '../db/orm';
import type { AppConfig } from '../services/kernel/config';
import { exitAfterFatal, runStandalone } from '../services/kernel/lifecycle';
import { startWorkerHeartbeat } from '../services/workers/heartbeat';
import { closeSandboxPool } from '../services/kernel/sandbox/sandbox';
import { closeUserSql } from '../services/databases';
import { connectWorkerConnection } from '../temporal/client';
import { createWorker, prebuiltWorkflowBundle, type WorkerOptions } from '../temporal/worker';
import { temporalCommandEngine } from '../temporal/commandsClient';
import { temporalResearchLauncher } from '../temporal/researchClient';
import { createActivities } from '../activities';
import { payloadCodecFromConfig } from '../services/kernel/payloadCodec';
import { createBlobStore } from '../services/kernel/blobs';
import { fileScannersOf } from '../services/files';
import { createWorkerServices, type WorkerServices } from './services';

/**
 * A worker on `workflow-runs` serving every workflow and every activity of the service: the
 * activities are built on `services`, plus the Temporal adapters activities build on their
 * own client (the command thread engine, the research launcher).
 */
export function createServiceWorker(opts: Omit<WorkerOptions, 'activities'> & { services: WorkerServices }): Promise<Worker> {
  const { services, ...options } = opts;
  const activities = createActivities({
    commandEngineFor: temporalCommandEngine,
    researchLauncherFor: temporalResearchLauncher,
    ...services,
  });
  return createWorker({ ...options, activities });
}

export interface StartedWorker {
  /** Stops polling, lets running activities finish, then closes connections. */
  stop(): Promise<void>;
}

/**
 * Starts a worker on `workflow-runs`; resolves once it is polling. It beats in
 * `worker_heartbeats` (the API's readiness reads them) until stopped. When the worker stops
 * polling on its own (`run()` rejects, the SDK reports FAILED, or `run()` ends without `stop`)
 * it writes `failed` with the reason and calls `onFatal`; the standalone process exits there,
 * so that its supervisor replaces it (issue 26, F1: a FAILED worker in a live process).
 */
export async function startWorker(opts: {
  config: AppConfig;
  databaseUrl: string;
  temporalAddress: string;
  logger: Logger;
  /**
   * A prebuilt workflow bundle (npm start keeps one between starts); unset: WORKFLOW_BUNDLE_PATH
   * or the bundle `npm run build` wrote (prebuiltWorkflowBundle), else bundled at start.
   */
  workflowBundle?: { code: string };
  /** Called once the worker failed; unset: logged only (a worker inside another process, e.g. a benchmark). */
  onFatal?: (err: unknown) => void;
}): Promise<StartedWorker> {
  const orm = await openOrm(opts.databaseUrl);
  const connection = await connectWorkerConnection(
    { address: opts.temporalAddress, namespace: opts.config.temporal.namespace },
    { logger: opts.logger, metricsBindAddress: opts.config.temporal.sdkMetricsAddress },
  );
  const payloadCodec = payloadCodecFromConfig(opts.config);
  if (!payloadCodec)
    opts.logger.warn('Temporal payloads are stored unencrypted: set SECRET_KEY or TEMPORAL_PAYLOAD_KEY (the same as the API process)');
  const services = createWorkerServices(opts.config, {
    orm,
    blobs: createBlobStore(opts.config.blobs, opts.config.secretKey),
    scanners: fileScannersOf(opts.config),
  });
  const workflowBundle = opts.workflowBundle ?? prebuiltWorkflowBundle(opts.config.temporal.workflowBundlePath) ?? undefined;
  // Unique per process start: the heartbeat row and Temporal's poller list name the same process.
  const identity = `${process.pid}@${os.hostname()}-${randomUUID().slice(0, 8)}`;
  const worker = await createServiceWorker({
    connection,
    namespace: opts.config.temporal.namespace,
    services,
    payloadCodec,
    workflowBundle,
    maxCachedWorkflows: opts.config.temporal.maxCachedWorkflows,
    workflowThreads: opts.config.temporal.workflowThreads,
    identity,
  });
  let stopping = false;
  const fail = (err: unknown) => {
    if (stopping) return;
    stopping = true;
    opts.logger.error({ err, identity }, 'the worker stopped polling');
    void heartbeat.finish('failed', err).then(() => opts.onFatal?.(err));
  };
  const heartbeat = startWorkerHeartbeat({
    orm,
    identity,
    host: os.hostname(),
    pid: process.pid,
    intervalMs: opts.config.processes.heartbeatMs,
    sdkState: () => worker.getState(),
    onFatal: (reason) => fail(new Error(reason)),
    logger: opts.logger,
  });
  const running = worker.run();
  running.then(
    () => fail(new Error('the Temporal worker stopped by itself')),
    (err: unknown) => fail(err),
  );
  return {
    stop: async () => {
      stopping = true;
      try {
        worker.shutdown();
      } catch {
        // Not running any more (it failed or is already draining): nothing to shut down.
      }
      await running.catch(() => undefined);
      await heartbeat.finish('stopped');
      // Code-node activities execute on the sandbox threads.
      await closeSandboxPool();
      await connection.close();
      await closeUserSql(orm.em);
      await orm.close();
    },
  };
}

// Entry point of the `worker` process in production; scale it horizontally.
if (require.main === module)
  runStandalone('worker', (args) =>
    startWorker({ ...args, onFatal: (err) => exitAfterFatal(args.logger, err, 'worker failed; exiting so that it is replaced') }),
  );
