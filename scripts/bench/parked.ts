/**
 * `npm run bench -- parked`: memory and API latency with many runs parked on durable waits.
 *
 * Three workflows park on each kind of wait the engine has (a `wait` timer, an `approval`, an
 * `event`). BENCH_PARKED runs (a third each) are started through `POST /execute` with bounded
 * concurrency until every one is `waiting`. The worker runs in its own process (as in
 * docker-compose) so its RSS is measured apart from the API (this process). RSS of the worker,
 * the API and the Temporal dev server is sampled every second; API latency (autocannon, as the
 * other scenarios) is measured before parking and while parked. Then a sample of each kind is
 * resumed (approved, sent its event, its timer left to fire) and must end `succeeded` with its
 * own output. The timer sample runs on a workflow deployed after the rest are parked, whose
 * `until` falls after the measurements, so those timers fire only once they are done.
 *
 * Then bare Temporal does the same (scripts/bench/parkedBaseline.ts): as many plain workflows
 * parked on an update, a signal and a sleep, on a bare worker in its own process with the same
 * sticky cache size, its RSS sampled the same way; the results give the worker's RSS as a
 * ratio service/bare (BENCH_PARKED_BARE=0 skips it).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { quietBundlerLogger } from '../../temporal/worker';
import pg from 'pg';
import { DEFAULT_MAX_CACHED_WORKFLOWS } from '../../services/kernel/config';
import { apiCall, deployWorkflow } from './api';
import { pidTree } from './cpu';
import type { LoadRunResult } from './loadgen';
import { benchEnvironment, envNumber, writeResults, type BenchContext } from './report';
import { backgroundCpu, pool, serverVersion, startLoadgen, type Loadgen } from './shared';
import { findFreePort } from '../lib/temporalDevServer';
import { bareParking, parkingPlan, tallyOutcomes } from './parkedBaseline';
import { DIST_ROOT, startBenchStack, temporalFacts, type BenchStack } from './stack';
import { percentile, round, textTable } from './stats';

type Kind = 'approval' | 'event' | 'timer';
const KINDS: Kind[] = ['approval', 'event', 'timer'];
const MiB = 1024 * 1024;
const execFileP = promisify(execFile);

interface RssSample {
  at: number;
  phase: string;
  /** Runs in status `waiting` at that moment. */
  waiting: number;
  apiMiB: number;
  workerMiB: number;
  temporalMiB: number;
  /** The bare-Temporal worker (scripts/bench/baseline) while it runs; null before and after. */
  bareWorkerMiB: number | null;
  /** The worker's Temporal SDK sticky-cache figures at that moment (Prometheus gauges/counters). */
  stickyCache: Record<string, number> | null;
}

const graph = (kind: Kind, waitConfig: Record<string, unknown>) => {
  const waitNode = { approval: 'approval', event: 'event', timer: 'wait' }[kind];
  const use = {
    approval: '"approved " & $trigger.name & ": " & comment',
    event: '"event " & $trigger.name & ": " & $string(amount)',
    timer: '"timer " & $trigger.name',
  }[kind];
  return {
    name: `Benchmark parked ${kind}`,
    nodes: [
      { id: 'start', type: 'start', config: {} },
      { id: 'park', type: waitNode, config: waitConfig },
      { id: 'use', type: 'transform', config: { expression: use } },
    ],
    edges: [
      { source: 'start', target: 'park' },
      { source: 'park', target: 'use', ...(kind === 'approval' ? { sourceHandle: 'approved' } : {}) },
    ],
  };
};
const expectedOutput = (kind: Kind, name: string, i: number) =>
  kind === 'approval' ? `approved ${name}: ok ${name}` : kind === 'event' ? `event ${name}: ${i}` : `timer ${name}`;

export async function parkedScenario(ctx: BenchContext): Promise<void> {
  const settings = {
    parked: Math.floor(envNumber('BENCH_PARKED', 10_000)),
    startConcurrency: Math.floor(envNumber('BENCH_PARKED_CONCURRENCY', 20)),
    resumePerKind: Math.floor(envNumber('BENCH_PARKED_RESUME', 100)),
    holdS: envNumber('BENCH_PARKED_HOLD_S', 30),
    durationS: envNumber('BENCH_DURATION_S', 5),
    runsPerEndpoint: Math.floor(envNumber('BENCH_RUNS', 3)),
    connections: Math.floor(envNumber('BENCH_PARKED_CONNECTIONS', 10)),
    parkDeadlineS: envNumber('BENCH_DRAIN_S', 1800),
    maxCachedWorkflows: process.env.WORKER_MAX_CACHED_WORKFLOWS
      ? Number(process.env.WORKER_MAX_CACHED_WORKFLOWS)
      : DEFAULT_MAX_CACHED_WORKFLOWS,
    /** BENCH_PARKED_BARE=0 skips the bare-Temporal half. */
    bare: process.env.BENCH_PARKED_BARE !== '0',
    runtime: serviceRuntimeFromEnv(),
  };
  const { log } = ctx;
  const started = new Date();
  const env = await benchEnvironment();
  log(
    `parked: ${settings.parked} runs (a third each on approval, event, timer) at concurrency ${settings.startConcurrency}; worker maxCachedWorkflows ${settings.maxCachedWorkflows}`,
  );
  const background = await backgroundCpu(3_000);

  const metricsPort = await findFreePort();
  let stack: BenchStack | null = null;
  let loadgen: Loadgen | null = null;
  let db: pg.Client | null = null;
  let sampler: NodeJS.Timeout | null = null;
  let bareBundle: string | undefined;
  try {
    bareBundle = settings.runtime === 'dist' ? await prepareDist(log) : undefined;
    stack = await startBenchStack(log, {
      workerProcess: true,
      workerEnv: { TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` },
      runtime: settings.runtime,
      apiProcess: settings.runtime === 'dist',
    });
    const s = stack;
    const apiPid = s.apiPid ?? process.pid;
    db = new pg.Client({ connectionString: stack.databaseUrl });
    db.on('error', () => undefined);
    await db.connect();
    const d = db;
    loadgen = startLoadgen();
    const lg = loadgen;
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;

    // RSS every second, labelled with the phase it falls in.
    let phase = 'idle';
    let barePid: number | null = null;
    const samples: RssSample[] = [];
    const takeSample = async () => {
      samples.push({
        at: Date.now(),
        phase,
        waiting: await waitingCount(d),
        apiMiB: rssMiB([apiPid]),
        workerMiB: s.workerPid ? rssMiB([s.workerPid]) : NaN,
        temporalMiB: rssMiB(pidTree(s.temporal.pid)),
        bareWorkerMiB: barePid ? rssMiB([barePid]) : null,
        stickyCache: await stickyCache(metricsUrl),
      });
    };
    sampler = setInterval(() => void takeSample().catch(() => undefined), 1_000);

    const wf: Record<Kind, string> = {} as Record<Kind, string>;
    wf.approval = (await deployWorkflow(stack, graph('approval', { prompt: 'Go?' }))).workflowId;
    wf.event = (await deployWorkflow(stack, graph('event', {}))).workflowId;
    // The timer runs that are not resumed wait a day; the stack is gone long before.
    wf.timer = (await deployWorkflow(stack, graph('timer', { seconds: 86_400 }))).workflowId;
    log(`deployed ${JSON.stringify(wf)}; worker pid ${stack.workerPid}`);

    const headers = { authorization: `Bearer ${stack.workspace.apiKey}` };
    const endpoints = [
      { name: 'GET /api/v1/runs?limit=50', url: `${stack.apiUrl}/api/v1/runs?limit=50` },
      { name: 'GET /api/v1/workflows/{id}', url: `${stack.apiUrl}/api/v1/workflows/${wf.approval}` },
    ];
    const latency = async (label: string) => {
      const out: Record<string, { p50: number; p99: number; reqPerSec: number; non2xx: number; runs: LoadRunResult['latencyMs'][] }> = {};
      for (const e of endpoints) {
        const runs: LoadRunResult[] = [];
        for (let r = 0; r < settings.runsPerEndpoint; r++) {
          ctx.throwIfInterrupted();
          runs.push(await lg.run({ url: e.url, method: 'GET', connections: settings.connections, durationS: settings.durationS, headers }));
        }
        const p50s = runs.map((x) => x.latencyMs.p50).sort((a, b) => a - b);
        const p99s = runs.map((x) => x.latencyMs.p99).sort((a, b) => a - b);
        out[e.name] = {
          p50: round(percentile(p50s, 50), 1),
          p99: round(percentile(p99s, 50), 1),
          reqPerSec: round(runs.reduce((n, x) => n + x.acceptedPerSec, 0) / runs.length, 0),
          non2xx: runs.reduce((n, x) => n + x.non2xx + x.errors, 0),
          runs: runs.map((x) => x.latencyMs),
        };
        log(
          `  ${label} ${e.name}: p50 ${out[e.name].p50} ms, p99 ${out[e.name].p99} ms (median of ${runs.length} × ${settings.durationS} s at c=${settings.connections}), ${out[e.name].reqPerSec} req/s`,
        );
      }
      return out;
    };

    // Before: a few runs of each kind through to the end (warms the code paths), then idle RSS and latency.
    phase = 'warm-up';
    // 20 of each kind: 60 finished runs, so the runs list answers a full page of 50 before parking
    // as it does while parked (with 15 it answered 15 rows before and 50 after).
    const warm = await parkAndResume(ctx, s, d, wf, 'warm', 20);
    log(`warm-up: ${warm.succeeded}/${warm.total} resumed runs succeeded`);
    phase = 'before';
    await sleep((settings.holdS * 1000) / 3);
    const latencyBefore = await latency('before');

    // Park: every run except the timer sample, then the timer sample on a workflow whose
    // timer fires after the measurements below.
    const { plan, timerSample } = parkingPlan(settings.parked, settings.resumePerKind);
    phase = 'parking';
    const parkStart = Date.now();
    const parkedRuns = await startRuns(ctx, s, wf, plan, settings.startConcurrency);
    const startsDoneMs = Date.now() - parkStart;
    log(
      `started ${parkedRuns.length} runs in ${(startsDoneMs / 1000).toFixed(1)} s (${round(parkedRuns.length / (startsDoneMs / 1000), 1)}/s); waiting until all are waiting`,
    );
    await untilWaiting(ctx, d, parkedRuns.length, settings.parkDeadlineS, log);
    const mainParkedMs = Date.now() - parkStart;

    const sampleStart = Date.now();
    const measureBudgetS = settings.holdS + endpoints.length * settings.runsPerEndpoint * (settings.durationS + 1) + 30;
    const sampleParkBudgetS = Math.max(20, (timerSample / Math.max(1, parkedRuns.length / (mainParkedMs / 1000))) * 3);
    const until = new Date(Date.now() + (sampleParkBudgetS + measureBudgetS) * 1000).toISOString();
    const timerSampleWf = (await deployWorkflow(stack, graph('timer', { until }))).workflowId;
    const timerRuns = await startRuns(
      ctx,
      s,
      { ...wf, timer: timerSampleWf },
      Array.from({ length: timerSample }, (_, i) => ({ kind: 'timer' as const, name: `t${i}` })),
      settings.startConcurrency,
    );
    await untilWaiting(ctx, d, parkedRuns.length + timerRuns.length, settings.parkDeadlineS, log);
    const parkedAt = Date.now();
    const timeToParkS = (parkedAt - parkStart) / 1000 - (sampleStart - (parkStart + mainParkedMs)) / 1000;
    log(
      `all ${parkedRuns.length + timerRuns.length} runs waiting after ${((parkedAt - parkStart) / 1000).toFixed(1)} s; sample timers fire at ${until}`,
    );

    // While parked: RSS for holdS, then latency.
    phase = 'parked';
    await sleep(settings.holdS * 1000);
    const latencyParked = await latency('parked');
    const stillWaiting = await waitingCount(d);
    const allStillParked = stillWaiting === parkedRuns.length + timerRuns.length;
    if (!allStillParked) log(`warning: only ${stillWaiting} runs still waiting at the end of the measurements (timers fired early?)`);

    // Resume a sample of each kind.
    phase = 'resume';
    const resumeStart = Date.now();
    const byKind = (k: Kind) => parkedRuns.filter((r) => r.kind === k).slice(0, settings.resumePerKind);
    const sample = [...byKind('approval'), ...byKind('event'), ...timerRuns];
    await resumeRuns(ctx, s, sample, settings.startConcurrency);
    const resumeDeadline = Math.max(Date.parse(until) + 120_000, Date.now() + 300_000);
    const resumed = await checkFinished(ctx, s, d, sample, resumeDeadline);
    log(
      `resume: ${resumed.succeeded}/${resumed.total} succeeded with the expected output in ${((Date.now() - resumeStart) / 1000).toFixed(1)} s (by kind ${JSON.stringify(resumed.byKind)})`,
    );
    phase = 'after';
    await sleep(3_000);

    // Bare Temporal: as many plain workflows parked on the same waits, on a bare worker of its own.
    const bare = settings.bare
      ? await bareParking(ctx, s, {
          ...settings,
          workflowBundlePath: bareBundle,
          setPhase: (p) => (phase = p),
          setWorkerPid: (pid) => (barePid = pid),
          expectedOutput,
        })
      : null;
    clearInterval(sampler);
    sampler = null;

    const summary = summarizeRss(samples);
    const bareComparison = bare ? compareWithBare(summary) : null;
    const result = {
      scenario: 'parked',
      date: started.toISOString(),
      ...env,
      temporal: temporalFacts(stack),
      postgres: { database: stack.databaseName, serverVersion: await serverVersion(db) },
      service:
        settings.runtime === 'dist'
          ? {
              api: 'its own process: node dist/main/api.js (API + outbox dispatcher)',
              worker: 'one worker process: node dist/main/worker.js with the prebuilt workflow bundle',
              logLevel: stack.config.logLevel,
            }
          : {
              api: 'this process (API + outbox dispatcher + the benchmark driver)',
              worker: 'one worker process (node --import tsx main/worker.ts, bundling its workflows at start)',
              logLevel: stack.config.logLevel,
            },
      workflows: {
        approval: graph('approval', { prompt: 'Go?' }),
        event: graph('event', {}),
        timer: graph('timer', { seconds: 86_400 }),
        timerSample: graph('timer', { until }),
      },
      settings,
      backgroundCpuBeforeStart: background,
      warmup: warm,
      park: {
        runs: parkedRuns.length + timerRuns.length,
        byKind: {
          approval: parkedRuns.filter((r) => r.kind === 'approval').length,
          event: parkedRuns.filter((r) => r.kind === 'event').length,
          timer: parkedRuns.filter((r) => r.kind === 'timer').length + timerRuns.length,
        },
        startsPerSec: round(parkedRuns.length / (startsDoneMs / 1000), 1),
        mainBatchAllWaitingS: round(mainParkedMs / 1000, 1),
        timeToParkS: round(timeToParkS, 1),
        allStillParkedAfterMeasurements: allStillParked,
      },
      rssMiB: summary,
      latencyMs: { before: latencyBefore, parked: latencyParked },
      resume: resumed,
      bare: bare ? { ...bare, rss: bareComparison } : null,
      samples,
    };
    const file = await writeResults('parked', started, result);
    printSummary(result, file);
  } finally {
    if (sampler) clearInterval(sampler);
    loadgen?.stop();
    if (bareBundle) await rm(path.dirname(bareBundle), { recursive: true, force: true });
    await db?.end().catch(() => undefined);
    if (stack) {
      log('shutting down the stack');
      await stack.stop();
    }
  }
}

/**
 * BENCH_SERVICE_RUNTIME: `tsx` (default; the worker under tsx, the API in this process) or
 * `dist` (the Dockerfile's form: `npm run build`, then the API and the worker each as their own
 * `node dist/...` process).
 */
function serviceRuntimeFromEnv(raw = process.env.BENCH_SERVICE_RUNTIME): 'tsx' | 'dist' {
  if (raw === undefined || raw === '' || raw === 'tsx') return 'tsx';
  if (raw === 'dist') return raw;
  throw new Error(`BENCH_SERVICE_RUNTIME: expected tsx or dist, got ${JSON.stringify(raw)}`);
}

/**
 * Builds dist/ (`npm run build`, with its workflow bundle; BENCH_DIST_BUILD=0 reuses the one
 * there) and bundles the baseline's compiled workflows for the bare worker, which then loads a
 * prebuilt bundle as the service's worker does. Returns that bundle's file.
 */
async function prepareDist(log: (m: string) => void): Promise<string> {
  if (process.env.BENCH_DIST_BUILD !== '0') {
    log('npm run build (BENCH_DIST_BUILD=0 reuses dist/)');
    await execFileP('npm', ['run', 'build'], { cwd: path.resolve(DIST_ROOT, '..'), maxBuffer: 16 * MiB });
  }
  if (!existsSync(path.join(DIST_ROOT, 'temporal', 'workflow-bundle.js')))
    throw new Error('dist/temporal/workflow-bundle.js is missing: run npm run build');
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(DIST_ROOT, 'scripts', 'bench', 'baseline', 'workflows.js'),
    logger: quietBundlerLogger,
  });
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'svc-bench-bare-')), 'baseline-bundle.js');
  await writeFile(file, code);
  return file;
}

interface StartedRun {
  kind: Kind;
  name: string;
  runId: string;
  index: number;
}

async function startRuns(
  ctx: BenchContext,
  stack: BenchStack,
  wf: Record<Kind, string>,
  plan: Array<{ kind: Kind; name: string }>,
  concurrency: number,
): Promise<StartedRun[]> {
  return pool(
    plan,
    concurrency,
    async (p, index) => {
      const res = await apiCall<{ run?: { id?: string } }>(stack, 'POST', `/api/v1/workflows/${wf[p.kind]}/execute`, {
        input: { name: p.name },
      });
      if (!res.run?.id) throw new Error(`execute returned no run: ${JSON.stringify(res)}`);
      return { ...p, runId: res.run.id, index };
    },
    ctx,
  );
}

/** Approves the approval runs, posts each event run's body to its resume URL; timer runs need nothing. */
async function resumeRuns(ctx: BenchContext, stack: BenchStack, runs: StartedRun[], concurrency: number): Promise<void> {
  await pool(
    runs.filter((r) => r.kind !== 'timer'),
    concurrency,
    async (r) => {
      if (r.kind === 'approval') {
        await apiCall(stack, 'POST', `/api/runs/${r.runId}/approval`, { decision: 'approved', comment: `ok ${r.name}` });
        return;
      }
      const view = await apiCall<{ run: { waits: Array<{ resumeUrl?: string }> } }>(stack, 'GET', `/api/v1/runs/${r.runId}`);
      const resumeUrl = view.run.waits[0]?.resumeUrl;
      if (!resumeUrl) throw new Error(`run ${r.runId} lists no resume URL`);
      const res = await fetch(`${stack.apiUrl}${new URL(resumeUrl).pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: r.index }),
      });
      if (res.status !== 202) throw new Error(`resume of ${r.runId} answered ${res.status}: ${await res.text()}`);
    },
    ctx,
  );
}

/** Waits until every run of `runs` is terminal, then checks each succeeded with its own output (read through the API). */
async function checkFinished(ctx: BenchContext, stack: BenchStack, db: pg.Client, runs: StartedRun[], deadline: number) {
  const ids = runs.map((r) => r.runId);
  for (;;) {
    ctx.throwIfInterrupted();
    const { rows } = await db.query<{ n: number }>(
      `select count(*)::int as n from runs where id = any($1) and status in ('succeeded', 'failed', 'canceled')`,
      [ids],
    );
    if (rows[0].n === ids.length || Date.now() > deadline) break;
    await sleep(500);
  }
  return tallyOutcomes(runs, 10, ctx, async (r) => {
    const view = await apiCall<{ run: { status: string; output: unknown } }>(stack, 'GET', `/api/v1/runs/${r.runId}`);
    return view.run.status === 'succeeded' && view.run.output === expectedOutput(r.kind, r.name, r.index)
      ? null
      : `${r.runId}: ${view.run.status} ${JSON.stringify(view.run.output)}`;
  });
}

/** A handful of runs of each kind parked and resumed before measuring: warms the code paths and proves the setup. */
async function parkAndResume(
  ctx: BenchContext,
  stack: BenchStack,
  db: pg.Client,
  wf: Record<Kind, string>,
  prefix: string,
  perKind: number,
) {
  // Warm-up timers use a short wait of their own.
  const timerWf = (await deployWorkflow(stack, graph('timer', { seconds: 2 }))).workflowId;
  const plan = KINDS.flatMap((kind) => Array.from({ length: perKind }, (_, i) => ({ kind, name: `${prefix}-${kind}-${i}` })));
  const runs = await startRuns(ctx, stack, { ...wf, timer: timerWf }, plan, 5);
  await untilWaiting(
    ctx,
    db,
    runs.filter((r) => r.kind !== 'timer').length,
    120,
    () => undefined,
    runs.filter((r) => r.kind !== 'timer').map((r) => r.runId),
  );
  await resumeRuns(ctx, stack, runs, 5);
  return checkFinished(ctx, stack, db, runs, Date.now() + 120_000);
}

async function waitingCount(db: pg.Client, ids?: string[]): Promise<number> {
  const { rows } = ids
    ? await db.query<{ n: number }>(`select count(*)::int as n from runs where status = 'waiting' and id = any($1)`, [ids])
    : await db.query<{ n: number }>(`select count(*)::int as n from runs where status = 'waiting'`);
  return rows[0].n;
}

async function untilWaiting(
  ctx: BenchContext,
  db: pg.Client,
  expected: number,
  deadlineS: number,
  log: (m: string) => void,
  ids?: string[],
): Promise<void> {
  const deadline = Date.now() + deadlineS * 1000;
  let lastLog = Date.now();
  for (;;) {
    ctx.throwIfInterrupted();
    const n = await waitingCount(db, ids);
    if (n >= expected) return;
    if (Date.now() > deadline) throw new Error(`only ${n} of ${expected} runs waiting after ${deadlineS} s`);
    if (Date.now() - lastLog > 15_000) {
      log(`  ${n}/${expected} waiting`);
      lastLog = Date.now();
    }
    await sleep(500);
  }
}

/** Resident set size of the given processes, summed (VmRSS from /proc; Linux only, NaN elsewhere). */
function rssMiB(pids: number[]): number {
  let kib = 0;
  for (const pid of pids) {
    try {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) kib += Number(m[1]);
    } catch {
      if (pids.length === 1) return NaN;
    }
  }
  return round((kib * 1024) / MiB, 1);
}

/** The worker's sticky-cache metrics (temporal_sticky_cache_*), summed over label sets; null when unreadable. */
async function stickyCache(metricsUrl: string): Promise<Record<string, number> | null> {
  const text = await fetch(metricsUrl, { signal: AbortSignal.timeout(2_000) })
    .then((r) => r.text())
    .catch(() => null);
  if (text === null) return null;
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(temporal_sticky_cache_[a-z_]+)(?:\{[^}]*\})? (\S+)/.exec(line);
    if (m) out[m[1]] = (out[m[1]] ?? 0) + Number(m[2]);
  }
  return out;
}

function summarizeRss(samples: RssSample[]) {
  const of = (phase: string, key: 'apiMiB' | 'workerMiB' | 'temporalMiB' | 'bareWorkerMiB') => {
    const v = samples
      .filter((x) => x.phase === phase)
      .map((x) => x[key])
      .filter((x): x is number => Number.isFinite(x))
      .sort((a, b) => a - b);
    return v.length === 0 ? null : { median: round(percentile(v, 50), 1), max: round(v[v.length - 1], 1) };
  };
  const phases = ['before', 'parking', 'parked', 'resume', 'after', ...BARE_PHASES];
  const out: Record<string, unknown> = {};
  for (const p of phases) {
    const last = [...samples].reverse().find((x) => x.phase === p);
    out[p] = {
      api: of(p, 'apiMiB'),
      worker: of(p, 'workerMiB'),
      temporal: of(p, 'temporalMiB'),
      bareWorker: of(p, 'bareWorkerMiB'),
      stickyCacheAtEnd: last?.stickyCache ?? null,
    };
  }
  type Stat = { median: number; max: number } | null;
  return out as Record<
    string,
    { api: Stat; worker: Stat; temporal: Stat; bareWorker: Stat; stickyCacheAtEnd: Record<string, number> | null }
  >;
}

const BARE_PHASES = ['bare-before', 'bare-parking', 'bare-parked', 'bare-resume', 'bare-after'];

/** The service worker's RSS against the bare worker's, idle and while parked (medians of each phase). */
function compareWithBare(rss: ReturnType<typeof summarizeRss>) {
  const service = { before: rss.before.worker?.median ?? NaN, parked: rss.parked.worker?.median ?? NaN };
  const bare = { before: rss['bare-before'].bareWorker?.median ?? NaN, parked: rss['bare-parked'].bareWorker?.median ?? NaN };
  return {
    workerMiB: { service, bare },
    growthWhileParkedMiB: { service: round(service.parked - service.before, 1), bare: round(bare.parked - bare.before, 1) },
    ratioServiceToBare: { before: round(service.before / bare.before, 2), parked: round(service.parked / bare.parked, 2) },
  };
}

function printSummary(
  r: {
    park: { runs: number; timeToParkS: number; startsPerSec: number; allStillParkedAfterMeasurements: boolean };
    rssMiB: ReturnType<typeof summarizeRss>;
    bare: (Awaited<ReturnType<typeof bareParking>> & { rss: ReturnType<typeof compareWithBare> | null }) | null;
    latencyMs: { before: Record<string, { p50: number; p99: number }>; parked: Record<string, { p50: number; p99: number }> };
    resume: { total: number; succeeded: number };
    settings: { maxCachedWorkflows: number; runtime: 'tsx' | 'dist' };
  },
  file: string,
): void {
  const f = (x: { median: number; max: number } | null) => (x ? `${x.median} (max ${x.max})` : '–');
  const rssRows = ['before', 'parking', 'parked', 'resume'].map((p) => {
    const x = r.rssMiB[p];
    const sum = x.api && x.worker ? round(x.api.median + x.worker.median, 1) : NaN;
    return [p, f(x.worker), f(x.api), String(sum), f(x.temporal), String(x.stickyCacheAtEnd?.temporal_sticky_cache_size ?? '–')];
  });
  const latRows = Object.keys(r.latencyMs.before).map((e) => [
    e,
    `${r.latencyMs.before[e].p50} / ${r.latencyMs.before[e].p99}`,
    `${r.latencyMs.parked[e].p50} / ${r.latencyMs.parked[e].p99}`,
  ]);
  process.stdout.write(
    [
      '',
      `parked: ${r.park.runs} runs parked in ${r.park.timeToParkS} s (starts ${r.park.startsPerSec}/s); worker maxCachedWorkflows ${r.settings.maxCachedWorkflows}; all still parked after the measurements: ${r.park.allStillParkedAfterMeasurements}`,
      'RSS MiB, median (max) over the phase:',
      ...textTable(
        [
          'phase',
          'worker',
          r.settings.runtime === 'dist' ? 'api (own process)' : 'api (bench process)',
          'worker + api',
          'temporal dev server',
          'sticky cache size',
        ],
        rssRows,
      ),
      'API latency ms, p50 / p99:',
      ...textTable(['endpoint', 'before parking', 'while parked'], latRows),
      `sticky cache: ${JSON.stringify(r.rssMiB.parked.stickyCacheAtEnd)} while parked; ${JSON.stringify(r.rssMiB.resume.stickyCacheAtEnd)} after the resume (misses are evicted runs replayed from history)`,
      `resume: ${r.resume.succeeded}/${r.resume.total} sampled runs succeeded with their own output`,
      ...(r.bare && r.bare.rss
        ? [
            `bare Temporal: ${r.bare.park.runs} runs parked in ${r.bare.park.timeToParkS} s (starts ${r.bare.park.startsPerSec}/s); resume ${r.bare.resume.succeeded}/${r.bare.resume.total} succeeded`,
            'worker RSS MiB (median), service vs bare worker:',
            ...textTable(
              ['', 'service worker', 'bare worker', 'ratio service/bare'],
              [
                [
                  'before parking',
                  String(r.bare.rss.workerMiB.service.before),
                  String(r.bare.rss.workerMiB.bare.before),
                  String(r.bare.rss.ratioServiceToBare.before),
                ],
                [
                  'while parked',
                  String(r.bare.rss.workerMiB.service.parked),
                  String(r.bare.rss.workerMiB.bare.parked),
                  String(r.bare.rss.ratioServiceToBare.parked),
                ],
                ['growth', String(r.bare.rss.growthWhileParkedMiB.service), String(r.bare.rss.growthWhileParkedMiB.bare), ''],
              ],
            ),
          ]
        : []),
      `results: ${file}`,
      '',
    ].join('\n'),
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
