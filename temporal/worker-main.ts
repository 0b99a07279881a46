import type { Logger } from 'pino';
import { openOrm } from '../db/orm';
import type { AppConfig } from '../services/config';
import { keySettingsOf } from '../services/credentials';
import { runStandalone } from '../services/lifecycle';
import { closeSandboxPool } from '../services/sandbox';
import { closeUserSql } from '../services/databases';
import { connectWorkerConnection } from './client';
import { createWorker, prebuiltWorkflowBundle } from './worker';
import { payloadCodecFromConfig } from '../services/payloadCodec';
import { createBlobStore } from '../services/blobs';
import { fileScannersOf } from '../services/files';

export interface StartedWorker {
  /** Stops polling, lets running activities finish, then closes connections. */
  stop(): Promise<void>;
}

/** Starts a worker on `workflow-runs`; resolves once it is polling. */
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
}): Promise<StartedWorker> {
  const orm = await openOrm(opts.databaseUrl);
  const connection = await connectWorkerConnection({ address: opts.temporalAddress, namespace: opts.config.temporal.namespace }, { logger: opts.logger, metricsBindAddress: opts.config.temporal.sdkMetricsAddress });
  const payloadCodec = payloadCodecFromConfig(opts.config);
  if (!payloadCodec) opts.logger.warn('Temporal payloads are stored unencrypted: set SECRET_KEY or TEMPORAL_PAYLOAD_KEY (the same as the API process)');
  const blobs = createBlobStore(opts.config.blobs, opts.config.secretKey);
  const deps = {
    orm,
    allowPrivateNetworks: opts.config.outboundAllowPrivateNetworks,
    blobs,
    credentials: keySettingsOf(opts.config),
    knowledge: { config: opts.config.knowledge, secretKey: opts.config.secretKey },
    llm: opts.config.llm,
    localAiCli: opts.config.localAiCli,
    commands: { llm: opts.config.llm, confirmationTtlSeconds: opts.config.commands.confirmationTtlSeconds, databaseQuery: opts.config.databaseQuery, localAiCli: opts.config.localAiCli },
    mailer: { config: opts.config.mailer, scanners: fileScannersOf(opts.config) },
  };
  const workflowBundle = opts.workflowBundle ?? prebuiltWorkflowBundle(opts.config.temporal.workflowBundlePath) ?? undefined;
  const worker = await createWorker({ connection, namespace: opts.config.temporal.namespace, deps, payloadCodec, workflowBundle, maxCachedWorkflows: opts.config.temporal.maxCachedWorkflows });
  const running = worker.run();
  running.catch((err) => opts.logger.error({ err }, 'worker stopped with an error'));
  return {
    stop: async () => {
      worker.shutdown();
      await running.catch(() => undefined);
      // Code-node activities execute on the sandbox threads.
      await closeSandboxPool();
      await connection.close();
      await closeUserSql(orm.em);
      await orm.close();
    },
  };
}

// Entry point of the `worker` process in production; scale it horizontally.
if (require.main === module) runStandalone('worker', startWorker);
