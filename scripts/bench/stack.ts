/**
 * The whole service for a benchmark, the way test/support/globalSetup.ts builds it: an
 * in-memory, headless Temporal CLI dev server on free ports, a throwaway PostgreSQL database
 * (migrated), the API (with its outbox dispatcher) and one worker in this process, and a
 * provisioned workspace. `stop()` tears down whatever was started, in reverse order, and
 * drops the database.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import { startApi, type StartedApi } from '../../main/api';
import { migrateUp, openOrm } from '../../db/orm';
import { provisionWorkspace } from '../../services/accounts/bootstrap';
import { loadConfig, type AppConfig } from '../../services/kernel/config';
import { createLogger } from '../../services/kernel/logger';
import { startWorker } from '../../main/worker';
import { startSupervisor } from '../../main/supervisor';
import { dropDatabase, ensurePostgres, type PostgresHandle } from '../lib/postgres';
import { TEMPORAL_CLI_VERSION, ensureTemporalCli, temporalCliCacheDir } from '../lib/temporalCli';
import { devServerDynamicConfig, findFreePort, startTemporalDevServer, type TemporalDevServer } from '../lib/temporalDevServer';
import { nameProfiledProcess, profileNodeArgs } from './profile';

export interface BenchStack {
  api: StartedApi;
  apiUrl: string;
  config: AppConfig;
  databaseUrl: string;
  databaseName: string;
  temporal: {
    address: string;
    pid: number;
    metricsUrl: string | null;
    cliPath: string;
    cliVersion: string;
    settings: Record<string, unknown>;
  };
  /** The worker's own process when started with `workerProcess`; null when it runs in this one. */
  workerPid: number | null;
  /**
   * The measured API's own process when started with `apiProcess` (`apiUrl` then points at it);
   * null when the API of this process serves `apiUrl`.
   */
  apiPid: number | null;
  /** Pids of the API processes serving `apiUrl` when started with `apiProcesses` (empty otherwise). */
  apiPids(): number[];
  workspace: { id: string; apiKey: string };
  logger: Logger;
  /**
   * Stops the service's worker (in this process or its own) before the rest of the stack, so a
   * backlog left after a scenario's drain does not run on while a baseline is measured.
   */
  stopWorker(): Promise<void>;
  stop(): Promise<void>;
}

const execFileP = promisify(execFile);

/**
 * Extra Temporal dynamic config from `BENCH_TEMPORAL_CONFIG="key=value,key=value"` (values are
 * numbers, booleans or strings), so one scenario can be measured under two server settings.
 */
export function temporalDynamicConfigFromEnv(raw = process.env.BENCH_TEMPORAL_CONFIG): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const pair of (raw ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`BENCH_TEMPORAL_CONFIG: expected key=value, got ${JSON.stringify(pair)}`);
    const value = pair.slice(eq + 1).trim();
    out[pair.slice(0, eq).trim()] =
      value === 'true' ? true : value === 'false' ? false : value !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
  }
  return out;
}

/**
 * `BENCH_TEMPORAL_SETTINGS=server-defaults` starts the dev server without the service's own
 * dynamic config (temporal/serverConfig.ts), to measure what it is worth; default `service`.
 */
export function temporalSettingsFromEnv(raw = process.env.BENCH_TEMPORAL_SETTINGS): 'service' | 'server-defaults' {
  if (raw === undefined || raw === '' || raw === 'service') return 'service';
  if (raw === 'server-defaults') return raw;
  throw new Error(`BENCH_TEMPORAL_SETTINGS: expected service or server-defaults, got ${JSON.stringify(raw)}`);
}

export interface BenchStackOptions {
  /**
   * Run the worker as its own process (`node --import tsx main/worker.ts`, the
   * docker-compose shape) instead of inside this one, so its CPU is measured apart from the API.
   */
  workerProcess?: boolean;
  /** Extra environment of the worker process (with `workerProcess`), e.g. its metrics address. */
  workerEnv?: Record<string, string>;
  /**
   * Also run the API as its own process (the docker-compose shape) and point `apiUrl` at it, so
   * its RSS is its own. The API in this process stays up (provisioning, `stack.api.deps`) but
   * serves no benchmark traffic.
   */
  apiProcess?: boolean;
  /**
   * How the worker and API processes run: `tsx` (the sources, `node --import tsx`) or `dist`
   * (the compiled tree of `npm run build` with plain node, as the Dockerfile runs them; the
   * worker then loads the prebuilt workflow bundle).
   */
  runtime?: 'tsx' | 'dist';
  /**
   * Run this many API processes under the supervisor of `npm start` (main/supervisor.ts: a node
   * cluster, one shared port, connections handed out round-robin) and point `apiUrl` at them.
   * Each runs its own outbox dispatcher, as in production; the API of this process stays up
   * (provisioning, `stack.api.deps`) but serves no benchmark traffic.
   */
  apiProcesses?: number;
}

export async function startBenchStack(log: (m: string) => void, opts: BenchStackOptions = {}): Promise<BenchStack> {
  const dynamicConfig = temporalDynamicConfigFromEnv();
  const serverSettings = temporalSettingsFromEnv();
  const cleanups: Array<{ what: string; run: () => Promise<unknown> }> = [];
  const stop = async () => {
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c.run();
      } catch (err) {
        log(`cleanup of ${c.what} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };

  try {
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-'));
    cleanups.push({ what: 'temp folder', run: () => rm(tmp, { recursive: true, force: true }) });
    const databaseName = `svc_bench_${randomBytes(6).toString('hex')}`;

    const [temporalParts, pg] = await Promise.all([
      (async () => {
        const cliPath = await ensureTemporalCli({ log });
        // The server's own shutdown chatter (dial errors of its internal workers) is noise here.
        let muted = false;
        const temporalLog = (m: string) => {
          if (!muted) log(m);
        };
        const server: TemporalDevServer = await startTemporalDevServer({
          binary: cliPath,
          uiPort: null,
          log: temporalLog,
          startTimeoutMs: 120_000,
          dynamicConfig,
          settings: serverSettings,
          metricsPort: 0,
        });
        cleanups.push({
          what: 'Temporal dev server',
          run: () => {
            muted = true;
            return server.stop();
          },
        });
        return { server, cliPath };
      })(),
      (async () => {
        const handle: PostgresHandle = await ensurePostgres({ dataDir: tmp, databaseName, log });
        cleanups.push({ what: 'PostgreSQL', run: () => handle.stop() });
        // An embedded cluster lives in tmp and goes with it; a shared server keeps nothing.
        if (!handle.embedded) cleanups.push({ what: `database ${databaseName}`, run: () => dropDatabase(handle.url) });
        return handle;
      })(),
    ]);
    const { server, cliPath } = temporalParts;
    const versionText = (
      await execFileP(cliPath, ['--version']).catch((err: Error) => ({ stdout: `unknown (${err.message})` }))
    ).stdout.trim();
    // `go install …@v1.5.1` builds report 0.0.0-DEV; the cache folder names the pinned tag.
    const pinned = cliPath === path.join(temporalCliCacheDir(), TEMPORAL_CLI_VERSION, 'temporal');
    const cliVersion = pinned ? `${TEMPORAL_CLI_VERSION} (pinned build; ${versionText})` : versionText;

    const orm = await openOrm(pg.url);
    try {
      await migrateUp(orm);
    } finally {
      await orm.close();
    }

    const config = loadConfig({
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SECRET_KEY: randomBytes(36).toString('base64url'), // 48 characters
      LOG_LEVEL: 'warn',
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    // Logs go to stderr so that stdout keeps only the summary.
    const logger = createLogger(config.logLevel, { name: 'bench', destination: 2 });
    const deps = { config, databaseUrl: pg.url, temporalAddress: server.address, logger };

    const api = await startApi(deps);
    cleanups.push({ what: 'API', run: () => api.stop() });
    let workerPid: number | null = null;
    let stopWorker: () => Promise<void>;
    const runtime = opts.runtime ?? 'tsx';
    if (opts.workerProcess) {
      const child = await spawnWorkerProcess(runtime, {
        DATABASE_URL: pg.url,
        TEMPORAL_ADDRESS: server.address,
        TEMPORAL_NAMESPACE: config.temporal.namespace,
        OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
        // The API encrypts payloads with a key derived from SECRET_KEY; the worker must share it.
        SECRET_KEY: config.secretKey!,
        ...opts.workerEnv,
      });
      stopWorker = once(() => child.stop());
      cleanups.push({ what: 'worker process', run: stopWorker });
      workerPid = child.pid;
    } else {
      const worker = await startWorker(deps);
      stopWorker = once(() => worker.stop());
      cleanups.push({ what: 'worker', run: stopWorker });
    }
    let apiPid: number | null = null;
    let apiUrl = api.url;
    /** The environment of an API process of its own listening on `port`. */
    const apiEnv = (port: number): Record<string, string> => ({
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: config.temporal.namespace,
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      SECRET_KEY: config.secretKey!,
      HOST: '127.0.0.1',
      PORT: String(port),
      // As the API of this process: request logs at info would cost the measured latency.
      LOG_LEVEL: 'warn',
    });
    if (opts.apiProcess) {
      const port = await findFreePort();
      apiUrl = `http://127.0.0.1:${port}`;
      const healthz = `${apiUrl}/healthz`;
      const child = await spawnTsProcess(
        // BENCH_API_NODE_ARGS: node flags of the API process, as BENCH_WORKER_NODE_ARGS for the worker.
        [
          ...(process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean),
          ...(runtime === 'dist' ? [path.join(DIST_ROOT, 'main', 'api.js')] : ['--import', 'tsx', 'main/api.ts']),
        ],
        apiEnv(port),
        () =>
          fetch(healthz).then(
            (r) => r.ok,
            () => false,
          ),
      );
      cleanups.push({ what: 'API process', run: () => child.stop() });
      apiPid = child.pid;
    }

    let apiPids = (): number[] => [];
    if (opts.apiProcesses && opts.apiProcesses > 0) {
      if (opts.apiProcess) throw new Error('apiProcess and apiProcesses exclude each other');
      const port = await findFreePort();
      apiUrl = `http://127.0.0.1:${port}`;
      const ext = runtime === 'dist' ? 'js' : 'ts';
      const supervisor = startSupervisor({
        logger,
        specs: [
          {
            role: 'api',
            count: opts.apiProcesses,
            module:
              runtime === 'dist' ? path.join(DIST_ROOT, 'main', `api.${ext}`) : path.resolve(__dirname, '..', '..', 'main', `api.${ext}`),
            heapMb: config.processes.apiHeapMb,
            env: () => apiEnv(port),
          },
        ],
      });
      cleanups.push({ what: 'API processes', run: () => supervisor.stop() });
      await supervisor.ready;
      apiPids = () => supervisor.pids().api;
    }

    const provisioned = await provisionWorkspace(api.deps.orm.em.fork(), {
      name: 'Benchmark workspace',
      ownerEmail: `bench-${randomBytes(4).toString('hex')}@example.test`,
      ownerPassword: randomBytes(18).toString('base64url'),
      keyName: 'Benchmark key',
    });

    return {
      api,
      apiUrl,
      config,
      databaseUrl: pg.url,
      databaseName,
      temporal: {
        address: server.address,
        pid: server.pid,
        metricsUrl: server.metricsUrl,
        cliPath,
        cliVersion,
        // What scripts/lib/temporalDevServer.ts passes to `temporal server start-dev`.
        settings: {
          command: 'temporal server start-dev',
          storage: 'in-memory (no --db-filename)',
          ui: 'headless',
          ip: '127.0.0.1',
          port: Number(server.address.split(':').pop()),
          logLevel: 'warn',
          namespace: config.temporal.namespace,
          profile: serverSettings,
          dynamicConfig: devServerDynamicConfig({ dynamicConfig, settings: serverSettings }),
          env: { TEMPORAL_VERSION_CHECK_DISABLED: '1' },
        },
      },
      workerPid,
      apiPid,
      apiPids,
      workspace: { id: provisioned.workspace.id, apiKey: provisioned.apiKey.token },
      logger,
      stopWorker,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `fn` called at most once; later calls get the first call's promise. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let called: Promise<void> | null = null;
  return () => (called ??= fn());
}

/**
 * The production worker entry point in its own process. `node --import tsx` keeps it one
 * process (the tsx CLI would fork a child that survives its parent). Resolves once it polls.
 */
async function spawnWorkerProcess(runtime: 'tsx' | 'dist', env: Record<string, string>): Promise<{ pid: number; stop(): Promise<void> }> {
  // BENCH_WORKER_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the worker.
  const extraArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const entry = runtime === 'dist' ? [path.join(DIST_ROOT, 'main', 'worker.js')] : ['--import', 'tsx', 'main/worker.ts'];
  return spawnTsProcess([...extraArgs, ...entry], { ...env, LOG_LEVEL: 'info' }, 'worker started');
}

/** The compiled tree of `npm run build`. */
export const DIST_ROOT = path.resolve(__dirname, '..', '..', 'dist');

/**
 * `node <args>` from the repository root with `env` added, supervised (superviseChild);
 * resolves once its output contains `ready` (a string) or `ready()` answers true (polled).
 */
export async function spawnTsProcess(
  args: string[],
  env: Record<string, string>,
  ready: string | (() => Promise<boolean>),
): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [...profileNodeArgs(), ...args], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = superviseChild(child);
  nameProfiledProcess(
    child.pid!,
    path.relative(path.resolve(__dirname, '..', '..'), args.find((a) => /\.[jt]s$/.test(a)) ?? args.join(' ')),
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    // Keep reading after start: a full pipe would block the child.
    const onData = (chunk: Buffer) => {
      if (output.length < 20_000) output += chunk.toString();
      if (typeof ready === 'string' && output.includes(ready)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited early (${code}): ${output.slice(-2000)}`)));
    if (typeof ready !== 'string') {
      const poll = async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        if (await ready()) resolve();
        else setTimeout(() => void poll(), 200);
      };
      void poll();
    }
  });
  return { pid: child.pid!, stop };
}

/**
 * Ties a child process to this one: it is killed if the benchmark exits, and the returned
 * `stop` ends it with SIGTERM (SIGKILL after 15 s) and waits for it.
 */
export function superviseChild(child: ChildProcess): () => Promise<void> {
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
}

/** The Temporal facts every results file records: CLI version and path, dev-server settings. */
export function temporalFacts(stack: BenchStack) {
  return { cliVersion: stack.temporal.cliVersion, cliPath: stack.temporal.cliPath, devServer: stack.temporal.settings };
}
