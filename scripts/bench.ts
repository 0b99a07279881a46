/**
 * `npm run bench -- <scenario>`: loopback-only benchmarks. Each scenario starts its own stack
 * (in-memory Temporal dev server, throwaway PostgreSQL database, API and worker on free
 * 127.0.0.1 ports), measures, writes bench-results/<scenario>-<timestamp>.json, prints a
 * summary and tears everything down. See docs/benchmarks.md.
 */
import type { BenchContext } from './bench/report';
import { stepsScenario } from './bench/steps';
import { throughputScenario } from './bench/throughput';
import { webhooksScenario } from './bench/webhooks';

interface Scenario {
  summary: string;
  run?: (ctx: BenchContext) => Promise<void>;
}

const SCENARIOS: Record<string, Scenario> = {
  webhooks: {
    summary: 'webhook trigger → transform → log: accepted req/s and latency at concurrency 10/50/100/200, then run completion',
    run: webhooksScenario,
  },
  steps: {
    summary: '40 sequential steps (transform, code fib(10), http GET, http POST), one run at a time: overhead per step',
    run: stepsScenario,
  },
  throughput: {
    summary: 'POST /execute at concurrency 5/10/20/40/80: completed runs/s, state transitions/run, PG commits/s, CPU per process',
    run: throughputScenario,
  },
};

const HELP = `usage: npm run bench -- <scenario>

scenarios:
${Object.entries(SCENARIOS)
  .map(([name, s]) => `  ${name.padEnd(12)}${s.summary}`)
  .join('\n')}

settings (environment):
  BENCH_DURATION_S   seconds per measured run (default 5)
  BENCH_RUNS         measured runs per concurrency step (default 5)
  BENCH_CONCURRENCY  comma-separated steps (webhooks: 10,50,100,200; throughput: 5,10,20,40,80)
  BENCH_WARMUP_S     warm-up seconds (webhooks at concurrency 10, throughput at 5; default 5)
  BENCH_DRAIN_S      deadline for the accepted requests/runs to end (default 120)
  BENCH_CPU=0        skip the per-process CPU sampling (/proc, Linux only)
  BENCH_STEPS        steps per workflow (steps; default 40)
  BENCH_WARMUP_RUNS  warm-up runs per variant (steps; default 2)
  BENCH_VARIANTS     comma-separated subset of transform,code,http-get,http-post (steps)
  BENCH_TEMPORAL_CONFIG  extra Temporal dynamic config, "key=value,key=value"
  BENCH_WORKER_NODE_ARGS  Node flags for the throughput worker process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"

Only 127.0.0.1 is ever targeted. Results: bench-results/<scenario>-<timestamp>.json.
`;

async function main(): Promise<number> {
  const arg = process.argv[2];
  if (!arg || arg === '--help' || arg === '-h' || arg === 'help') {
    (arg ? process.stdout : process.stderr).write(HELP);
    return arg ? 0 : 2;
  }
  const scenario = SCENARIOS[arg];
  if (!scenario) {
    process.stderr.write(`unknown scenario ${JSON.stringify(arg)}\n\n${HELP}`);
    return 2;
  }
  if (!scenario.run) {
    process.stderr.write(`scenario ${arg} is not yet implemented\n`);
    return 2;
  }

  let interrupted: string | null = null;
  const onSignal = (signal: string) => {
    if (interrupted) process.exit(130); // a second Ctrl-C: give up on a clean shutdown
    interrupted = signal;
    process.stderr.write(`\n${signal}: stopping after the current measurement and shutting down (again to force)\n`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const t0 = Date.now();
  const ctx: BenchContext = {
    log: (m) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${m}\n`),
    throwIfInterrupted: () => {
      if (interrupted) throw new Error(`interrupted by ${interrupted}`);
    },
  };
  await scenario.run(ctx);
  return interrupted ? 130 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
