import { Runtime, type LogLevel, type LogMetadata } from '@temporalio/worker';
import type { Logger } from 'pino';

let installed = false;

/**
 * Sends the Temporal SDK's logs (worker lifecycle, core) through our pino logger so every
 * process writes one JSON log stream. The SDK runtime is process-wide and can be installed
 * once, before the first worker or native connection: later calls are ignored.
 */
export function installTemporalLogger(logger: Logger): void {
  if (installed) return;
  installed = true;
  const child = logger.child({ component: 'temporal-sdk' });
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const method = level === 'TRACE' ? 'trace' : level === 'DEBUG' ? 'debug' : level === 'INFO' ? 'info' : level === 'WARN' ? 'warn' : 'error';
    child[method](meta ?? {}, message);
  };
  try {
    Runtime.install({
      logger: {
        log: write,
        trace: (m, meta) => write('TRACE', m, meta),
        debug: (m, meta) => write('DEBUG', m, meta),
        info: (m, meta) => write('INFO', m, meta),
        warn: (m, meta) => write('WARN', m, meta),
        error: (m, meta) => write('ERROR', m, meta),
      },
    });
  } catch {
    // Already installed by an earlier worker in this process: keep that one.
  }
}
