import type { Logger } from 'pino';
import { openOrm } from '../db/orm';
import { loadConfig, type AppConfig } from '../services/config';
import { createLogger } from '../services/logger';
import { onShutdownSignal } from '../api/main';
import { connectWorkerConnection } from './client';
import { createWorker } from './worker';

export interface StartedWorker {
  /** Stops polling, lets running activities finish, then closes connections. */
  stop(): Promise<void>;
}

/** Starts a worker on `workflow-runs`; resolves once it is polling. */
export async function startWorker(opts: { config: AppConfig; databaseUrl: string; temporalAddress: string; logger: Logger }): Promise<StartedWorker> {
  const orm = await openOrm(opts.databaseUrl);
  const connection = await connectWorkerConnection({ address: opts.temporalAddress, namespace: opts.config.temporal.namespace }, opts.logger);
  const worker = await createWorker({ connection, namespace: opts.config.temporal.namespace, deps: { orm } });
  const running = worker.run();
  running.catch((err) => opts.logger.error({ err }, 'worker stopped with an error'));
  return {
    stop: async () => {
      worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
      await orm.close();
    },
  };
}

/** Entry point of the `worker` process in production (docker-compose). Scale it horizontally. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { name: 'worker' });
  if (!config.databaseUrl || !config.temporal.address) {
    throw new Error('DATABASE_URL and TEMPORAL_ADDRESS are required for the standalone worker process (npm start provides both).');
  }
  const worker = await startWorker({ config, databaseUrl: config.databaseUrl, temporalAddress: config.temporal.address, logger });
  logger.info('worker polling task queue workflow-runs');
  onShutdownSignal(logger, () => worker.stop());
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
