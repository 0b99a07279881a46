/** Pieces the scenarios share: the load generator child, the outside service, background CPU, server facts. */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import type pg from 'pg';
import { listenOnLoopback } from '../lib/loopback';
import { cpuBetween, sampleCpu } from './cpu';
import type { LoadRunRequest, LoadRunResult, LoadgenMessage } from './loadgen';
import type { BenchContext } from './report';
import { round } from './stats';

/** The machine's busy share before anything of the benchmark runs. */
export async function backgroundCpu(ms: number): Promise<{ busyPercent: number; capacityPercent: number } | null> {
  const a = sampleCpu({});
  await new Promise((r) => setTimeout(r, ms));
  const u = cpuBetween(a, sampleCpu({}), []);
  return u.system === undefined ? null : { busyPercent: round(u.system, 1), capacityPercent: round(u.systemCapacity, 0) };
}

export async function serverVersion(db: pg.Client): Promise<string> {
  return (
    (await db.query<{ v: string }>("select current_setting('server_version') as v").catch(() => ({ rows: [{ v: 'unknown' }] }))).rows[0]
      ?.v ?? 'unknown'
  );
}

export function roundAll(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v, 1)]));
}

export interface Loadgen {
  pid: number;
  run(args: Omit<LoadRunRequest, 'type' | 'id'>): Promise<LoadRunResult>;
  stop(): void;
}

/** Forks scripts/bench/loadgen.ts (inheriting tsx's loader through execArgv). */
export function startLoadgen(): Loadgen {
  const child: ChildProcess = fork(path.join(__dirname, 'loadgen.ts'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let nextId = 1;
  const pending = new Map<number, { resolve: (r: LoadRunResult) => void; reject: (e: Error) => void }>();
  const failAll = (why: string) => {
    for (const p of pending.values()) p.reject(new Error(why));
    pending.clear();
  };
  child.on('message', (msg: LoadgenMessage) => {
    const p = pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.type === 'result') p.resolve(msg.result);
    else p.reject(new Error(`load generator: ${msg.message}`));
  });
  child.on('exit', (code, signal) => failAll(`load generator exited (${signal ?? `code ${code}`})`));
  child.on('error', (err) => failAll(`load generator failed: ${err.message}`));
  return {
    pid: child.pid!,
    run: (args) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        child.send({ type: 'run', id, ...args } satisfies LoadRunRequest);
      }),
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
  };
}

/** The "outside service" http nodes call in benchmarks: a loopback server answering `{"ok":true}` at once. */
export async function startTargetServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  server.keepAliveTimeout = 60_000;
  return listenOnLoopback(server);
}

/** Runs a task per item with at most `concurrency` in flight. */
export async function pool<T, R>(
  items: T[],
  concurrency: number,
  task: (item: T, i: number) => Promise<R>,
  ctx: BenchContext,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      ctx.throwIfInterrupted();
      const i = next++;
      out[i] = await task(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return out;
}
