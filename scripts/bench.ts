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
import { filesScenario } from './bench/files';
import { tablesScenario } from './bench/tables';
import { mailerScenario } from './bench/mailer';
import { retrievalScenario, syncScenario } from './bench/knowledge';
import { restartScenario } from './bench/restart';
import { parkedScenario } from './bench/parked';
import { abuseScenario } from './bench/abuse';
import { userSqlScenario } from './bench/userSql';
import { migrationScenario } from './bench/migration';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { formatProfileSummary, nameProfiledProcess, summarizeProfileDir } from './bench/profile';

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
  tables: {
    summary:
      'user tables: insert rows/s through the API (concurrency 1/10/50), CSV import MB/s of a 5 MB file, read-only SQL p50/p99 on a 100k-row table',
    run: tablesScenario,
  },
  throughput: {
    summary: 'POST /execute at concurrency 5/10/20/40/80: completed runs/s, state transitions/run, PG commits/s, CPU per process',
    run: throughputScenario,
  },
  mailer: {
    summary: 'signed inbound mail (fresh id and HMAC per request) at concurrency 10/50: accepted messages/s, p50/p99',
    run: mailerScenario,
  },
  files: {
    summary: '100 MiB upload streamed into encrypted storage, then downloaded whole by ranges: peak RSS of the API process in each',
    run: filesScenario,
  },
  retrieval: {
    summary: 'knowledge search quality: recall@5 and MRR of keyword, vector and hybrid over 40 labelled queries (loopback embeddings)',
    run: retrievalScenario,
  },
  restart: {
    summary:
      'npm start after a kill -9 on the same DATA_DIR and ports: ms to the API line and to /healthz 200 (BENCH_RUNS restarts, default 3)',
    run: restartScenario,
  },
  parked: {
    summary:
      'BENCH_PARKED runs (default 10,000) parked on timers, approvals and events: RSS of worker/API/Temporal and API p50/p99 before and while parked, then a resumed sample',
    run: parkedScenario,
  },
  abuse: {
    summary:
      "issue 26's attack classes F1-F8, one fresh stack each: /healthz p99 and workspace B's probe-run latency at rest vs while workspace A attacks",
    run: abuseScenario,
  },
  usersql: {
    summary:
      "workspace B's GET /workflows and query latency at rest and while workspace A sends 30 parallel 5 s queries, with and without the per-workspace limits",
    run: userSqlScenario,
  },
  migration: {
    summary:
      'n8n exports of the public corpus (scripts/bench/migrationCorpus.json): accepted, ready, node coverage, and item-for-item parity of ready offline workflows with n8n runs',
    run: migrationScenario,
  },
  sync: {
    summary:
      'knowledge sync runs: items/s of a 5,000-message chat and a 2,000-file repo sync against loopback providers (BENCH_RUNS repetitions, default 3)',
    run: syncScenario,
  },
};

const HELP = `usage: npm run bench -- <scenario>

scenarios:
${Object.entries(SCENARIOS)
  .map(([name, s]) => `  ${name.padEnd(12)}${s.summary}`)
  .join('\n')}

settings (environment):
  BENCH_DURATION_S   seconds per measured run (default 5)
  BENCH_RUNS         measured runs per concurrency step (default 5; parked: latency runs per endpoint, default 3)
  BENCH_CONCURRENCY  comma-separated steps (webhooks: 10,50,100,200; throughput: 5,10,20,40,80; tables: 1,10,50)
  BENCH_QUERY_REPEATS  queries per query shape (tables; default 200; usersql: probes of B, default 40)
  BENCH_ATTACKERS    parallel slow queries of workspace A (usersql; default 30)
  BENCH_WARMUP_S     warm-up seconds (webhooks at concurrency 10, throughput at 5; default 5)
  BENCH_DRAIN_S      deadline for the accepted requests/runs to end (default 120; parked: to park, default 1800)
  BENCH_CPU=0        skip the per-process CPU sampling (/proc, Linux only)
  BENCH_STEPS        steps per workflow (steps; default 40)
  BENCH_WARMUP_RUNS  warm-up runs per variant (steps; default 2)
  BENCH_VARIANTS     comma-separated subset of transform,code,http-get,http-post (steps)
  BENCH_FILES_MIB    file size (files; default 100, at most 100)
  BENCH_FILES_RANGE_MIB  range size of the download (files; default 8)
  BENCH_PARKED       runs to park (parked; default 10000, a third each on approval, event, timer)
  BENCH_PARKED_CONCURRENCY  execute requests in flight while parking (parked; default 20)
  BENCH_PARKED_RESUME  runs of each kind resumed at the end (parked; default 100)
  BENCH_PARKED_HOLD_S  seconds of RSS sampling while parked (parked; default 30)
  BENCH_PARKED_CONNECTIONS  autocannon connections of the latency runs (parked; default 10)
  WORKER_MAX_CACHED_WORKFLOWS  the worker's sticky cache (parked, throughput: its own process)
  BENCH_TEMPORAL_CONFIG  extra Temporal dynamic config, "key=value,key=value"
  BENCH_TEMPORAL_SETTINGS  service (default: temporal/serverConfig.ts) or server-defaults
  BENCH_WORKER_NODE_ARGS  Node flags for the throughput worker process
  BENCH_ABUSE_ATTACK_S  seconds each attack class runs while B probes (abuse; default 20)
  BENCH_ABUSE_REST_PROBES  B's probe runs at rest before each attack (abuse; default 10)
  BENCH_ABUSE_CLASSES  comma-separated subset of F1,…,F8 (abuse; default all)
  BENCH_ABUSE_SQL    F5's slow queries: lock (wait on a lock the bench holds; default) or cpu (generate_series work)
  BENCH_N8N=off      migration: use only the recorded n8n reference runs (~/.cache/svc-n8n/references)
  BENCH_DOCS=off     migration: do not write the table into docs/benchmarks.md
  BENCH_PROFILE      a folder: CPU-profile every Node process and thread of the benchmark and summarize
                     the measured windows into <folder>/summary.txt and summary.json

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

  if (process.env.BENCH_PROFILE && process.env.BENCH_PROFILE_ACTIVE !== '1') return runProfiled(process.env.BENCH_PROFILE);
  nameProfiledProcess(process.pid, 'bench process (API, dispatcher, loadgen control)');

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

/**
 * This benchmark again under `node --cpu-prof` (refused in NODE_OPTIONS), then the summary of
 * its measured windows (scripts/bench/profile.ts).
 */
async function runProfiled(dirArg: string): Promise<number> {
  const dir = path.resolve(dirArg);
  mkdirSync(dir, { recursive: true });
  const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--import', 'tsx', __filename, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_PROFILE_ACTIVE: '1' },
  });
  // Ctrl-C reaches the child through the terminal; SIGTERM is passed on.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  const code = await new Promise<number>((resolve) => child.once('exit', (c, signal) => resolve(c ?? (signal ? 130 : 1))));
  const summary = summarizeProfileDir(dir);
  const text = formatProfileSummary(summary);
  writeFileSync(path.join(dir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  writeFileSync(path.join(dir, 'summary.txt'), text);
  process.stdout.write(`\nCPU profiles of the measured windows (${path.join(dir, 'summary.txt')}):\n${text}`);
  return code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
