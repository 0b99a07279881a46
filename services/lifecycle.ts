import type { Logger } from 'pino';
import { loadConfig, type AppConfig } from './config';
import { createLogger } from './logger';

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

/**
 * Entry point of a standalone production process (the `api` or `worker` of docker-compose):
 * needs DATABASE_URL and TEMPORAL_ADDRESS (npm start provides both itself), starts, and stops
 * gracefully on a signal.
 */
export function runStandalone(
  name: string,
  start: (args: { config: AppConfig; databaseUrl: string; temporalAddress: string; logger: Logger }) => Promise<{ stop(): Promise<void> }>,
): void {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { name });
  if (!config.databaseUrl || !config.temporal.address) {
    console.error(`DATABASE_URL and TEMPORAL_ADDRESS are required for the standalone ${name} process (npm start provides both).`);
    process.exit(1);
  }
  start({ config, databaseUrl: config.databaseUrl, temporalAddress: config.temporal.address, logger })
    .then((started) => {
      logger.info(`${name} started`);
      onShutdownSignal(logger, () => started.stop());
    })
    .catch((err) => {
      logger.error({ err }, `${name} failed to start`);
      process.exit(1);
    });
}
