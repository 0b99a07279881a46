/**
 * `npm run bench -- restart`: how long `npm start` takes to come back after a kill -9.
 *
 * Starts the service as `npm start` does (tsx scripts/start.ts) on a fresh DATA_DIR, a
 * throwaway database of the local PostgreSQL server and free ports; waits for its API line;
 * kills it with SIGKILL; starts it again on the same DATA_DIR and ports and times the second
 * start to its API line and to the first 200 from /healthz. Repeats BENCH_RUNS times (default 3).
 * The first start of all builds the workflow bundle cache; later starts reuse it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { dropDatabase } from '../lib/postgres';
import { findFreePort } from '../lib/temporalDevServer';
import { benchEnvironment, envNumber, writeResults, type BenchContext } from './report';
import { fmtSpread, spread } from './stats';

const ROOT = path.resolve(__dirname, '..', '..');

function startService(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ child: ChildProcess; ms: number }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no API line after ${timeoutMs} ms:\n${output.slice(-3000)}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/API:\s+http/.test(output)) {
        clearTimeout(timer);
        resolve({ child, ms: Date.now() - t0 });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${signal ?? code}) before it was ready:\n${output.slice(-3000)}`));
    });
  });
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function healthyAfter(port: number, t0: number): Promise<number> {
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function restartScenario(ctx: BenchContext): Promise<void> {
  const runs = envNumber('BENCH_RUNS', 3);
  const started = new Date();
  const environment = await benchEnvironment();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-restart-'));
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/svc_bench_restart_${randomBytes(5).toString('hex')}`;
  const port = await findFreePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: url.toString(), PORT: String(port), LOG_LEVEL: 'warn' };
  env.TEMPORAL_PORT = String(await findFreePort());
  env.TEMPORAL_UI_PORT = String(await findFreePort());
  for (const name of ['TEMPORAL_ADDRESS', 'TEMPORAL_UI_URL', 'NODE_ENV']) delete env[name];
  let current: ChildProcess | null = null;
  try {
    ctx.log('first start (creates the database, the Temporal state and the bundle cache)');
    const first = await startService(env, 300_000);
    current = first.child;
    const apiLine: number[] = [];
    const healthy: number[] = [];
    for (let i = 0; i < runs; i++) {
      ctx.throwIfInterrupted();
      await kill9(current);
      const t0 = Date.now();
      const again = await startService(env, 300_000);
      current = again.child;
      apiLine.push(again.ms);
      healthy.push(await healthyAfter(port, t0));
      ctx.log(`restart ${i + 1}/${runs}: API line after ${again.ms} ms, /healthz 200 after ${healthy[healthy.length - 1]} ms`);
    }
    const result = {
      scenario: 'restart',
      environment,
      firstStartMs: first.ms,
      restartToApiLineMs: spread(apiLine),
      restartToHealthyMs: spread(healthy),
      samples: { apiLine, healthy },
    };
    const file = await writeResults('restart', started, result);
    ctx.log(
      `first start ${first.ms} ms; restart to API line ${fmtSpread(result.restartToApiLineMs, 0)} ms, to /healthz 200 ${fmtSpread(result.restartToHealthyMs, 0)} ms; results in ${file}`,
    );
  } finally {
    if (current) await kill9(current);
    await new Promise((r) => setTimeout(r, 2_000)); // the watchdog stops the dev server after its parent
    await dropDatabase(url.toString()).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
