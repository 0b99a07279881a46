import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SERVER_DYNAMIC_CONFIG, type DynamicConfig } from '../../temporal/serverConfig';
import { removeOwnerRecord, stopStaleServer, watchParent, writeOwnerRecord } from './processGuard';

const HOST = '127.0.0.1';

export interface TemporalDevServerOptions {
  /** Path to the `temporal` CLI, e.g. from `ensureTemporalCli()`. */
  binary: string;
  /** Frontend gRPC port; 0 or undefined picks a free one. */
  port?: number;
  /** Web UI port; 0 or undefined picks a free one, null runs headless. */
  uiPort?: number | null;
  /** SQLite file to persist state in; omitted means in-memory. */
  dbFile?: string;
  /** Extra namespace to create at start ("default" always exists). */
  namespace?: string;
  log?: (m: string) => void;
  /** How long to wait for the frontend to answer; default 90 000 ms. */
  startTimeoutMs?: number;
  /** Port of the server's own Prometheus `/metrics`; 0 picks a free one, undefined leaves the CLI's default. */
  metricsPort?: number;
  /** The Web UI's codec endpoint (`--ui-codec-endpoint`), where it decrypts payloads for operators. */
  uiCodecEndpoint?: string;
  /**
   * Dynamic config values (`--dynamic-config-value key=value`) on top of the service's own
   * settings (temporal/serverConfig.ts), e.g. for benchmarks.
   */
  dynamicConfig?: DynamicConfig;
  /**
   * `server-defaults` leaves out the service's settings (only the version check stays off), so
   * a benchmark can measure what they are worth. Default `service`.
   */
  settings?: 'service' | 'server-defaults';
  /**
   * Where to record the server's pid (e.g. `.data/temporal-dev-server.pid`). A start that finds
   * a recorded server which outlived its starter (a crash) stops it before going on.
   */
  pidFile?: string;
}

export interface TemporalDevServer {
  /** host:port of the frontend gRPC service. */
  address: string;
  uiUrl: string | null;
  /** The server's Prometheus endpoint when `metricsPort` was given. */
  metricsUrl: string | null;
  pid: number;
  /** SIGTERM, then SIGKILL after 10 s. Safe to call more than once. */
  stop(): Promise<void>;
}

/**
 * Returns a TCP port that was free on `host` a moment ago.
 *
 * Caveat: the port is released before the caller binds it, so another process
 * can take it in between; callers should surface bind errors clearly.
 */
export function findFreePort(host = HOST): Promise<number> {
  return bindOnce(0, host);
}

function bindOnce(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(port, host, () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

// An explicit port that is already taken (say, by another dev server) would
// otherwise pass the readiness check against the wrong server. Fails at once: a port held
// by a process that is not our recorded dev server will not free itself.
async function assertPortFree(port: number, what: string, pidFile?: string, settleMs = 0): Promise<void> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    const free = await bindOnce(port, HOST).then(
      () => true,
      () => false,
    );
    if (free || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await bindOnce(port, HOST).catch((err: Error) => {
    const whose = pidFile ? ` by a process that is not the dev server recorded in ${pidFile}` : '';
    throw new Error(
      `Cannot start Temporal dev server: ${what} port ${HOST}:${port} is not free (${err.message}); it is held${whose || ' by another process'}. ` +
        'Stop that process, or choose other ports (TEMPORAL_PORT, TEMPORAL_UI_PORT) or an existing server (TEMPORAL_ADDRESS).',
    );
  });
}

/** The dynamic config a dev server started with `opts` runs with. */
export function devServerDynamicConfig(opts: Pick<TemporalDevServerOptions, 'dynamicConfig' | 'settings'> = {}): DynamicConfig {
  const base: DynamicConfig = opts.settings === 'server-defaults' ? {} : { ...SERVER_DYNAMIC_CONFIG };
  return { ...base, ...opts.dynamicConfig, 'frontend.enableServerVersionCheck': false };
}

/**
 * Starts `temporal server start-dev` bound to 127.0.0.1 and resolves once the
 * frontend answers DescribeNamespace for the requested namespace.
 *
 * It runs with the service's dynamic config (temporal/serverConfig.ts: no 50 ms
 * task-queue poll waits, eager activities). The server's outbound version check is
 * always off (`frontend.enableServerVersionCheck=false`, plus the env var
 * `TEMPORAL_VERSION_CHECK_DISABLED=1` that the server reads for that setting's
 * default), so it makes no calls to the internet.
 *
 * Caveats:
 * - The child runs in its own process group and dies with this process however
 *   it ends (a watchdog, scripts/lib/processGuard.ts, signals it when this
 *   process is gone, SIGKILL included). Ctrl-C in a terminal does not reach it
 *   directly: callers handle SIGINT/SIGTERM by calling `stop()`.
 * - With `pidFile`, a server left over by a crashed start is stopped first;
 *   an explicit port held by any other process fails at once.
 * - Explicit ports are checked up front; auto-picked ports can still be taken
 *   by someone else before the server binds them, in which case the server
 *   exits and this rejects with its output.
 * - Start-up takes 5–30 s on a 2-core machine; the default timeout is 90 s.
 * - Rejects with the tail of the server's output if it exits before it is ready.
 */
export async function startTemporalDevServer(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const log = opts.log ?? (() => {});
  const timeoutMs = opts.startTimeoutMs ?? 90_000;
  let stoppedStale = false;
  if (opts.pidFile) {
    const stopped = await stopStaleServer(opts.pidFile, { what: 'Temporal dev server', group: true, signal: 'SIGTERM' });
    if (stopped) log(stopped);
    stoppedStale = stopped !== null;
  }
  // A server we just stopped can still hold its sockets for a moment: its main thread is gone
  // (no command line in /proc) while other threads are still closing the files they share.
  const settleMs = stoppedStale ? 15_000 : 0;
  if (opts.port) await assertPortFree(opts.port, 'frontend', opts.pidFile, settleMs);
  if (opts.uiPort) await assertPortFree(opts.uiPort, 'UI', opts.pidFile, settleMs);
  const port = opts.port || (await findFreePort());
  const uiPort = opts.uiPort === null ? null : opts.uiPort || (await findFreePort());
  const namespace = opts.namespace ?? 'default';

  const args = ['server', 'start-dev', '--ip', HOST, '--port', String(port), '--log-level', 'warn'];
  args.push(...(uiPort === null ? ['--headless'] : ['--ui-port', String(uiPort)]));
  if (opts.uiCodecEndpoint && uiPort !== null) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  for (const [key, value] of Object.entries(devServerDynamicConfig(opts)))
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  const metricsPort = opts.metricsPort === undefined ? null : opts.metricsPort || (await findFreePort());
  if (metricsPort !== null) args.push('--metrics-port', String(metricsPort));
  if (opts.dbFile) {
    const dbFile = path.resolve(opts.dbFile);
    await mkdir(path.dirname(dbFile), { recursive: true });
    args.push('--db-filename', dbFile);
  }
  if (namespace !== 'default') args.push('--namespace', namespace);

  const address = `${HOST}:${port}`;
  log(`Starting Temporal dev server on ${address}${opts.dbFile ? ` (db ${opts.dbFile})` : ' (in-memory)'}`);
  const child = spawn(opts.binary, args, {
    env: { ...process.env, TEMPORAL_VERSION_CHECK_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so stop() and the watchdog reach anything it starts, and dies
    // with us through the watchdog (a Ctrl-C reaches us, and stop() runs).
    detached: true,
  });
  const watchdog = child.pid ? watchParent(child.pid, { group: true, signal: 'SIGTERM', graceMs: 10_000 }) : null;
  if (opts.pidFile && child.pid) await writeOwnerRecord(opts.pidFile, child.pid, [opts.binary, ...args]);

  let outputTail = '';
  const onOutput = (chunk: Buffer) => {
    const text = chunk.toString();
    outputTail = (outputTail + text).slice(-4000);
    for (const line of text.split('\n')) if (line.trim()) log(`[temporal] ${line.trim()}`);
  };
  child.stdout.on('data', onOutput);
  child.stderr.on('data', onOutput);

  const exited = new Promise<string>((resolve) => {
    child.on('error', (err) => resolve(`failed to spawn ${opts.binary}: ${err.message}`));
    child.on('exit', (code, signal) => resolve(`exited with ${signal ?? `code ${code}`}`));
  });
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });

  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      child.kill(signal);
    }
  };
  const killOnExit = () => {
    if (!hasExited) signalGroup('SIGKILL');
  };
  process.on('exit', killOnExit);

  const stop = async (): Promise<void> => {
    process.removeListener('exit', killOnExit);
    if (!hasExited) {
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    watchdog?.dispose();
    if (opts.pidFile) await removeOwnerRecord(opts.pidFile);
  };

  try {
    await Promise.race([
      waitUntilReady(address, namespace, timeoutMs, () => hasExited),
      exited.then((how) => {
        throw new Error(`Temporal dev server ${how} before it was ready${outputTail ? `:\n${outputTail}` : ''}`);
      }),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }

  const uiUrl = uiPort === null ? null : `http://${HOST}:${uiPort}`;
  log(`Temporal dev server ready on ${address}${uiUrl ? `, UI ${uiUrl}` : ''}`);
  return { address, uiUrl, metricsUrl: metricsPort === null ? null : `http://${HOST}:${metricsPort}/metrics`, pid: child.pid!, stop };
}

async function waitUntilReady(address: string, namespace: string, timeoutMs: number, gaveUp: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline && !gaveUp()) {
    // Connection.connect() leaves its gRPC channel open when it fails, which keeps
    // the process alive; lazy() hands us the channel so we can always close it.
    const connection = Connection.lazy({ address, connectTimeout: Math.min(5_000, Math.max(1, deadline - Date.now())) });
    try {
      await connection.ensureConnected();
      // The namespace check, not just the socket, is what workers and clients need.
      await connection.workflowService.describeNamespace({ namespace });
      return;
    } catch (err) {
      lastError = err;
    } finally {
      await connection.close().catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  if (gaveUp()) return; // the exit branch of the race reports the reason
  throw new Error(`Temporal dev server on ${address} not ready after ${timeoutMs} ms: ${String(lastError)}`);
}
