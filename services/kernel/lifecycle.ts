import type { Logger } from 'pino';
import { loadConfig, type AppConfig } from './config';
import { createLogger } from './logger';

/** Set (to `1`) in the environment of the processes main/supervisor.ts starts. */
export const SUPERVISED_ENV = 'SVC_SUPERVISED';

/** Whether this process was started by the supervisor (and so has its IPC channel). */
export const isSupervised = (): boolean => process.env[SUPERVISED_ENV] === '1' && typeof process.send === 'function';

/** The supervisor's message to API processes: restarts so far, per role. */
export const PROCESS_RESTARTS_MESSAGE = 'svc:process-restarts';
/** A supervised process's message once it serves (the API listens, the worker polls). */
export const CHILD_STARTED_MESSAGE = 'svc:started';
/** An API process's request for PROCESS_RESTARTS_MESSAGE, once it listens (earlier messages would be dropped). */
export const PROCESS_RESTARTS_REQUEST = 'svc:process-restarts?';
export interface ProcessRestartsMessage {
  type: typeof PROCESS_RESTARTS_MESSAGE;
  restarts: Record<string, number>;
}

/**
 * Runs `stop` once on SIGINT/SIGTERM, then exits; a second signal exits at once. A supervised
 * process stops on SIGTERM from its supervisor only: Ctrl-C in a terminal sends SIGINT to the
 * whole process group, and the supervisor's SIGTERM right after would count as the second
 * signal. It also stops when the supervisor is gone (its IPC channel closes), so no child
 * outlives a killed supervisor.
 */
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
  if (isSupervised()) {
    process.on('SIGINT', () => logger.debug('SIGINT ignored: the supervisor stops this process'));
    process.once('disconnect', () => !stopping && handler('supervisor gone'));
  } else {
    process.on('SIGINT', handler);
  }
  process.on('SIGTERM', handler);
}

/**
 * Ends the process after a failure it cannot recover from (a worker that stopped polling), with
 * a non-zero code so that its supervisor (main/supervisor.ts, or compose's restart policy)
 * replaces it. Log lines are flushed first; a hung flush does not keep the process alive.
 */
export function exitAfterFatal(logger: Logger, err: unknown, message: string): void {
  logger.fatal({ err }, message);
  const exit = () => process.exit(1);
  setTimeout(exit, 1_000).unref();
  logger.flush(() => exit());
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
      if (isSupervised()) process.send!({ type: CHILD_STARTED_MESSAGE });
    })
    .catch((err) => {
      logger.error({ err }, `${name} failed to start`);
      process.exit(1);
    });
}
