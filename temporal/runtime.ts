import net from 'node:net';
import type { LogLevel, LogMetadata } from '@temporalio/worker';
import type { Logger } from 'pino';

export interface TemporalRuntimeOptions {
  logger: Logger;
  /**
   * `host:port` for the SDK's Prometheus exporter. Unset: a free port on 127.0.0.1, which only
   * this process's own `/metrics` reads. Set it (e.g. `0.0.0.0:9464`) on a worker-only process
   * so Prometheus can scrape that worker directly.
   */
  metricsBindAddress?: string;
}

let metricsUrl: string | null = null;
let installing: Promise<void> | null = null;

/**
 * Installs the process-wide Temporal SDK runtime: its logs go through our pino logger (one
 * JSON log stream per process) and its worker metrics (task slots, poll and schedule-to-start
 * latencies, sticky cache…) to a Prometheus exporter that `/metrics` merges in.
 *
 * The runtime exists once per process and must be installed before the first worker or
 * native connection; later calls resolve to the first installation.
 */
export function installTemporalRuntime(opts: TemporalRuntimeOptions): Promise<void> {
  installing ??= install(opts);
  return installing;
}

async function install({ logger, metricsBindAddress }: TemporalRuntimeOptions): Promise<void> {
  const bindAddress = metricsBindAddress ?? `127.0.0.1:${await freeLoopbackPort()}`;
  const child = logger.child({ component: 'temporal-sdk' });
  const write = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const method =
      level === 'TRACE' ? 'trace' : level === 'DEBUG' ? 'debug' : level === 'INFO' ? 'info' : level === 'WARN' ? 'warn' : 'error';
    child[method](meta ?? {}, message);
  };
  // Loaded here, not at import: an API-only process never installs a runtime (services/kernel/lazyModule.ts).
  const { Runtime } = await import('@temporalio/worker');
  try {
    Runtime.install({
      // The process's own lifecycle (services/kernel/lifecycle.ts) decides when a worker drains; the
      // SDK's default handlers would stop polling on SIGINT even where that is ignored (a
      // supervised process), leaving a live process that no longer works.
      shutdownSignals: [],
      logger: {
        log: write,
        trace: (m, meta) => write('TRACE', m, meta),
        debug: (m, meta) => write('DEBUG', m, meta),
        info: (m, meta) => write('INFO', m, meta),
        warn: (m, meta) => write('WARN', m, meta),
        error: (m, meta) => write('ERROR', m, meta),
      },
      telemetryOptions: {
        // Seconds and `_total` follow Prometheus conventions, like the svc_* metrics beside them.
        metrics: { prometheus: { bindAddress, countersTotalSuffix: true, useSecondsForDurations: true } },
      },
    });
  } catch (err) {
    // A worker created before us already instantiated the default runtime (no exporter).
    logger.warn({ err }, 'Temporal SDK runtime was already installed; its worker metrics are not exported');
    return;
  }
  const [host, port] = splitHostPort(bindAddress);
  // A wildcard bind is scraped over loopback.
  const scrapeHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  metricsUrl = `http://${scrapeHost}:${port}/metrics`;
}

/**
 * The Temporal SDK's worker metrics of this process in Prometheus text format, or null when no
 * runtime with an exporter was installed here (an API-only process) or it did not answer.
 */
export async function scrapeTemporalSdkMetrics(timeoutMs = 2_000): Promise<string | null> {
  if (!metricsUrl) return null;
  try {
    const res = await fetch(metricsUrl, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}

function splitHostPort(address: string): [string, string] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i).replace(/^\[|\]$/g, ''), address.slice(i + 1)];
}

/** A port the OS reports free right now; the exporter binds it a moment later. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
