/**
 * `npm run bench -- webhooks`: how many webhook requests per second the service accepts, at
 * what latency, and how fast the accepted requests become succeeded runs.
 *
 * One stack (scripts/bench/stack.ts), one deployed workflow webhook → transform → log, a
 * warm-up, then autocannon (in a child process) at rising concurrency, several runs per step.
 * After the load it waits for the backlog to drain (outbox → Temporal → succeeded runs) up to
 * a deadline. Results go to bench-results/webhooks-<timestamp>.json and a summary to stdout.
 */
import pg from 'pg';
import { TERMINAL_RUN_STATUSES } from '../../db/entities';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { cpuBetween, cpuSamplingSupported, pidTree, pidsByComm, sampleCpu, threadsBetween, type CpuGroups, type CpuSample, type CpuUsage } from './cpu';
import type { LoadRunResult } from './loadgen';
import { backgroundCpu, roundAll, serverVersion, startLoadgen, type Loadgen } from './shared';
import { deployWorkflow } from './api';
import { benchEnvironment, envList, envNumber, writeResults, type BenchContext } from './report';
import { startBenchStack, temporalFacts, type BenchStack } from './stack';
import { fmtSpread, round, spread, textTable, type Spread } from './stats';

/** CPU of other processes (% of one core) above which a run is flagged as disturbed. */
const FOREIGN_CPU_WARN = 20;

type MeasuredRun = LoadRunResult & { foreignCpuPercent: number | null };

interface StepSummary {
  concurrency: number;
  runs: MeasuredRun[];
  /** Runs during which processes outside the benchmark used more than FOREIGN_CPU_WARN % of a core. */
  disturbedRuns: number;
  acceptedPerSec: Spread;
  latencyMs: { p50: Spread; p95: Spread; p99: Spread };
  non2xx: number;
  errors: number;
  timeouts: number;
  resources: PhaseResources;
}

/** Where time went during a phase. */
interface PhaseResources {
  /** Share of wall time the bench process's event loop (API + dispatcher + worker activities) was busy, 0–1. */
  eventLoopUtilization: number;
  /** CPU by process group, % of one core (`system`: whole machine, `other`: nobody listed). */
  cpuPercentOfOneCore: CpuUsage | null;
  /** CPU of the bench process's threads by name, % of one core ("main" = the event loop). */
  nodeThreadsPercentOfOneCore: Record<string, number> | null;
}

interface CountsPoint {
  /** Seconds since the end of the load. */
  t: number;
  outbox: Record<string, number>;
  runs: Record<string, number>;
}

const WORKFLOW = {
  name: 'Benchmark webhook',
  nodes: [
    { id: 'hook', type: 'webhook', config: {} },
    { id: 'shape', type: 'transform', config: { expression: '{ "n": i }' } },
    { id: 'say', type: 'log', config: { level: 'info', message: '="got " & $string(n)' } },
  ],
  edges: [
    { source: 'hook', target: 'shape' },
    { source: 'shape', target: 'say' },
  ],
};

export async function webhooksScenario(ctx: BenchContext): Promise<void> {
  const settings = {
    warmupS: envNumber('BENCH_WARMUP_S', 5),
    warmupConcurrency: 10,
    durationS: envNumber('BENCH_DURATION_S', 5),
    runsPerStep: envNumber('BENCH_RUNS', 5),
    concurrency: envList('BENCH_CONCURRENCY', [10, 50, 100, 200]),
    drainDeadlineS: envNumber('BENCH_DRAIN_S', 120),
    cpuSampling: process.env.BENCH_CPU !== '0' && cpuSamplingSupported(),
  };
  const { log } = ctx;
  const started = new Date();
  const env = await benchEnvironment();
  log(`webhooks: warm-up ${settings.warmupS} s @${settings.warmupConcurrency}, steps ${settings.concurrency.join('/')} × ${settings.runsPerStep} runs × ${settings.durationS} s, drain ≤ ${settings.drainDeadlineS} s`);

  // The load generator shares the machine with the service; so does anything else running.
  const background = settings.cpuSampling ? await backgroundCpu(3_000) : null;
  if (background && background.busyPercent > 25) {
    log(`warning: the machine is already ${round(background.busyPercent, 0)} % busy (of ${round(background.capacityPercent, 0)} %) before the benchmark; results will be low`);
  }

  let stack: BenchStack | null = null;
  let loadgen: Loadgen | null = null;
  let db: pg.Client | null = null;
  try {
    stack = await startBenchStack(log);
    ctx.throwIfInterrupted();
    db = new pg.Client({ connectionString: stack.databaseUrl });
    db.on('error', () => undefined);
    await db.connect();
    loadgen = startLoadgen();

    const deployed = await deployWorkflow(stack, WORKFLOW);
    const workflowId = deployed.workflowId;
    const invokeUrl = deployed.invokeUrl;
    if (!invokeUrl) throw new Error('deploy returned no webhookUrl');
    log(`deployed ${workflowId}; webhook ${invokeUrl.replace(/whk_.*/, 'whk_…')}`);

    const cpuGroups = cpuGroupsFor(stack, loadgen.pid, db);
    type Mark = { cpu: CpuSample | null; elu: EventLoopUtilization };
    const mark = async (): Promise<Mark> => ({ cpu: settings.cpuSampling ? sampleCpu(await cpuGroups(), [process.pid]) : null, elu: performance.eventLoopUtilization() });
    const resourcesSince = async (start: Mark): Promise<PhaseResources> => {
      const end = await mark();
      return {
        eventLoopUtilization: round(performance.eventLoopUtilization(end.elu, start.elu).utilization, 3),
        cpuPercentOfOneCore: start.cpu && end.cpu ? roundAll(cpuBetween(start.cpu, end.cpu, DISJOINT_GROUPS)) : null,
        nodeThreadsPercentOfOneCore: start.cpu && end.cpu ? roundAll(threadsBetween(start.cpu, end.cpu)) : null,
      };
    };

    log(`warm-up: ${settings.warmupS} s at concurrency ${settings.warmupConcurrency}`);
    const warmup = await loadgen.run({ url: invokeUrl, connections: settings.warmupConcurrency, durationS: settings.warmupS });
    if (warmup.ok2xx === 0) throw new Error(`warm-up got no 2xx answer: status codes ${JSON.stringify(warmup.statusCodes)}, errors ${warmup.errors}`);
    ctx.throwIfInterrupted();

    const loadStart = Date.now();
    const steps: StepSummary[] = [];
    for (const concurrency of settings.concurrency) {
      const runs: MeasuredRun[] = [];
      const before = await mark();
      for (let r = 0; r < settings.runsPerStep; r++) {
        ctx.throwIfInterrupted();
        const runStart = await mark();
        const result = await loadgen.run({ url: invokeUrl, connections: concurrency, durationS: settings.durationS });
        // CPU used by processes outside the benchmark during this run (other users of the machine).
        const other = (await resourcesSince(runStart)).cpuPercentOfOneCore?.other;
        const foreignCpuPercent = other === undefined ? null : round(other, 1);
        runs.push({ ...result, foreignCpuPercent });
        log(
          `  c=${concurrency} run ${r + 1}/${settings.runsPerStep}: ${round(result.acceptedPerSec)} req/s, p50 ${round(result.latencyMs.p50)} ms, p99 ${round(result.latencyMs.p99)} ms, non-2xx ${result.non2xx}, errors ${result.errors}` +
            (foreignCpuPercent !== null && foreignCpuPercent > FOREIGN_CPU_WARN ? ` (machine busy with other processes: ${foreignCpuPercent} % of a core)` : ''),
        );
      }
      const step = summarizeStep(concurrency, runs, await resourcesSince(before));
      steps.push(step);
      const threads = Object.entries(step.resources.nodeThreadsPercentOfOneCore ?? {}).slice(0, 4);
      log(`  c=${concurrency}: event loop ${round(step.resources.eventLoopUtilization * 100, 0)} % busy${threads.length ? `; node threads (% core): ${threads.map(([n, v]) => `${n} ${round(v, 0)}`).join(', ')}` : ''}`);
    }
    const loadEnd = Date.now();

    // Drain: every accepted request should become a succeeded run.
    const accepted202 = [warmup, ...steps.flatMap((s) => s.runs)].reduce((sum, r) => sum + r.accepted202, 0);
    log(`load done: ${accepted202} requests answered 202; draining (deadline ${settings.drainDeadlineS} s)`);
    const series: CountsPoint[] = [];
    const drainStart = await mark();
    let point = await counts(db, workflowId, 0);
    series.push(point);
    const atLoadEnd = point;
    const deadline = loadEnd + settings.drainDeadlineS * 1000;
    let lastLog = Date.now();
    while (!drained(point, accepted202) && Date.now() < deadline) {
      ctx.throwIfInterrupted();
      await new Promise((r) => setTimeout(r, 1000));
      point = await counts(db, workflowId, (Date.now() - loadEnd) / 1000);
      series.push(point);
      if (Date.now() - lastLog >= 10_000) {
        lastLog = Date.now();
        log(`  +${round(point.t, 0)} s: ${point.runs.succeeded ?? 0} succeeded, outbox pending ${point.outbox.pending ?? 0}`);
      }
    }
    const drainEnd = Date.now();
    const drainResources = await resourcesSince(drainStart);
    const completion = await completionFigures(db, workflowId, loadStart, loadEnd);

    const outboxTotal = sum(point.outbox);
    const succeeded = point.runs.succeeded ?? 0;
    const drain = {
      deadlineS: settings.drainDeadlineS,
      drainedWithinDeadline: drained(point, accepted202),
      waitedS: round((drainEnd - loadEnd) / 1000, 1),
      accepted202,
      outboxRows: outboxTotal,
      outboxByStatus: point.outbox,
      runsByStatus: point.runs,
      atLoadEnd: { outboxByStatus: atLoadEnd.outbox, runsByStatus: atLoadEnd.runs },
      succeeded,
      /**
       * Succeeded runs / outbox rows. The outbox can hold a few more rows than 202 answers were
       * counted: requests still in flight when autocannon stops a run are accepted, unseen.
       */
      completedFraction: outboxTotal > 0 ? succeeded / outboxTotal : NaN,
      succeededVs202: accepted202 > 0 ? succeeded / accepted202 : NaN,
      ...completion,
      resources: drainResources,
      series,
    };

    const result = {
      scenario: 'webhooks',
      date: started.toISOString(),
      ...env,
      temporal: temporalFacts(stack),
      postgres: { database: stack.databaseName, serverVersion: await serverVersion(db) },
      service: { apiAndWorker: 'one Node process (API + outbox dispatcher + 1 worker)', logLevel: stack.config.logLevel, outboxPollMs: stack.config.outboxPollMs },
      workflow: WORKFLOW,
      settings,
      backgroundCpuBeforeStart: background,
      warmup,
      steps,
      drain,
    };
    const file = await writeResults('webhooks', started, result);
    printSummary(result.steps, drain, settings, file);
  } finally {
    loadgen?.stop();
    await db?.end().catch(() => undefined);
    if (stack) {
      log('shutting down the stack');
      await stack.stop();
    }
  }
}

/** Groups whose CPU adds up without overlap; `other` is the machine's busy time minus these. */
const DISJOINT_GROUPS = ['node (API + worker)', 'loadgen (autocannon)', 'temporal dev server', 'postgres (all processes)'];

function cpuGroupsFor(stack: BenchStack, loadgenPid: number, db: pg.Client): () => Promise<CpuGroups> {
  return async () => {
    // Backends serving the benchmark database (the API's and the worker's pools, and ours).
    const rows = (await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database()').catch(() => ({ rows: [] }))).rows;
    const backends = rows.map((r) => r.pid);
    return {
      'node (API + worker)': () => [process.pid],
      'loadgen (autocannon)': () => [loadgenPid],
      'temporal dev server': () => pidTree(stack.temporal.pid),
      'postgres (all processes)': () => pidsByComm('postgres'),
      'postgres (bench db backends)': () => backends,
    };
  };
}

function summarizeStep(concurrency: number, runs: MeasuredRun[], resources: PhaseResources): StepSummary {
  return {
    concurrency,
    runs,
    disturbedRuns: runs.filter((r) => (r.foreignCpuPercent ?? 0) > FOREIGN_CPU_WARN).length,
    acceptedPerSec: spread(runs.map((r) => r.acceptedPerSec)),
    latencyMs: {
      p50: spread(runs.map((r) => r.latencyMs.p50)),
      p95: spread(runs.map((r) => r.latencyMs.p95)),
      p99: spread(runs.map((r) => r.latencyMs.p99)),
    },
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    timeouts: runs.reduce((s, r) => s + r.timeouts, 0),
    resources,
  };
}

async function counts(db: pg.Client, workflowId: string, t: number): Promise<CountsPoint> {
  const byStatus = async (table: 'runs' | 'webhook_outbox') => {
    const { rows } = await db.query<{ status: string; n: number }>(`select status, count(*)::int as n from ${table} where workflow_id = $1 group by status`, [workflowId]);
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  };
  return { t: round(t, 1), outbox: await byStatus('webhook_outbox'), runs: await byStatus('runs') };
}

/** Everything accepted is dispatched and every run has ended. */
function drained(p: CountsPoint, accepted202: number): boolean {
  const outboxRows = sum(p.outbox);
  const terminal = TERMINAL_RUN_STATUSES.reduce((s, st) => s + (p.runs[st] ?? 0), 0);
  return (p.outbox.pending ?? 0) === 0 && terminal >= Math.max(outboxRows, accepted202);
}

/** Run completion rates and accept→finish latency, from the rows' own timestamps. */
async function completionFigures(db: pg.Client, workflowId: string, loadStart: number, loadEnd: number) {
  const { rows } = await db.query<{
    during_load: number;
    after_load: number;
    last_finish: Date | null;
    e2e_p50: number | null;
    e2e_p95: number | null;
    e2e_p99: number | null;
    dispatch_p50: number | null;
  }>(
    `select
       count(*) filter (where r.finished_at >= $2 and r.finished_at < $3)::int as during_load,
       count(*) filter (where r.finished_at >= $3)::int as after_load,
       max(r.finished_at) as last_finish,
       percentile_cont(0.5) within group (order by extract(epoch from r.finished_at - o.created_at) * 1000) as e2e_p50,
       percentile_cont(0.95) within group (order by extract(epoch from r.finished_at - o.created_at) * 1000) as e2e_p95,
       percentile_cont(0.99) within group (order by extract(epoch from r.finished_at - o.created_at) * 1000) as e2e_p99,
       percentile_cont(0.5) within group (order by extract(epoch from o.dispatched_at - o.created_at) * 1000) as dispatch_p50
     from runs r join webhook_outbox o on o.run_id = r.id
     where r.workflow_id = $1 and r.status = 'succeeded'`,
    [workflowId, new Date(loadStart), new Date(loadEnd)],
  );
  const row = rows[0];
  const lastFinish = row.last_finish ? row.last_finish.getTime() : null;
  const drainSpanS = lastFinish && lastFinish > loadEnd ? (lastFinish - loadEnd) / 1000 : null;
  return {
    completedPerSecDuringLoad: round(row.during_load / ((loadEnd - loadStart) / 1000), 1),
    completedAfterLoad: row.after_load,
    /** Runs finished after the load ended, per second, up to the last finish. */
    completedPerSecDuringDrain: drainSpanS ? round(row.after_load / drainSpanS, 1) : null,
    lastFinishAfterLoadS: drainSpanS === null ? null : round(drainSpanS, 1),
    acceptToFinishMs: { p50: round(row.e2e_p50 ?? NaN, 0), p95: round(row.e2e_p95 ?? NaN, 0), p99: round(row.e2e_p99 ?? NaN, 0) },
    acceptToDispatchMsP50: round(row.dispatch_p50 ?? NaN, 0),
  };
}

const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);

function printSummary(steps: StepSummary[], drain: Record<string, unknown> & { accepted202: number; outboxRows: number; succeeded: number; completedFraction: number; resources: PhaseResources }, settings: { durationS: number; runsPerStep: number; drainDeadlineS: number }, file: string): void {
  const header = ['concurrency', 'accepted req/s median [min–max]', 'p50 ms', 'p95 ms', 'p99 ms', 'non-2xx', 'errors', 'event loop', 'CPU % node/loadgen/temporal/pg/other of system'];
  const rows = steps.map((s) => {
    const c = s.resources.cpuPercentOfOneCore;
    const cpu = c
      ? `${[c['node (API + worker)'], c['loadgen (autocannon)'], c['temporal dev server'], c['postgres (all processes)'], c.other].map((x) => round(x ?? NaN, 0)).join('/')} of ${round(c.system ?? NaN, 0)}`
      : 'n/a';
    const elu = `${round(s.resources.eventLoopUtilization * 100, 0)} %`;
    return [String(s.concurrency), fmtSpread(s.acceptedPerSec), fmtSpread(s.latencyMs.p50), fmtSpread(s.latencyMs.p95), fmtSpread(s.latencyMs.p99), String(s.non2xx), String(s.errors), elu, cpu];
  });
  const out = [
    '',
    `webhooks: ${settings.runsPerStep} runs × ${settings.durationS} s per step (latency of 2xx answers; medians over runs [min–max])`,
    ...textTable(header, rows),
    '',
    `202 answers counted: ${drain.accepted202}; outbox rows: ${drain.outboxRows}; succeeded runs: ${drain.succeeded} (${round(drain.completedFraction * 100, 1)} % of outbox rows) after ${drain.waitedS} s of drain (deadline ${settings.drainDeadlineS} s)`,
    `completed runs/s: ${drain.completedPerSecDuringLoad} during load, ${drain.completedPerSecDuringDrain ?? 'n/a'} during drain; accept→finish p50/p95/p99 ms: ${JSON.stringify(drain.acceptToFinishMs)}`,
    `outbox by status: ${JSON.stringify(drain.outboxByStatus)}; runs by status: ${JSON.stringify(drain.runsByStatus)}`,
    `drain resources: ${JSON.stringify(drain.resources)}`,
    ...(steps.some((s) => s.disturbedRuns > 0)
      ? [`warning: other processes used > ${FOREIGN_CPU_WARN} % of a core during ${steps.reduce((n, s) => n + s.disturbedRuns, 0)} measured run(s) (see foreignCpuPercent)`]
      : []),
    `results: ${file}`,
    '',
  ];
  process.stdout.write(out.join('\n'));
}
