import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Structured JSON logs (pino). `destination` 2 writes to stderr, for commands whose stdout
 * is a machine-readable result (the admin command).
 */
export function createLogger(level: string, opts: { name?: string; destination?: 1 | 2; stream?: DestinationStream } = {}): Logger {
  return pino(
    {
      level,
      name: opts.name,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'], remove: true },
    },
    // `stream`: another destination (tests capture the log lines to search them).
    opts.stream ?? pino.destination({ fd: opts.destination ?? 1, sync: false }),
  );
}
