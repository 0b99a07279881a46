/**
 * `npm run bench -- webhooks`: how many webhook requests per second the service accepts, at
 * what latency, and how fast the accepted requests become succeeded runs.
 *
 * One stack (scripts/bench/stack.ts), one deployed workflow webhook → transform → log, a
 * warm-up, then autocannon (in a child process) at rising concurrency, several runs per step.
 * After the load it waits for the backlog to drain (outbox → Temporal → succeeded runs) up to
 * a deadline. Then the same load against bare Temporal (scripts/bench/baseline): a plain
 * `node:http` server in this process that starts `baselineWebhook` per request and answers 202
 * once the start returned, its worker in its own process, drained the same way. Results go to
 * bench-results/webhooks-<timestamp>.json and a summary to stdout, with service/bare ratios.
 */
import pg from 'pg';
import { TERMINAL_RUN_STATUSES } from '../../engine/statuses';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import {
  cpuBetween,
  cpuSamplingSupported,
  pidTree,
  pidsByComm,
  sampleCpu,
  threadsBetween,
  type CpuGroups,
  type CpuSample,
  type CpuUsage,
} from './cpu';
import type { LoadRunResult } from './loadgen';
import { backgroundCpu, roundAll, serverVersion, startLoadgen, type Loadgen } from './shared';
import { deployWorkflow } from './api';
import { baselineClient, spawnBaselineWorker } from './baseline/worker';
import { BASELINE_WEBHOOK_WORKFLOW, startBareWebhookServer } from './baseline/webhookServer';
import { profileWindow } from './profile';
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
  /**
   * Commits of the benchmark database during the step (pg_stat_database.xact_commit: the intake,
   * the dispatcher, the worker's writes), and per 202 answer; null for the bare side.
   */
  pgCommits: { total: number; per202: number } | null;
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
    // BENCH_API_PROCESSES=N: the requests go to N API processes sharing one port (main/supervisor.ts), not to this process's API.
    apiProcesses: envNumber('BENCH_API_PROCESSES', 0),
    cpuSampling: process.env.BENCH_CPU !== '0' && cpuSamplingSupported(),
  };
  const { log } = ctx;
  const started = new Date();
  const env = await benchEnvironment();
  log(
    `webhooks: warm-up ${settings.warmupS} s @${settings.warmupConcurrency}, steps ${settings.concurrency.join('/')} × ${settings.runsPerStep} runs × ${settings.durationS} s, drain ≤ ${settings.drainDeadlineS} s`,
  );

  // The load generator shares the machine with the service; so does anything else running.
  const background = settings.cpuSampling ? await backgroundCpu(3_000) : null;
  if (background && background.busyPercent > 25) {
    log(
      `warning: the machine is already ${round(background.busyPercent, 0)} % busy (of ${round(background.capacityPercent, 0)} %) before the benchmark; results will be low`,
    );
  }

  let stack: BenchStack | null = null;
  let loadgen: Loadgen | null = null;
  let db: pg.Client | null = null;
  try {
    stack = await startBenchStack(log, { apiProcesses: settings.apiProcesses });
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

    const meter = resourceMeter(
      cpuGroupsFor(stack, loadgen.pid, db, settings.apiProcesses > 0 ? SERVICE_PROCESS_WITH_APIS : SERVICE_PROCESS),
      settings.cpuSampling,
    );

    log(`warm-up: ${settings.warmupS} s at concurrency ${settings.warmupConcurrency}`);
    const warmup = await loadgen.run({ url: invokeUrl, connections: settings.warmupConcurrency, durationS: settings.warmupS });
    if (warmup.ok2xx === 0)
      throw new Error(`warm-up got no 2xx answer: status codes ${JSON.stringify(warmup.statusCodes)}, errors ${warmup.errors}`);
    ctx.throwIfInterrupted();

    const loadStart = Date.now();
    const pgCommits = async () =>
      Number(
        (await db!.query<{ n: string }>('select xact_commit::text as n from pg_stat_database where datname = current_database()')).rows[0]
          ?.n ?? NaN,
      );
    const steps = await loadSteps(ctx, loadgen, invokeUrl, settings, meter, 'service', pgCommits);
    const loadEnd = Date.now();

    // Drain: every accepted request should become a succeeded run.
    const accepted202 = [warmup, ...steps.flatMap((s) => s.runs)].reduce((sum, r) => sum + r.accepted202, 0);
    log(`load done: ${accepted202} requests answered 202; draining (deadline ${settings.drainDeadlineS} s)`);
    const drainStart = await meter.mark();
    const d = db;
    const series = await drainSeries(ctx, loadEnd, settings.drainDeadlineS, {
      poll: (t) => counts(d, workflowId, t),
      done: (p) => drained(p, accepted202),
      describe: (p) => `${p.runs.succeeded ?? 0} succeeded, outbox pending ${p.outbox.pending ?? 0}`,
    });
    const point = series[series.length - 1];
    const atLoadEnd = series[0];
    const drainEnd = Date.now();
    const drainResources = await meter.since(drainStart);
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

    // The same load and drain against bare Temporal, on the same server, in the same run. The
    // service's worker stops first: what its drain left would otherwise run on beside it (the
    // dispatcher then idles at its backpressure cap).
    await stack.stopWorker();
    const bare = await measureBaseline(ctx, stack, loadgen, db, settings, started);

    const result = {
      scenario: 'webhooks',
      date: started.toISOString(),
      ...env,
      temporal: temporalFacts(stack),
      postgres: { database: stack.databaseName, serverVersion: await serverVersion(db) },
      service: {
        apiAndWorker:
          settings.apiProcesses > 0
            ? `${settings.apiProcesses} API processes sharing one port (node cluster, each with its outbox dispatcher); 1 worker and an idle API in the bench process`
            : 'one Node process (API + outbox dispatcher + 1 worker)',
        logLevel: stack.config.logLevel,
        outboxPollMs: stack.config.outboxPollMs,
        outboxMaxQueuedRuns: stack.config.outboxMaxQueuedRuns,
        outboxStartParallelism: stack.config.outboxStartParallelism,
      },
      workflow: WORKFLOW,
      settings,
      backgroundCpuBeforeStart: background,
      warmup,
      steps,
      drain,
      bareTemporal: bare,
    };
    const file = await writeResults('webhooks', started, result);
    printSummary(result.steps, drain, settings, file);
    printBaseline(steps, drain, bare);
  } finally {
    loadgen?.stop();
    await db?.end().catch(() => undefined);
    if (stack) {
      log('shutting down the stack');
      await stack.stop();
    }
  }
}

/** What this process is in the service phase, and in the bare phase (with the bare worker's process beside it). */
const SERVICE_PROCESS = { benchProcess: 'node (API + worker)' } as const;
/** With BENCH_API_PROCESSES the bench process keeps the worker; the API processes are their own group. */
const SERVICE_PROCESS_WITH_APIS = { benchProcess: 'node (API + worker)', apiProcesses: 'api processes' } as const;
const BARE_PROCESS = { benchProcess: 'node (bare http server)', bareWorker: 'bare worker process' } as const;

/** Groups that overlap others, left out of the sum that makes `other`. */
const OVERLAPPING_GROUPS = ['postgres (bench db backends)'];

function cpuGroupsFor(
  stack: BenchStack,
  loadgenPid: number,
  db: pg.Client,
  phase: { benchProcess: string; bareWorker?: string; bareWorkerPid?: number; apiProcesses?: string },
): () => Promise<CpuGroups> {
  return async () => {
    // Backends serving the benchmark database (the API's and the worker's pools, and ours).
    const rows = (
      await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database()').catch(() => ({ rows: [] }))
    ).rows;
    const backends = rows.map((r) => r.pid);
    return {
      [phase.benchProcess]: () => [process.pid],
      ...(phase.bareWorker && phase.bareWorkerPid ? { [phase.bareWorker]: () => [phase.bareWorkerPid!] } : {}),
      ...(phase.apiProcesses ? { [phase.apiProcesses]: () => stack.apiPids().flatMap((pid) => pidTree(pid)) } : {}),
      'loadgen (autocannon)': () => [loadgenPid],
      'temporal dev server': () => pidTree(stack.temporal.pid),
      'postgres (all processes)': () => pidsByComm('postgres'),
      'postgres (bench db backends)': () => backends,
    };
  };
}

type Mark = { cpu: CpuSample | null; groups: string[]; elu: EventLoopUtilization };

/** Marks a moment and measures CPU by group and this process's event loop since a mark. */
function resourceMeter(
  groups: () => Promise<CpuGroups>,
  cpuSampling: boolean,
): { mark(): Promise<Mark>; since(start: Mark): Promise<PhaseResources> } {
  const mark = async (): Promise<Mark> => {
    const g = await groups();
    return { cpu: cpuSampling ? sampleCpu(g, [process.pid]) : null, groups: Object.keys(g), elu: performance.eventLoopUtilization() };
  };
  return {
    mark,
    since: async (start) => {
      const end = await mark();
      const disjoint = start.groups.filter((g) => !OVERLAPPING_GROUPS.includes(g));
      return {
        eventLoopUtilization: round(performance.eventLoopUtilization(end.elu, start.elu).utilization, 3),
        cpuPercentOfOneCore: start.cpu && end.cpu ? roundAll(cpuBetween(start.cpu, end.cpu, disjoint)) : null,
        nodeThreadsPercentOfOneCore: start.cpu && end.cpu ? roundAll(threadsBetween(start.cpu, end.cpu)) : null,
      };
    },
  };
}

type LoadSettings = { concurrency: number[]; runsPerStep: number; durationS: number };

/** `runsPerStep` autocannon runs of `durationS` at each concurrency against `url`, with the CPU of each step. */
async function loadSteps(
  ctx: BenchContext,
  loadgen: Loadgen,
  url: string,
  settings: LoadSettings,
  meter: ReturnType<typeof resourceMeter>,
  label: 'service' | 'bare',
  pgCommits?: () => Promise<number>,
): Promise<StepSummary[]> {
  const steps: StepSummary[] = [];
  const prefix = label === 'bare' ? 'bare Temporal ' : '';
  for (const concurrency of settings.concurrency) {
    const runs: MeasuredRun[] = [];
    const before = await meter.mark();
    const commitsBefore = pgCommits ? await pgCommits() : NaN;
    const endWindow = profileWindow(`${label} c=${concurrency}`);
    for (let r = 0; r < settings.runsPerStep; r++) {
      ctx.throwIfInterrupted();
      const runStart = await meter.mark();
      const result = await loadgen.run({ url, connections: concurrency, durationS: settings.durationS });
      // CPU used by processes outside the benchmark during this run (other users of the machine).
      const other = (await meter.since(runStart)).cpuPercentOfOneCore?.other;
      const foreignCpuPercent = other === undefined ? null : round(other, 1);
      runs.push({ ...result, foreignCpuPercent });
      ctx.log(
        `  ${prefix}c=${concurrency} run ${r + 1}/${settings.runsPerStep}: ${round(result.acceptedPerSec)} req/s, p50 ${round(result.latencyMs.p50)} ms, p99 ${round(result.latencyMs.p99)} ms, non-2xx ${result.non2xx}, errors ${result.errors}` +
          (foreignCpuPercent !== null && foreignCpuPercent > FOREIGN_CPU_WARN
            ? ` (machine busy with other processes: ${foreignCpuPercent} % of a core)`
            : ''),
      );
    }
    endWindow();
    const commits = pgCommits ? (await pgCommits()) - commitsBefore : null;
    const accepted = runs.reduce((n, r) => n + r.accepted202, 0);
    const step = summarizeStep(
      concurrency,
      runs,
      await meter.since(before),
      commits === null ? null : { total: commits, per202: round(commits / accepted, 3) },
    );
    steps.push(step);
    const threads = Object.entries(step.resources.nodeThreadsPercentOfOneCore ?? {}).slice(0, 4);
    ctx.log(
      `  ${prefix}c=${concurrency}: event loop ${round(step.resources.eventLoopUtilization * 100, 0)} % busy${threads.length ? `; node threads (% core): ${threads.map(([n, v]) => `${n} ${round(v, 0)}`).join(', ')}` : ''}` +
        (step.pgCommits ? `; PostgreSQL commits ${step.pgCommits.total} (${step.pgCommits.per202} per 202)` : ''),
    );
  }
  return steps;
}

/** Polls once a second from the end of the load until `done` or the deadline; the points, the first at the load's end. */
async function drainSeries<P extends { t: number }>(
  ctx: BenchContext,
  loadEnd: number,
  deadlineS: number,
  probe: { poll(t: number): Promise<P>; done(p: P): boolean; describe(p: P): string },
): Promise<P[]> {
  let point = await probe.poll(0);
  const series = [point];
  const deadline = loadEnd + deadlineS * 1000;
  let lastLog = Date.now();
  while (!probe.done(point) && Date.now() < deadline) {
    ctx.throwIfInterrupted();
    await new Promise((r) => setTimeout(r, 1000));
    point = await probe.poll((Date.now() - loadEnd) / 1000);
    series.push(point);
    if (Date.now() - lastLog >= 10_000) {
      lastLog = Date.now();
      ctx.log(`  +${round(point.t, 0)} s: ${probe.describe(point)}`);
    }
  }
  return series;
}

function summarizeStep(
  concurrency: number,
  runs: MeasuredRun[],
  resources: PhaseResources,
  pgCommits: StepSummary['pgCommits'],
): StepSummary {
  return {
    pgCommits,
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
    const { rows } = await db.query<{ status: string; n: number }>(
      `select status, count(*)::int as n from ${table} where workflow_id = $1 group by status`,
      [workflowId],
    );
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

interface BarePoint {
  /** Seconds since the end of the load. */
  t: number;
  completed: number;
  /** Closed otherwise (failed, terminated, timed out). */
  closedOtherwise: number;
}

/**
 * The webhooks load against bare Temporal: a warm-up and the same steps through the same
 * autocannon child, against a plain `node:http` server in this process that answers 202 once
 * `client.workflow.start` of `baselineWebhook` returned (its worker in its own process); then
 * drained until every accepted request is a closed workflow, counted through the server's
 * visibility (`count`).
 */
async function measureBaseline(
  ctx: BenchContext,
  stack: BenchStack,
  loadgen: Loadgen,
  db: pg.Client,
  settings: LoadSettings & { warmupS: number; warmupConcurrency: number; drainDeadlineS: number; cpuSampling: boolean },
  started: Date,
) {
  const worker = await spawnBaselineWorker(stack.temporal.address, stack.config.temporal.namespace);
  const client = baselineClient(stack.api.deps.temporal.connection, stack.config.temporal.namespace);
  const server = await startBareWebhookServer(client, `bench-bare-hook-${started.getTime()}`);
  try {
    const meter = resourceMeter(cpuGroupsFor(stack, loadgen.pid, db, { ...BARE_PROCESS, bareWorkerPid: worker.pid }), settings.cpuSampling);
    ctx.log(`bare Temporal: warm-up ${settings.warmupS} s at concurrency ${settings.warmupConcurrency}; worker pid ${worker.pid}`);
    const warmup = await loadgen.run({ url: server.url, connections: settings.warmupConcurrency, durationS: settings.warmupS });
    if (warmup.ok2xx === 0)
      throw new Error(`bare warm-up got no 2xx answer: status codes ${JSON.stringify(warmup.statusCodes)}, errors ${warmup.errors}`);
    const loadStart = Date.now();
    const steps = await loadSteps(ctx, loadgen, server.url, settings, meter, 'bare');
    const loadEnd = Date.now();

    const accepted202 = [warmup, ...steps.flatMap((s) => s.runs)].reduce((n, r) => n + r.accepted202, 0);
    ctx.log(
      `bare load done: ${server.accepted()} requests answered 202 (${accepted202} seen by autocannon); draining (deadline ${settings.drainDeadlineS} s)`,
    );
    const type = `WorkflowType = '${BASELINE_WEBHOOK_WORKFLOW}'`;
    const count = async (query: string) => (await client.workflow.count(`${type} AND ${query}`)).count;
    const drainStart = await meter.mark();
    const series = await drainSeries<BarePoint>(ctx, loadEnd, settings.drainDeadlineS, {
      poll: async (t) => ({
        t: round(t, 1),
        completed: await count(`ExecutionStatus = 'Completed'`),
        closedOtherwise: await count(`ExecutionStatus != 'Completed' AND ExecutionStatus != 'Running'`),
      }),
      // Starts still in flight when autocannon stopped are answered (and counted) meanwhile.
      done: (p) => p.completed + p.closedOtherwise >= server.accepted(),
      describe: (p) => `${p.completed} completed of ${server.accepted()} accepted`,
    });
    const accepted = server.accepted();
    const drainEnd = Date.now();
    const resources = await meter.since(drainStart);
    const last = series[series.length - 1];
    // The poll that first saw the final count: the last close, to within a second.
    const lastFinishAfterLoadS = series.find((p) => p.completed === last.completed)?.t ?? null;
    const iso = (ms: number) => new Date(ms).toISOString();
    const completedDuringLoad = await count(
      `ExecutionStatus = 'Completed' AND CloseTime >= '${iso(loadStart)}' AND CloseTime < '${iso(loadEnd)}'`,
    );
    const completedAfterLoad = await count(`ExecutionStatus = 'Completed' AND CloseTime >= '${iso(loadEnd)}'`);
    return {
      describe:
        'bare Temporal: a plain node:http server in the bench process starts baselineWebhook (scripts/bench/baseline/workflows.ts) per POST with client.workflow.start and answers 202 once the start returned; ' +
        'worker in its own process; same server, loadgen, concurrencies and durations as the service, in the same run; completions counted through Temporal visibility',
      warmup,
      steps,
      drain: {
        deadlineS: settings.drainDeadlineS,
        drainedWithinDeadline: last.completed + last.closedOtherwise >= accepted,
        waitedS: round((drainEnd - loadEnd) / 1000, 1),
        accepted202: accepted,
        accepted202SeenByLoadgen: accepted202,
        startFailures: server.failed(),
        completed: last.completed,
        closedOtherwise: last.closedOtherwise,
        completedFraction: accepted > 0 ? last.completed / accepted : NaN,
        completedPerSecDuringLoad: round(completedDuringLoad / ((loadEnd - loadStart) / 1000), 1),
        completedAfterLoad,
        /** Workflows closed after the load ended, per second, up to the poll that saw the last one (1 s resolution). */
        completedPerSecDuringDrain: lastFinishAfterLoadS ? round(completedAfterLoad / lastFinishAfterLoadS, 1) : null,
        lastFinishAfterLoadS,
        resources,
        series,
      },
    };
  } finally {
    await server.close();
    await worker.stop();
  }
}

type BareResult = Awaited<ReturnType<typeof measureBaseline>>;

const ratio = (service: number, bare: number) => String(round(service / bare, 2));

function printBaseline(
  steps: StepSummary[],
  drain: { completedPerSecDuringLoad: number; completedPerSecDuringDrain: number | null; completedFraction: number },
  bare: BareResult,
): void {
  const header = [
    'concurrency',
    'service accepted/s',
    'bare accepted/s',
    'ratio',
    'service p50 ms',
    'bare p50 ms',
    'service p99 ms',
    'bare p99 ms',
    'p99 ratio',
    'CPU % bench/bare worker/loadgen/temporal of system',
  ];
  const rows = bare.steps.map((b) => {
    const s = steps.find((x) => x.concurrency === b.concurrency);
    const c = b.resources.cpuPercentOfOneCore;
    const cpu = c
      ? `${[c[BARE_PROCESS.benchProcess], c[BARE_PROCESS.bareWorker], c['loadgen (autocannon)'], c['temporal dev server']].map((x) => round(x ?? NaN, 0)).join('/')} of ${round(c.system ?? NaN, 0)}`
      : 'n/a';
    return [
      String(b.concurrency),
      s ? fmtSpread(s.acceptedPerSec) : '-',
      fmtSpread(b.acceptedPerSec),
      s ? ratio(s.acceptedPerSec.median, b.acceptedPerSec.median) : '-',
      s ? String(round(s.latencyMs.p50.median)) : '-',
      String(round(b.latencyMs.p50.median)),
      s ? String(round(s.latencyMs.p99.median)) : '-',
      String(round(b.latencyMs.p99.median)),
      s ? ratio(s.latencyMs.p99.median, b.latencyMs.p99.median) : '-',
      cpu,
    ];
  });
  const bd = bare.drain;
  process.stdout.write(
    [
      'bare Temporal, same server and run (ratio = service / bare):',
      ...textTable(header, rows),
      `bare: ${bd.accepted202} accepted, ${bd.completed} completed (${round(bd.completedFraction * 100, 1)} %) after ${bd.waitedS} s of drain; start failures ${bd.startFailures}`,
      `completed/s during load: service ${drain.completedPerSecDuringLoad}, bare ${bd.completedPerSecDuringLoad} (ratio ${ratio(drain.completedPerSecDuringLoad, bd.completedPerSecDuringLoad)}); ` +
        `during drain: service ${drain.completedPerSecDuringDrain ?? 'n/a'}, bare ${bd.completedPerSecDuringDrain ?? 'n/a'}`,
      '',
    ].join('\n'),
  );
}

function printSummary(
  steps: StepSummary[],
  drain: Record<string, unknown> & {
    accepted202: number;
    outboxRows: number;
    succeeded: number;
    completedFraction: number;
    resources: PhaseResources;
  },
  settings: { durationS: number; runsPerStep: number; drainDeadlineS: number },
  file: string,
): void {
  const header = [
    'concurrency',
    'accepted req/s median [min–max]',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'non-2xx',
    'errors',
    'event loop',
    'CPU % node/api processes/loadgen/temporal/pg/other of system',
  ];
  const rows = steps.map((s) => {
    const c = s.resources.cpuPercentOfOneCore;
    const cpu = c
      ? `${[c['node (API + worker)'], c['api processes'] ?? 0, c['loadgen (autocannon)'], c['temporal dev server'], c['postgres (all processes)'], c.other].map((x) => round(x ?? NaN, 0)).join('/')} of ${round(c.system ?? NaN, 0)}`
      : 'n/a';
    const elu = `${round(s.resources.eventLoopUtilization * 100, 0)} %`;
    return [
      String(s.concurrency),
      fmtSpread(s.acceptedPerSec),
      fmtSpread(s.latencyMs.p50),
      fmtSpread(s.latencyMs.p95),
      fmtSpread(s.latencyMs.p99),
      String(s.non2xx),
      String(s.errors),
      elu,
      cpu,
    ];
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
      ? [
          `warning: other processes used > ${FOREIGN_CPU_WARN} % of a core during ${steps.reduce((n, s) => n + s.disturbedRuns, 0)} measured run(s) (see foreignCpuPercent)`,
        ]
      : []),
    `results: ${file}`,
    '',
  ];
  process.stdout.write(out.join('\n'));
}
