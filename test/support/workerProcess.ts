/** A worker in its own process, exactly as production runs it, for tests that SIGKILL workers. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { testEnv } from './env';
import { TEST_SECRET_KEY } from './harness';

/** Starts `temporal/worker-main.ts` with the test database, Temporal and SECRET_KEY plus `env`; resolves once it polls. */
export function spawnWorker(env: Record<string, string> = {}): Promise<ChildProcess> {
  const root = path.resolve(__dirname, '../..');
  // `node --import tsx` keeps the worker in this one process (the tsx CLI would fork a child),
  // so SIGKILL really kills the worker and leaves nothing running.
  const child = spawn(process.execPath, ['--import', 'tsx', 'temporal/worker-main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: testEnv('databaseUrl'),
      TEMPORAL_ADDRESS: testEnv('temporalAddress'),
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      // Payloads are encrypted with a key derived from SECRET_KEY: the worker must share the API's.
      SECRET_KEY: TEST_SECRET_KEY,
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
