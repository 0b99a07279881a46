/** A worker in its own process, exactly as production runs it, for tests that SIGKILL workers. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { testEnv } from './env';
import { TEST_SECRET_KEY } from './harness';

/**
 * Starts `main/worker.ts` with the test database, Temporal, SECRET_KEY and the workflow bundle of
 * global setup (as `npm start` hands its workers one), plus `env`; resolves once it polls.
 * `WORKFLOW_BUNDLE_PATH: ''` in `env` makes it bundle its workflows at start instead, as
 * `npm run start:worker` does from sources (webpack: seconds of CPU per start).
 */
export function spawnWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
  const root = path.resolve(__dirname, '../..');
  // `node --import tsx` keeps the worker in this one process (the tsx CLI would fork a child),
  // so SIGKILL really kills the worker and leaves nothing running.
  const child = spawn(process.execPath, ['--import', 'tsx', 'main/worker.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: testEnv('databaseUrl'),
      TEMPORAL_ADDRESS: testEnv('temporalAddress'),
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      // Payloads are encrypted with a key derived from SECRET_KEY: the worker must share the API's.
      SECRET_KEY: TEST_SECRET_KEY,
      WORKFLOW_BUNDLE_PATH: testEnv('workflowBundle'),
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('worker started')) resolve(child);
    });
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${output.slice(-2000)}`)));
  });
}

/** SIGKILLs the worker (if still alive) and waits for it to be gone. */
export async function killWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Every file below `dir` (none when it does not exist). */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) await walk(full);
      else out.push(full);
    }
  };
  await walk(dir);
  return out;
}

/** One JSON log line of a supervised service (pino), as parsed from its stdout. */
export interface ServiceLogLine {
  msg: string;
  role?: 'api' | 'worker';
  childPid?: number;
  [key: string]: unknown;
}

export interface SupervisedService {
  child: ChildProcess;
  url: string;
  /** Every JSON log line so far (the supervisor's and its children's: they share stdout). */
  logs: ServiceLogLine[];
  /** Pids of the children of `role` that are alive now, by the supervisor's start and exit lines. */
  pids(role: 'api' | 'worker'): number[];
  /** Resolves with the first log line (already seen or to come) that `match` accepts. */
  waitForLog(match: (line: ServiceLogLine) => boolean, timeoutMs?: number): Promise<ServiceLogLine>;
  /** SIGTERM to the supervisor, then waits for it to exit; resolves with its exit code. */
  stop(): Promise<number | null>;
}

/**
 * `npm start` exactly as a user runs it (`node --import tsx scripts/start.ts`), against the
 * test database and Temporal server (so it starts neither), with the workflow bundle of global
 * setup, on `port`. `env` adds settings (API_PROCESSES, WORKERS, …) and test hooks
 * (NODE_OPTIONS reaches every child). Resolves once it printed its API line (every child serves).
 */
export function spawnService(port: number, env: Record<string, string> = {}, dataDir?: string): Promise<SupervisedService> {
  const root = path.resolve(__dirname, '../..');
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: testEnv('databaseUrl'),
      TEMPORAL_ADDRESS: testEnv('temporalAddress'),
      WORKFLOW_BUNDLE_PATH: testEnv('workflowBundle'),
      SECRET_KEY: TEST_SECRET_KEY,
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      ...(dataDir ? { DATA_DIR: dataDir } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: ServiceLogLine[] = [];
  const waiters: Array<{ match: (l: ServiceLogLine) => boolean; resolve: (l: ServiceLogLine) => void }> = [];
  let output = '';
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const text of lines) {
      if (!text.startsWith('{')) continue;
      let line: ServiceLogLine;
      try {
        line = JSON.parse(text);
      } catch {
        continue;
      }
      logs.push(line);
      for (const w of [...waiters]) {
        if (!w.match(line)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const service: SupervisedService = {
    child,
    url: `http://127.0.0.1:${port}`,
    logs,
    pids(role) {
      const alive = new Set<number>();
      for (const l of logs) {
        if (l.role !== role || !l.childPid) continue;
        if (l.msg === 'child process started') alive.add(l.childPid);
        else if (/exited; restarting|child process stopped/.test(l.msg)) alive.delete(l.childPid);
      }
      return [...alive];
    },
    waitForLog(match, timeoutMs = 60_000) {
      const seen = logs.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no such log line within ${timeoutMs} ms:\n${output.slice(-3000)}`)), timeoutMs);
        waiters.push({
          match,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
      });
    },
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
      return new Promise((resolve) => {
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      });
    },
  };
  return new Promise((resolve, reject) => {
    const onData = () => /API:\s+http/.test(output) && resolve(service);
    child.stdout!.on('data', onData);
    child.once('exit', (code, signal) =>
      reject(new Error(`service exited (${signal ?? code}) before it was ready:\n${output.slice(-3000)}`)),
    );
  });
}
