/**
 * The bare-Temporal half of the `parked` scenario: the same number of plain Temporal workflows
 * (scripts/bench/baseline, `baselineParked`) parked on the same kinds of waits, on a bare worker
 * in its own process with the same sticky cache size, so the service's worker RSS can be given
 * as a ratio to what Temporal itself needs to hold that many runs.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchContext } from './report';
import { BASELINE_TASK_QUEUE, baselineClient, spawnBaselineWorker } from './baseline/worker';
import type { BaselineParkKind } from './baseline/workflows';
import type { BenchStack } from './stack';
import { pool } from './shared';
import { round } from './stats';

const KINDS: BaselineParkKind[] = ['approval', 'event', 'timer'];

export interface BareParkingOptions {
  parked: number;
  resumePerKind: number;
  startConcurrency: number;
  holdS: number;
  parkDeadlineS: number;
  maxCachedWorkflows: number;
  runtime: 'tsx' | 'dist';
  /** A prebuilt bundle of the baseline workflows, when the service worker also loads a prebuilt one. */
  workflowBundlePath?: string;
  /** Labels the RSS samples taken from now on. */
  setPhase(phase: string): void;
  /** The bare worker's pid while it runs (null after), for the RSS sampler. */
  setWorkerPid(pid: number | null): void;
  /** What a resumed run must return (the service's runs return the same strings). */
  expectedOutput(kind: BaselineParkKind, name: string, i: number): string;
}

/**
 * What the scenario parks: `parked` runs, a third on each kind, less the timer sample (the last
 * `timerSample` timer runs), which is started after the rest with a timer that fires after the
 * measurements.
 */
export function parkingPlan(
  parked: number,
  resumePerKind: number,
): { plan: Array<{ kind: BaselineParkKind; name: string; index: number }>; timerSample: number } {
  const all = Array.from({ length: parked }, (_, i) => ({ kind: KINDS[i % 3], name: `p${i}`, index: i }));
  const timerSample = Math.min(resumePerKind, all.filter((p) => p.kind === 'timer').length);
  let sampleLeft = timerSample;
  const plan = all
    .reverse()
    .filter((p) => !(p.kind === 'timer' && sampleLeft-- > 0))
    .reverse();
  return { plan, timerSample };
}

interface BareRun {
  kind: BaselineParkKind;
  name: string;
  index: number;
  handle: WorkflowHandle;
}

/** Parks `parked` bare runs, holds them `holdS`, then resumes a sample of each kind; the RSS is sampled by the caller. */
export async function bareParking(ctx: BenchContext, stack: BenchStack, o: BareParkingOptions) {
  const { log } = ctx;
  const client = baselineClient(stack.api.deps.temporal.connection, stack.config.temporal.namespace);
  const worker = await spawnBaselineWorker(stack.temporal.address, stack.config.temporal.namespace, {
    maxCachedWorkflows: o.maxCachedWorkflows,
    runtime: o.runtime,
    workflowBundlePath: o.workflowBundlePath,
  });
  o.setWorkerPid(worker.pid);
  const tag = Date.now().toString(36);
  const longSleepMs = 86_400_000;
  try {
    o.setPhase('bare-warm-up');
    const warmPlan = KINDS.flatMap((kind) =>
      Array.from({ length: 5 }, (_, i) => ({ kind, name: `bw-${kind}-${i}`, index: i, sleepMs: 2_000 })),
    );
    const warmRuns = await startBare(ctx, client, tag, warmPlan, 5);
    await untilParked(ctx, warmRuns, 120, () => undefined);
    await resumeBare(ctx, warmRuns, 5);
    const warm = await checkBare(ctx, warmRuns, Date.now() + 120_000, o.expectedOutput);
    log(`bare warm-up: ${warm.succeeded}/${warm.total} resumed runs succeeded`);

    o.setPhase('bare-before');
    await sleep((o.holdS * 1000) / 3);

    // The same plan as the service's; the timer sample is started after the rest with a
    // sleep that ends after the hold.
    const { plan: main, timerSample } = parkingPlan(o.parked, o.resumePerKind);
    const plan = main.map((p) => ({ ...p, sleepMs: longSleepMs }));
    o.setPhase('bare-parking');
    const parkStart = Date.now();
    const runs = await startBare(ctx, client, tag, plan, o.startConcurrency);
    const startsDoneMs = Date.now() - parkStart;
    log(
      `bare: started ${runs.length} runs in ${(startsDoneMs / 1000).toFixed(1)} s (${round(runs.length / (startsDoneMs / 1000), 1)}/s); waiting until all are parked`,
    );
    await untilParked(ctx, runs, o.parkDeadlineS, log);
    const sampleSleepMs = (o.holdS + 20) * 1000;
    const timerRuns = await startBare(
      ctx,
      client,
      tag,
      Array.from({ length: timerSample }, (_, i) => ({ kind: 'timer' as const, name: `t${i}`, index: i, sleepMs: sampleSleepMs })),
      o.startConcurrency,
    );
    await untilParked(ctx, timerRuns, o.parkDeadlineS, log);
    const timerSampleStart = Date.now();
    const parkedS = (Date.now() - parkStart) / 1000;
    log(`bare: all ${runs.length + timerRuns.length} runs parked after ${parkedS.toFixed(1)} s`);

    o.setPhase('bare-parked');
    await sleep(o.holdS * 1000);
    const running = await client.workflow.count(`TaskQueue = '${BASELINE_TASK_QUEUE}' AND ExecutionStatus = 'Running'`).then(
      (c) => c.count,
      () => null,
    );

    o.setPhase('bare-resume');
    const byKind = (k: BaselineParkKind) => runs.filter((r) => r.kind === k).slice(0, o.resumePerKind);
    const sample = [...byKind('approval'), ...byKind('event'), ...timerRuns];
    await resumeBare(ctx, sample, o.startConcurrency);
    const resumed = await checkBare(
      ctx,
      sample,
      Math.max(timerSampleStart + sampleSleepMs + 120_000, Date.now() + 300_000),
      o.expectedOutput,
    );
    log(
      `bare resume: ${resumed.succeeded}/${resumed.total} succeeded with the expected output (by kind ${JSON.stringify(resumed.byKind)})`,
    );
    o.setPhase('bare-after');
    await sleep(3_000);
    return {
      describe:
        'plain Temporal workflows (scripts/bench/baseline, baselineParked: an update, a signal or a sleep), started by client.workflow.start, bare worker in its own process, same server, same sticky cache size',
      warmup: warm,
      park: {
        runs: runs.length + timerRuns.length,
        startsPerSec: round(runs.length / (startsDoneMs / 1000), 1),
        timeToParkS: round(parkedS, 1),
        runningAfterHold: running,
      },
      resume: resumed,
    };
  } finally {
    await worker.stop();
    o.setWorkerPid(null);
  }
}

async function startBare(
  ctx: BenchContext,
  client: Client,
  tag: string,
  plan: Array<{ kind: BaselineParkKind; name: string; index: number; sleepMs: number }>,
  concurrency: number,
): Promise<BareRun[]> {
  return pool(
    plan,
    concurrency,
    async (p) => {
      const handle = await client.workflow.start('baselineParked', {
        taskQueue: BASELINE_TASK_QUEUE,
        workflowId: `bench-bare-park-${tag}-${p.name}`,
        args: [p.kind, p.name, p.sleepMs],
      });
      return { kind: p.kind, name: p.name, index: p.index, handle };
    },
    ctx,
  );
}

/**
 * Waits until each run's first workflow task is done (a history of at least four events and
 * no workflow task pending): the run is then parked on its wait, as a service run is once
 * its projection says `waiting`.
 */
async function untilParked(ctx: BenchContext, runs: BareRun[], deadlineS: number, log: (m: string) => void): Promise<void> {
  const deadline = Date.now() + deadlineS * 1000;
  let left = runs;
  let lastLog = Date.now();
  while (left.length > 0) {
    const parked = await pool(
      left,
      20,
      async (r) => {
        const d = await r.handle.describe();
        return d.historyLength >= 4 && !d.raw.pendingWorkflowTask;
      },
      ctx,
    );
    left = left.filter((_, i) => !parked[i]);
    if (left.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`bare: only ${runs.length - left.length} of ${runs.length} runs parked after ${deadlineS} s`);
    if (Date.now() - lastLog > 15_000) {
      log(`  bare: ${runs.length - left.length}/${runs.length} parked`);
      lastLog = Date.now();
    }
    await sleep(500);
  }
}

/** Approves the approval runs (an update, answered once the run took it), signals the event runs; timers need nothing. */
async function resumeBare(ctx: BenchContext, runs: BareRun[], concurrency: number): Promise<void> {
  await pool(
    runs.filter((r) => r.kind !== 'timer'),
    concurrency,
    async (r) => {
      if (r.kind === 'approval') await r.handle.executeUpdate('approve', { args: [`ok ${r.name}`] });
      else await r.handle.signal('event', r.index);
    },
    ctx,
  );
}

async function checkBare(ctx: BenchContext, runs: BareRun[], deadline: number, expected: BareParkingOptions['expectedOutput']) {
  return tallyOutcomes(runs, 20, ctx, async (r) => {
    const deadlineLeft = new AbortController();
    const timedOut = sleep(Math.max(0, deadline - Date.now()), '(not finished by the deadline)', { signal: deadlineLeft.signal }).catch(
      () => '',
    );
    const out = await Promise.race([
      r.handle.result().then(
        (x: unknown) => x,
        (err: Error) => `failed: ${err.message}`,
      ),
      timedOut,
    ]);
    deadlineLeft.abort();
    return out === expected(r.kind, r.name, r.index) ? null : `${r.handle.workflowId}: ${JSON.stringify(out)}`;
  });
}

/**
 * Checks each resumed run (`check` answers null when it ended as expected, else what went
 * wrong) and counts the successes by kind, keeping the first few failures of each.
 */
export async function tallyOutcomes<R extends { kind: string }>(
  runs: R[],
  concurrency: number,
  ctx: BenchContext,
  check: (run: R) => Promise<string | null>,
) {
  const byKind: Record<string, { total: number; succeeded: number; wrong: string[] }> = {};
  await pool(
    runs,
    concurrency,
    async (r) => {
      const k = (byKind[r.kind] ??= { total: 0, succeeded: 0, wrong: [] });
      k.total++;
      const wrong = await check(r);
      if (wrong === null) k.succeeded++;
      else if (k.wrong.length < 5) k.wrong.push(wrong);
    },
    ctx,
  );
  return { total: runs.length, succeeded: Object.values(byKind).reduce((n, k) => n + k.succeeded, 0), byKind };
}
