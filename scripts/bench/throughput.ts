/**
 * `npm run bench -- throughput`: how many runs per second the service completes when clients
 * start them through `POST /api/v1/workflows/{id}/execute`, at rising concurrency until it
 * saturates, and what runs out first.
 *
 * The API (this process) and the worker (its own process, as in docker-compose) are measured
 * apart. Each measured run sends load for BENCH_DURATION_S, then waits until every accepted
 * run has ended, so runs do not inherit each other's backlog. Per run: accepted and completed
 * runs per second, Temporal state transitions per run (the server's own
 * `state_transition_count` metric), PostgreSQL commits per second (`pg_stat_database`) and
 * CPU per process.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import pg from 'pg';
import { TERMINAL_RUN_STATUSES } from '../../engine/statuses';
import { deployWorkflow } from './api';
import { cpuBetween, cpuSamplingSupported, pidTree, pidsByComm, sampleCpu, threadsBetween, type CpuSample } from './cpu';
import type { LoadRunResult } from './loadgen';
import { benchEnvironment, envList, envNumber, writeResults, type BenchContext } from './report';
import { backgroundCpu, roundAll, serverVersion, startLoadgen, startTargetServer, type Loadgen } from './shared';
import { startBenchStack, temporalFacts, type BenchStack } from './stack';
import { fmtSpread, round, spread, textTable, type Spread } from './stats';
import { BASELINE_TASK_QUEUE, baselineClient, spawnBaselineWorker } from './baseline/worker';
import { profileWindow } from './profile';

const GROUPS = ['api (bench process)', 'worker process', 'temporal dev server', 'postgres (all processes)', 'loadgen (autocannon)'];
const BARE_GROUPS = ['client (bench process)', 'bare worker process', 'temporal dev server'];

/** CPU time per finished run in ms, from % of one core over `windowS` seconds. */
function cpuMsPerRun(usage: Record<string, number>, windowS: number, finished: number): Record<string, number> | null {
  if (finished === 0) return null;
  return Object.fromEntries(
    Object.entries(usage)
      .filter(([k]) => k !== 'systemCapacity' && k !== 'other')
      .map(([k, pct]) => [k, round(((pct / 100) * windowS * 1000) / finished, 1)]),
  );
}

interface MeasuredRun {
  load: Pick<LoadRunResult, 'acceptedPerSec' | 'accepted202' | 'non2xx' | 'errors' | 'latencyMs' | 'statusCodes'>;
  /** Runs that reached a terminal status during the load window, per second of it. */
  completedPerSecDuringLoad: number;
  /** All runs accepted in this run ÷ time from load start to the last one's end. */
  completedPerSecOverall: number;
  runsAccepted: number;
  runsSucceeded: number;
  runsNotSucceeded: Record<string, number>;
  /** Seconds from load start until the last accepted run ended. */
  spanS: number;
  drainedWithinDeadline: boolean;
  /** created_at → finished_at of the run rows, ms. */
  runLatencyMs: { p50: number; p95: number };
  stateTransitionsPerRun: number | null;
  pgCommitsPerSec: number;
  pgCommitsPerRun: number;
  cpuPercentOfOneCore: Record<string, number> | null;
  /** CPU time per finished run, ms, by process group (what saturation divides the cores by). */
  cpuMsPerRun: Record<string, number> | null;
  /** The worker process's threads by name ("main" = its event loop: activities, core bridge). */
  workerThreadsPercentOfOneCore: Record<string, number> | null;
  apiEventLoopUtilization: number;
}

interface StepSummary {
  concurrency: number;
  runs: MeasuredRun[];
  acceptedPerSec: Spread;
  completedPerSecDuringLoad: Spread;
  completedPerSecOverall: Spread;
  stateTransitionsPerRun: Spread;
  pgCommitsPerSec: Spread;
  pgCommitsPerRun: Spread;
  runLatencyP50Ms: Spread;
  /** Latency of `POST /execute` itself (admission waits included). */
  executeP50Ms: Spread;
  executeP99Ms: Spread;
  cpuPercentOfOneCore: Record<string, Spread>;
  cpuMsPerRun: Record<string, Spread>;
  apiEventLoopUtilization: Spread;
  failedRuns: number;
}

export async function throughputScenario(ctx: BenchContext): Promise<void> {
  const settings = {
    warmupS: envNumber('BENCH_WARMUP_S', 5),
    warmupConcurrency: 5,
    durationS: envNumber('BENCH_DURATION_S', 5),
    runsPerStep: envNumber('BENCH_RUNS', 5),
    concurrency: envList('BENCH_CONCURRENCY', [5, 10, 20, 40, 80]),
    drainDeadlineS: envNumber('BENCH_DRAIN_S', 120),
    cpuSampling: process.env.BENCH_CPU !== '0' && cpuSamplingSupported(),
  };
  const { log } = ctx;
  const started = new Date();
  const env = await benchEnvironment();
  log(
    `throughput: warm-up ${settings.warmupS} s @${settings.warmupConcurrency}, steps ${settings.concurrency.join('/')} × ${settings.runsPerStep} runs × ${settings.durationS} s, each drained (≤ ${settings.drainDeadlineS} s)`,
  );
  const background = settings.cpuSampling ? await backgroundCpu(3_000) : null;

  const target = await startTargetServer();
  let stack: BenchStack | null = null;
  let loadgen: Loadgen | null = null;
  let db: pg.Client | null = null;
  try {
    stack = await startBenchStack(log, { workerProcess: true });
    db = new pg.Client({ connectionString: stack.databaseUrl });
    db.on('error', () => undefined);
    await db.connect();
    loadgen = startLoadgen();
    const workflow = {
      name: 'Benchmark throughput',
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'shape', type: 'transform', config: { expression: '{ "n": i }' } },
        { id: 'call', type: 'http', config: { method: 'POST', url: `${target.url}/record`, body: { n: '=n' } } },
        { id: 'say', type: 'log', config: { level: 'info', message: '="done " & $string(body.ok)' } },
      ],
      edges: [
        { source: 'start', target: 'shape' },
        { source: 'shape', target: 'call' },
        { source: 'call', target: 'say' },
      ],
    };
    const { workflowId } = await deployWorkflow(stack, workflow);
    const executeUrl = `${stack.apiUrl}/api/v1/workflows/${workflowId}/execute`;
    const headers = { authorization: `Bearer ${stack.workspace.apiKey}` };
    const s = stack;
    const d = db;
    const lg = loadgen;
    log(`deployed ${workflowId}; worker pid ${stack.workerPid}; Temporal metrics ${stack.temporal.metricsUrl}`);

    const groups = {
      [GROUPS[0]]: () => [process.pid],
      [GROUPS[1]]: () => (s.workerPid ? [s.workerPid] : []),
      [GROUPS[2]]: () => pidTree(s.temporal.pid),
      [GROUPS[3]]: () => pidsByComm('postgres'),
      [GROUPS[4]]: () => [lg.pid],
    };
    type Mark = { at: number; cpu: CpuSample | null; elu: EventLoopUtilization; commits: number; transitions: number | null };
    const mark = async (): Promise<Mark> => ({
      at: Date.now(),
      cpu: settings.cpuSampling ? sampleCpu(groups, s.workerPid ? [s.workerPid] : []) : null,
      elu: performance.eventLoopUtilization(),
      commits: await pgCommits(d),
      transitions: await stateTransitions(s.temporal.metricsUrl),
    });

    const measure = async (connections: number, durationS: number): Promise<MeasuredRun> => {
      const before = await mark();
      const runsBefore = await runCount(d, workflowId);
      const load = await lg.run({ url: executeUrl, connections, durationS, headers, wrapInInput: true });
      const loadEnd = Date.now();
      // Wait until every run of this batch has ended.
      const deadline = loadEnd + settings.drainDeadlineS * 1000;
      let counts = await statusCounts(d, workflowId);
      while (!allTerminal(counts) && Date.now() < deadline) {
        ctx.throwIfInterrupted();
        await new Promise((r) => setTimeout(r, 200));
        counts = await statusCounts(d, workflowId);
      }
      const after = await mark();
      const batch = await batchFigures(d, workflowId, new Date(before.at), new Date(loadEnd));
      const runsAccepted = total(counts) - runsBefore;
      const spanS = batch.lastFinish ? (batch.lastFinish.getTime() - before.at) / 1000 : (after.at - before.at) / 1000;
      const windowS = (after.at - before.at) / 1000;
      const commits = after.commits - before.commits;
      return {
        load: {
          acceptedPerSec: round(load.acceptedPerSec, 1),
          accepted202: load.accepted202,
          non2xx: load.non2xx,
          errors: load.errors,
          latencyMs: load.latencyMs,
          statusCodes: load.statusCodes,
        },
        completedPerSecDuringLoad: round(batch.finishedDuringLoad / ((loadEnd - before.at) / 1000), 1),
        completedPerSecOverall: round(batch.finished / spanS, 1),
        runsAccepted,
        runsSucceeded: batch.succeeded,
        runsNotSucceeded: batch.notSucceeded,
        spanS: round(spanS, 2),
        drainedWithinDeadline: allTerminal(counts),
        runLatencyMs: { p50: round(batch.latencyP50, 0), p95: round(batch.latencyP95, 0) },
        stateTransitionsPerRun:
          before.transitions !== null && after.transitions !== null && batch.finished > 0
            ? round((after.transitions - before.transitions) / batch.finished, 1)
            : null,
        pgCommitsPerSec: round(commits / windowS, 0),
        pgCommitsPerRun: batch.finished > 0 ? round(commits / batch.finished, 1) : NaN,
        cpuPercentOfOneCore: before.cpu && after.cpu ? roundAll(cpuBetween(before.cpu, after.cpu, GROUPS)) : null,
        cpuMsPerRun: before.cpu && after.cpu ? cpuMsPerRun(cpuBetween(before.cpu, after.cpu, GROUPS), windowS, batch.finished) : null,
        workerThreadsPercentOfOneCore: before.cpu && after.cpu ? roundAll(threadsBetween(before.cpu, after.cpu)) : null,
        apiEventLoopUtilization: round(performance.eventLoopUtilization(after.elu, before.elu).utilization, 3),
      };
    };

    log(`warm-up: ${settings.warmupS} s at concurrency ${settings.warmupConcurrency}`);
    const warmup = await measure(settings.warmupConcurrency, settings.warmupS);
    if (warmup.runsSucceeded === 0) throw new Error(`warm-up completed no run: ${JSON.stringify(warmup)}`);

    const steps: StepSummary[] = [];
    for (const concurrency of settings.concurrency) {
      const runs: MeasuredRun[] = [];
      const endWindow = profileWindow(`service c=${concurrency}`);
      for (let r = 0; r < settings.runsPerStep; r++) {
        ctx.throwIfInterrupted();
        const m = await measure(concurrency, settings.durationS);
        runs.push(m);
        const c = m.cpuPercentOfOneCore;
        log(
          `  c=${concurrency} run ${r + 1}/${settings.runsPerStep}: accepted ${m.load.acceptedPerSec}/s, completed ${m.completedPerSecDuringLoad}/s during load (${m.completedPerSecOverall}/s overall), ` +
            `${m.stateTransitionsPerRun ?? '?'} transitions/run, ${m.pgCommitsPerSec} PG commits/s, run p50 ${m.runLatencyMs.p50} ms` +
            (c
              ? `; CPU % api/worker/temporal/pg/loadgen ${GROUPS.map((g) => round(c[g] ?? NaN, 0)).join('/')} of ${round(c.system ?? NaN, 0)}`
              : '') +
            (m.workerThreadsPercentOfOneCore ? `; worker threads ${JSON.stringify(m.workerThreadsPercentOfOneCore)}` : ''),
        );
      }
      endWindow();
      steps.push(summarize(concurrency, runs));
    }

    // The same shape as a plain Temporal workflow, started by a client at the same concurrency,
    // on the same server, its worker in its own process (scripts/bench/baseline).
    const bare = await measureBaseline(ctx, s, target.url, settings);
    const result = {
      scenario: 'throughput',
      date: started.toISOString(),
      ...env,
      temporal: temporalFacts(stack),
      postgres: { database: stack.databaseName, serverVersion: await serverVersion(db) },
      service: {
        api: 'this process (API + outbox dispatcher)',
        worker: 'one worker process (main/worker.ts)',
        logLevel: stack.config.logLevel,
        runAdmission: stack.config.runAdmission,
      },
      workflow,
      settings,
      backgroundCpuBeforeStart: background,
      warmup,
      steps,
      bareTemporal: bare,
    };
    const file = await writeResults('throughput', started, result);
    printSummary(steps, settings, file);
    printBaseline(steps, bare);
  } finally {
    loadgen?.stop();
    await db?.end().catch(() => undefined);
    if (stack) {
      log('shutting down the stack');
      await stack.stop();
    }
    await target.close();
  }
}

function summarize(concurrency: number, runs: MeasuredRun[]): StepSummary {
  const cpu: Record<string, Spread> = {};
  for (const key of [...GROUPS, 'system', 'other']) cpu[key] = spread(runs.map((r) => r.cpuPercentOfOneCore?.[key] ?? NaN));
  const perRun: Record<string, Spread> = {};
  for (const key of [...GROUPS, 'system']) perRun[key] = spread(runs.map((r) => r.cpuMsPerRun?.[key] ?? NaN));
  return {
    concurrency,
    runs,
    acceptedPerSec: spread(runs.map((r) => r.load.acceptedPerSec)),
    completedPerSecDuringLoad: spread(runs.map((r) => r.completedPerSecDuringLoad)),
    completedPerSecOverall: spread(runs.map((r) => r.completedPerSecOverall)),
    stateTransitionsPerRun: spread(runs.map((r) => r.stateTransitionsPerRun ?? NaN)),
    pgCommitsPerSec: spread(runs.map((r) => r.pgCommitsPerSec)),
    pgCommitsPerRun: spread(runs.map((r) => r.pgCommitsPerRun)),
    runLatencyP50Ms: spread(runs.map((r) => r.runLatencyMs.p50)),
    executeP50Ms: spread(runs.map((r) => r.load.latencyMs.p50)),
    executeP99Ms: spread(runs.map((r) => r.load.latencyMs.p99)),
    cpuPercentOfOneCore: cpu,
    cpuMsPerRun: perRun,
    apiEventLoopUtilization: spread(runs.map((r) => r.apiEventLoopUtilization)),
    failedRuns: runs.reduce((n, r) => n + Object.values(r.runsNotSucceeded).reduce((a, b) => a + b, 0), 0),
  };
}

interface BaselineStep {
  concurrency: number;
  stateTransitionsPerRun: Spread;
  cpuMsPerRun: Record<string, Spread>;
  startedPerSec: Spread;
  completedPerSecDuringLoad: Spread;
  completedPerSecOverall: Spread;
  runLatencyP50Ms: Spread;
  failed: number;
}

/**
 * `baselineThroughput` (transform → durable POST → log) started with `client.workflow.start`
 * by `concurrency` loops for `durationS`, then drained: the bare-Temporal figure each service
 * figure is divided by.
 */
async function measureBaseline(
  ctx: BenchContext,
  stack: BenchStack,
  url: string,
  settings: {
    durationS: number;
    runsPerStep: number;
    concurrency: number[];
    warmupS: number;
    warmupConcurrency: number;
    cpuSampling: boolean;
  },
): Promise<{ describe: string; steps: BaselineStep[] }> {
  const worker = await spawnBaselineWorker(stack.temporal.address, stack.config.temporal.namespace);
  const client = baselineClient(stack.api.deps.temporal.connection, stack.config.temporal.namespace);
  const groups = {
    [BARE_GROUPS[0]]: () => [process.pid],
    [BARE_GROUPS[1]]: () => [worker.pid],
    [BARE_GROUPS[2]]: () => pidTree(stack.temporal.pid),
  };
  let counter = 0;
  const measure = async (concurrency: number, durationS: number) => {
    const cpuBefore = settings.cpuSampling ? sampleCpu(groups, []) : null;
    const transitionsBefore = await stateTransitions(stack.temporal.metricsUrl);
    const t0 = Date.now();
    const loadEnd = t0 + durationS * 1000;
    const finished: Array<{ at: number; latency: number; ok: boolean }> = [];
    const pending: Array<Promise<void>> = [];
    let started = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < loadEnd) {
          const i = ++counter;
          const begin = Date.now();
          const handle = await client.workflow.start('baselineThroughput', {
            taskQueue: BASELINE_TASK_QUEUE,
            workflowId: `bench-baseline-run-${i}-${begin}`,
            args: [url, i],
          });
          started++;
          pending.push(
            handle.result().then(
              () => void finished.push({ at: Date.now(), latency: Date.now() - begin, ok: true }),
              () => void finished.push({ at: Date.now(), latency: Date.now() - begin, ok: false }),
            ),
          );
        }
      }),
    );
    const loadEndActual = Date.now();
    await Promise.all(pending);
    const cpuAfter = settings.cpuSampling ? sampleCpu(groups, []) : null;
    const transitionsAfter = await stateTransitions(stack.temporal.metricsUrl);
    const last = Math.max(...finished.map((f) => f.at));
    const latencies = finished.map((f) => f.latency).sort((a, b) => a - b);
    return {
      startedPerSec: round(started / ((loadEndActual - t0) / 1000), 1),
      completedPerSecDuringLoad: round(finished.filter((f) => f.at <= loadEndActual).length / ((loadEndActual - t0) / 1000), 1),
      completedPerSecOverall: round(finished.length / ((last - t0) / 1000), 1),
      runLatencyP50Ms: latencies[Math.floor(latencies.length / 2)] ?? NaN,
      failed: finished.filter((f) => !f.ok).length,
      stateTransitionsPerRun:
        transitionsBefore !== null && transitionsAfter !== null && finished.length > 0
          ? round((transitionsAfter - transitionsBefore) / finished.length, 1)
          : NaN,
      cpuMsPerRun:
        cpuBefore && cpuAfter
          ? cpuMsPerRun(cpuBetween(cpuBefore, cpuAfter, BARE_GROUPS), (cpuAfter.at - cpuBefore.at) / 1000, finished.length)
          : null,
    };
  };
  try {
    await measure(settings.warmupConcurrency, settings.warmupS);
    const steps: BaselineStep[] = [];
    for (const concurrency of settings.concurrency) {
      const runs: Array<Awaited<ReturnType<typeof measure>>> = [];
      const endWindow = profileWindow(`bare c=${concurrency}`);
      for (let r = 0; r < settings.runsPerStep; r++) {
        ctx.throwIfInterrupted();
        const m = await measure(concurrency, settings.durationS);
        ctx.log(
          `  bare Temporal c=${concurrency} run ${r + 1}/${settings.runsPerStep}: started ${m.startedPerSec}/s, completed ${m.completedPerSecDuringLoad}/s during load (${m.completedPerSecOverall}/s overall), run p50 ${m.runLatencyP50Ms} ms`,
        );
        runs.push(m);
      }
      endWindow();
      steps.push({
        concurrency,
        startedPerSec: spread(runs.map((m) => m.startedPerSec)),
        completedPerSecDuringLoad: spread(runs.map((m) => m.completedPerSecDuringLoad)),
        completedPerSecOverall: spread(runs.map((m) => m.completedPerSecOverall)),
        runLatencyP50Ms: spread(runs.map((m) => m.runLatencyP50Ms)),
        failed: runs.reduce((n, m) => n + m.failed, 0),
        stateTransitionsPerRun: spread(runs.map((m) => m.stateTransitionsPerRun)),
        cpuMsPerRun: Object.fromEntries([...BARE_GROUPS, 'system'].map((g) => [g, spread(runs.map((m) => m.cpuMsPerRun?.[g] ?? NaN))])),
      });
    }
    return {
      describe:
        'the same shape as a plain Temporal workflow (scripts/bench/baseline), started by client.workflow.start, worker in its own process, same server, same run',
      steps,
    };
  } finally {
    await worker.stop();
  }
}

function printBaseline(steps: StepSummary[], bare: { steps: BaselineStep[] }): void {
  const header = [
    'concurrency',
    'service completed/s overall',
    'bare completed/s overall',
    'ratio',
    'service during load',
    'bare during load',
    'service run p50 ms',
    'bare run p50 ms',
    'CPU ms/run service (api/worker/temporal/pg; all)',
    'CPU ms/run bare (client/worker/temporal; all)',
    'transitions/run service / bare',
  ];
  const rows = bare.steps.map((b) => {
    const s = steps.find((x) => x.concurrency === b.concurrency);
    return [
      String(b.concurrency),
      s ? fmtSpread(s.completedPerSecOverall) : '-',
      fmtSpread(b.completedPerSecOverall),
      s ? String(round(s.completedPerSecOverall.median / b.completedPerSecOverall.median, 2)) : '-',
      s ? fmtSpread(s.completedPerSecDuringLoad) : '-',
      fmtSpread(b.completedPerSecDuringLoad),
      s ? String(round(s.runLatencyP50Ms.median, 0)) : '-',
      String(round(b.runLatencyP50Ms.median, 0)),
      s
        ? `${GROUPS.slice(0, 4)
            .map((g) => round(s.cpuMsPerRun[g].median, 1))
            .join('/')}; ${round(s.cpuMsPerRun.system.median, 1)}`
        : '-',
      `${BARE_GROUPS.map((g) => round(b.cpuMsPerRun[g].median, 1)).join('/')}; ${round(b.cpuMsPerRun.system.median, 1)}`,
      `${s ? round(s.stateTransitionsPerRun.median, 1) : '-'} / ${round(b.stateTransitionsPerRun.median, 1)}`,
    ];
  });
  process.stdout.write(['bare Temporal, same server and run:', ...textTable(header, rows), ''].join('\n'));
}

async function pgCommits(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ n: string }>('select xact_commit::text as n from pg_stat_database where datname = current_database()');
  return Number(rows[0]?.n ?? 0);
}

/**
 * The Temporal server's `state_transition_count` histogram (one observation per mutable-state
 * write, valued by the transitions it made), summed over its label sets; null when the server
 * exposes no such metric.
 */
async function stateTransitions(metricsUrl: string | null): Promise<number | null> {
  if (!metricsUrl) return null;
  const text = await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) })
    .then((r) => r.text())
    .catch(() => '');
  let sum: number | null = null;
  for (const line of text.split('\n')) {
    const m = /^state_transition_count_sum(?:\{[^}]*\})? (\S+)/.exec(line);
    if (m) sum = (sum ?? 0) + Number(m[1]);
  }
  return sum;
}

async function runCount(db: pg.Client, workflowId: string): Promise<number> {
  return total(await statusCounts(db, workflowId));
}

async function statusCounts(db: pg.Client, workflowId: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: number }>(
    'select status, count(*)::int as n from runs where workflow_id = $1 group by status',
    [workflowId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

const total = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
const allTerminal = (counts: Record<string, number>) =>
  Object.entries(counts).every(([status, n]) => n === 0 || (TERMINAL_RUN_STATUSES as readonly string[]).includes(status));

/** The batch of runs created since `since`: how many ended, when, and how long they took. */
async function batchFigures(db: pg.Client, workflowId: string, since: Date, loadEnd: Date) {
  const { rows } = await db.query<{
    finished: number;
    during: number;
    succeeded: number;
    last_finish: Date | null;
    p50: number | null;
    p95: number | null;
  }>(
    `select count(*) filter (where finished_at is not null)::int as finished,
            count(*) filter (where finished_at <= $3)::int as during,
            count(*) filter (where status = 'succeeded')::int as succeeded,
            max(finished_at) as last_finish,
            percentile_cont(0.5) within group (order by extract(epoch from finished_at - created_at) * 1000) as p50,
            percentile_cont(0.95) within group (order by extract(epoch from finished_at - created_at) * 1000) as p95
       from runs where workflow_id = $1 and created_at >= $2`,
    [workflowId, since, loadEnd],
  );
  const other = await db.query<{ status: string; n: number }>(
    `select status, count(*)::int as n from runs where workflow_id = $1 and created_at >= $2 and status <> 'succeeded' group by status`,
    [workflowId, since],
  );
  const r = rows[0];
  return {
    finished: r.finished,
    finishedDuringLoad: r.during,
    succeeded: r.succeeded,
    notSucceeded: Object.fromEntries(other.rows.map((x) => [x.status, x.n])),
    lastFinish: r.last_finish,
    latencyP50: r.p50 ?? NaN,
    latencyP95: r.p95 ?? NaN,
  };
}

function printSummary(steps: StepSummary[], settings: { durationS: number; runsPerStep: number }, file: string): void {
  const header = [
    'concurrency',
    'accepted/s',
    'completed/s during load',
    'completed/s overall',
    'transitions/run',
    'PG commits/s',
    'PG commits/run',
    'run p50 ms',
    'execute p50/p99 ms',
    'CPU % api/worker/temporal/pg/loadgen of system',
    'API loop busy',
  ];
  const rows = steps.map((s) => [
    String(s.concurrency),
    fmtSpread(s.acceptedPerSec),
    fmtSpread(s.completedPerSecDuringLoad),
    fmtSpread(s.completedPerSecOverall),
    String(round(s.stateTransitionsPerRun.median, 1)),
    fmtSpread(s.pgCommitsPerSec, 0),
    String(round(s.pgCommitsPerRun.median, 1)),
    String(round(s.runLatencyP50Ms.median, 0)),
    `${round(s.executeP50Ms.median, 0)}/${round(s.executeP99Ms.median, 0)}`,
    `${GROUPS.map((g) => round(s.cpuPercentOfOneCore[g].median, 0)).join('/')} of ${round(s.cpuPercentOfOneCore.system.median, 0)}`,
    `${round(s.apiEventLoopUtilization.median * 100, 0)} %`,
  ]);
  process.stdout.write(
    [
      '',
      `throughput: ${settings.runsPerStep} runs × ${settings.durationS} s of load per step, each drained (medians [min–max])`,
      ...textTable(header, rows),
      ...(steps.some((s) => s.failedRuns > 0)
        ? [`warning: ${steps.reduce((n, s) => n + s.failedRuns, 0)} runs did not succeed (see runsNotSucceeded)`]
        : []),
      `results: ${file}`,
      '',
    ].join('\n'),
  );
}
