import type { Logger } from 'pino';
import { createApp } from './app';
import { listen } from './server';
import type { AppDeps } from './deps';
import { openOrm } from '../db/orm';
import { loadConfig, type AppConfig } from '../services/config';
import { createLogger } from '../services/logger';
import { SignInLimiter } from '../services/sessions';
import { connectTemporalClient } from '../temporal/client';
import { registerSearchAttributes } from '../temporal/search-attributes';

export interface StartedApi {
  url: string;
  deps: AppDeps;
  /** Drains in-flight requests, then closes Temporal and database connections. */
  stop(): Promise<void>;
}

/** Starts the HTTP API against an existing database (migrated) and Temporal server. */
export async function startApi(opts: { config: AppConfig; databaseUrl: string; temporalAddress: string; logger: Logger }): Promise<StartedApi> {
  const { config, logger } = opts;
  const orm = await openOrm(opts.databaseUrl);
  const temporal = await connectTemporalClient({ address: opts.temporalAddress, namespace: config.temporal.namespace });
  await registerSearchAttributes(temporal.connection, config.temporal.namespace);
  const deps: AppDeps = {
    config,
    orm,
    temporal: { ...temporal, namespace: config.temporal.namespace },
    logger,
    signInLimiter: new SignInLimiter(),
    apiKeyPolicy: { endUsersEnabled: config.endUsersEnabled },
    lifecycle: { shuttingDown: false },
  };
  const server = await listen(createApp(deps), { port: config.port, host: config.host, lifecycle: deps.lifecycle });
  return {
    url: server.url,
    deps,
    stop: async () => {
      await server.close(config.shutdownTimeoutMs);
      await temporal.connection.close();
      await orm.close();
    },
  };
}

/** Entry point of the `api` process in production (docker-compose). */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { name: 'api' });
  if (!config.databaseUrl || !config.temporal.address) {
    throw new Error('DATABASE_URL and TEMPORAL_ADDRESS are required for the standalone API process (npm start provides both).');
  }
  const api = await startApi({ config, databaseUrl: config.databaseUrl, temporalAddress: config.temporal.address, logger });
  logger.info({ url: api.url }, 'API listening');
  onShutdownSignal(logger, () => api.stop());
}

/** Runs `stop` once on SIGINT/SIGTERM, then exits; a second signal exits at once. */
export function onShutdownSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop()
      .then(() => process.exit(0))
      .catch((err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
