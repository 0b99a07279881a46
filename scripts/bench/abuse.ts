/**
 * `npm run bench -- abuse` (issue 26, item 6): per attack class F1–F8 of issue 26, workspace
 * B's probe run (transform → code → transform, the one of test/abuse/) and `GET /healthz`,
 * first at rest, then while workspace A attacks, side by side: /healthz p50/p99, B's run
 * latency (POST execute until the run reads `succeeded`) p50/p99, failures, and what A got.
 *
 * Each class gets a fresh stack (Temporal dev server, database, the API and the worker each in
 * their own process, the docker-compose shape), so an attack that kills or wedges a process
 * is recorded as such (probes failing, the process gone) and cannot spoil the next class.
 * The attacks send exactly the payloads of test/abuse/attacks.ts, repeated for the attack
 * window (BENCH_ABUSE_ATTACK_S) while B probes one run at a time.
 */
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { provisionWorkspace } from '../../services/accounts/bootstrap';
import {
  F1_SOURCES,
  F2_SQL,
  F3_EXPRESSIONS,
  F4_CHAIN_LENGTH,
  F4_EXPRESSION,
  f4ChainExpression,
  F5_CPU_SQL,
  F5_PARALLEL,
  F6_SOURCE,
  F6_SPINNERS,
  F7_SOURCES,
  F8_SOURCES,
} from '../../test/abuse/attacks';
import { lockTablesOf } from '../../test/abuse/sqlLock';
import { PROBE_INPUT, PROBE_OUTPUT, chain, codeNode, probeGraph, transformNode, type WorkflowBody } from '../../test/abuse/probe';
import { benchEnvironment, envNumber, writeResults, type BenchContext } from './report';
import { startBenchStack, temporalFacts, type BenchStack } from './stack';
import { percentile, round, textTable } from './stats';

/** How long one request or run may take before the bench counts it as failed (not a measurement bound). */
const REQUEST_TIMEOUT_MS = 60_000;

interface Answer {
  status: number; // 0: no answer (connection refused, reset, timeout)
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON of any route
  ms: number;
  error?: string;
}

interface Ws {
  token: string;
  workspaceId: string;
}

interface Env {
  url: string;
  a: Ws;
  b: Ws;
  stack: BenchStack;
  /** A's read-only database (F2, F5). */
  aDatabaseId: string;
}

async function call(
  url: string,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<Answer> {
  const started = performance.now();
  try {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, ms: performance.now() - started };
  } catch (err) {
    return { status: 0, body: null, ms: performance.now() - started, error: (err as Error).message };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createAndDeploy(env: Env, ws: Ws, body: WorkflowBody, deploy = true): Promise<string> {
  const created = await call(env.url, ws.token, 'POST', '/api/v1/workflows', body);
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body).slice(0, 300)}`);
  const id = created.body.workflow.id as string;
  if (deploy) {
    const deployed = await call(env.url, ws.token, 'POST', `/api/v1/workflows/${id}/deploy`);
    if (deployed.status !== 200) throw new Error(`deploy answered ${deployed.status}: ${JSON.stringify(deployed.body).slice(0, 300)}`);
  }
  return id;
}

/** Executes live and polls until the run ends; `ms` is from the execute call to the first read of the end. */
async function runToEnd(
  env: Env,
  ws: Ws,
  workflowId: string,
  input: unknown = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a run as the API answers it
): Promise<{ ok: boolean; status: string; ms: number; run?: any }> {
  const started = performance.now();
  const exec = await call(env.url, ws.token, 'POST', `/api/v1/workflows/${workflowId}/execute`, { input });
  if (exec.status !== 202)
    return { ok: false, status: `execute ${exec.status}${exec.error ? ` (${exec.error})` : ''}`, ms: performance.now() - started };
  const runId = exec.body.run.id as string;
  while (performance.now() - started < REQUEST_TIMEOUT_MS) {
    const res = await call(env.url, ws.token, 'GET', `/api/v1/runs/${runId}`);
    const status = res.body?.run?.status as string | undefined;
    if (status && ['succeeded', 'failed', 'canceled'].includes(status))
      return { ok: status === 'succeeded', status, ms: performance.now() - started, run: res.body.run };
    await sleep(25);
  }
  return { ok: false, status: 'not ended within 60 s', ms: performance.now() - started };
}

interface Window {
  healthzMs: number[];
  healthzFailures: number;
  probeMs: number[];
  probeFailures: string[];
  /** B's GET /api/v1/workflows (F5's symptom). */
  listMs: number[];
  listFailures: number;
}

/**
 * B probes one run at a time, lists its workflows, and /healthz is polled every 100 ms, until
 * `until` resolves (and at least `minProbes` probes ended).
 */
async function measure(env: Env, probeId: string, until: Promise<unknown>, minProbes: number): Promise<Window> {
  const w: Window = { healthzMs: [], healthzFailures: 0, probeMs: [], probeFailures: [], listMs: [], listFailures: 0 };
  let done = false;
  void until.finally(() => (done = true)).catch(() => undefined);
  const probes = (async () => {
    while (!done || w.probeMs.length + w.probeFailures.length < minProbes) {
      const r = await runToEnd(env, env.b, probeId, PROBE_INPUT);
      if (r.ok && JSON.stringify(r.run?.output) === JSON.stringify(PROBE_OUTPUT)) w.probeMs.push(r.ms);
      else w.probeFailures.push(r.run?.error ? `${r.status}: ${String(r.run.error).slice(0, 120)}` : r.status);
      if (!r.ok && r.status.startsWith('execute 0')) await sleep(1000); // the API is gone: do not spin
    }
  })();
  let probesDone = false;
  void probes.finally(() => (probesDone = true));
  const health = (async () => {
    while (!probesDone) {
      const r = await call(env.url, null, 'GET', '/healthz', undefined, 30_000);
      if (r.status === 200) w.healthzMs.push(r.ms);
      else w.healthzFailures++;
      await sleep(100);
    }
  })();
  const lists = (async () => {
    while (!probesDone) {
      const r = await call(env.url, env.b.token, 'GET', '/api/v1/workflows');
      if (r.status === 200) w.listMs.push(r.ms);
      else w.listFailures++;
      await sleep(250);
    }
  })();
  await Promise.all([probes, health, lists]);
  return w;
}

interface AttackClass {
  key: string;
  describe: string;
  /** Prepared once per stack (workflows to execute, locks to hold). */
  prepare(env: Env): Promise<{ once(): Promise<Answer[]>; release?(): Promise<void> }>;
}

/** A live run of A: its run's end status as the answer's body. */
async function liveAttack(env: Env, workflowId: string): Promise<Answer> {
  const r = await runToEnd(env, env.a, workflowId);
  return {
    status: r.status.startsWith('execute') ? Number(r.status.split(' ')[1]) : 202,
    body: { runStatus: r.status, error: r.run?.error },
    ms: r.ms,
  };
}

const dryRunOf = (env: Env, workflowId: string) =>
  call(env.url, env.a.token, 'POST', `/api/v1/workflows/${workflowId}/execute`, { input: {}, target: 'candidate', dryRun: true });
const queryOf = (env: Env, sql: string) =>
  call(env.url, env.a.token, 'POST', '/api/v1/databases/query', { databaseId: env.aDatabaseId, sql });

const CLASSES: AttackClass[] = [
  {
    key: 'F1',
    describe: 'live code node throwing a lone surrogate (one run at a time)',
    prepare: async (env) => {
      const id = await createAndDeploy(env, env.a, chain([codeNode(F1_SOURCES['a thrown message with a lone high surrogate'])]));
      return { once: async () => [await liveAttack(env, id)] };
    },
  },
  {
    key: 'F2',
    describe: 'read-only SQL with a 600 MB value (one query at a time)',
    prepare: async (env) => ({ once: async () => [await queryOf(env, F2_SQL['one 600 MB value'])] }),
  },
  {
    key: 'F3',
    describe: 'dry runs of the five unbounded JSONata expressions (two at a time, round robin)',
    prepare: async (env) => {
      const ids = await Promise.all(
        Object.values(F3_EXPRESSIONS).map((e) => createAndDeploy(env, env.a, chain([transformNode(e)]), false)),
      );
      let next = 0;
      return { once: () => Promise.all([0, 1].map(() => dryRunOf(env, ids[next++ % ids.length]))) };
    },
  },
  {
    key: 'F4',
    describe: 'live runs of the $toMillis picture (two at a time)',
    prepare: async (env) => {
      const id = await createAndDeploy(env, env.a, chain([transformNode(F4_EXPRESSION)]));
      return { once: () => Promise.all([liveAttack(env, id), liveAttack(env, id)]) };
    },
  },
  {
    key: 'F4V',
    describe: `live runs of ${F4_CHAIN_LENGTH} nodes each at its expression budget (one at a time; F4 by volume)`,
    prepare: async (env) => {
      const nodes = Array.from({ length: F4_CHAIN_LENGTH }, (_, i) => ({
        ...transformNode(f4ChainExpression(i), `t${i}`),
        onError: 'continue',
      }));
      const id = await createAndDeploy(env, env.a, chain(nodes));
      return { once: async () => [await liveAttack(env, id)] };
    },
  },
  {
    key: 'F5',
    describe: `${F5_PARALLEL} parallel read-only queries of A held 5 s each (BENCH_ABUSE_SQL=lock: waiting on a lock the bench holds; cpu: generate_series work)`,
    prepare: async (env) => {
      const cpu = (process.env.BENCH_ABUSE_SQL ?? 'lock') === 'cpu';
      let release: (() => Promise<void>) | undefined;
      if (!cpu) ({ release } = await lockTablesOf(env.stack.databaseUrl, env.aDatabaseId));
      const sql = cpu ? F5_CPU_SQL : 'select count(*) as n from items';
      return { once: () => Promise.all(Array.from({ length: F5_PARALLEL }, () => queryOf(env, sql))), release };
    },
  },
  {
    key: 'F6',
    describe: `dry runs of ${F6_SPINNERS} side-by-side code nodes of while(true){} (one at a time)`,
    prepare: async (env) => {
      const nodes = Array.from({ length: F6_SPINNERS }, (_, i) => codeNode(F6_SOURCE, `spin${i + 1}`));
      const id = await createAndDeploy(
        env,
        env.a,
        { nodes: [{ id: 'start', type: 'start', config: {} }, ...nodes], edges: nodes.map((n) => ({ source: 'start', target: n.id })) },
        false,
      );
      return { once: async () => [await dryRunOf(env, id)] };
    },
  },
  {
    key: 'F7',
    describe: 'live runs allocating 300 × 1 MiB Uint8Array (two at a time)',
    prepare: async (env) => {
      const id = await createAndDeploy(env, env.a, chain([codeNode(F7_SOURCES['300 × 1 MiB Uint8Array'])]));
      return { once: () => Promise.all([liveAttack(env, id), liveAttack(env, id)]) };
    },
  },
  {
    key: 'F8',
    describe: 'dry runs returning NUL and lone surrogates (five at a time), then a live run of A',
    prepare: async (env) => {
      const ids = await Promise.all(Object.values(F8_SOURCES).map((s) => createAndDeploy(env, env.a, chain([codeNode(s)]), false)));
      return { once: () => Promise.all(ids.map((id) => dryRunOf(env, id))) };
    },
  },
];

/** "201: 12, 500: 3" for answers, and A's run outcomes for live attacks. */
function tally(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const key =
      a.status === 0
        ? `no answer (${(a.error ?? '').slice(0, 40)})`
        : a.body?.runStatus
          ? `${a.status} run ${a.body.runStatus}`
          : a.body?.run?.status
            ? `${a.status} run ${a.body.run.status}`
            : String(a.status);
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

const alive = (pid: number | null) => {
  if (pid === null) return null;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function summarize(w: Window) {
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const h = sorted(w.healthzMs);
  const p = sorted(w.probeMs);
  const l = sorted(w.listMs);
  return {
    healthz: {
      n: h.length,
      failures: w.healthzFailures,
      p50Ms: round(percentile(h, 50), 1),
      p99Ms: round(percentile(h, 99), 1),
      maxMs: round(h[h.length - 1] ?? NaN, 1),
    },
    probe: {
      n: p.length,
      failures: w.probeFailures.length,
      failureReasons: [...new Set(w.probeFailures)].slice(0, 5),
      p50Ms: round(percentile(p, 50), 0),
      p99Ms: round(percentile(p, 99), 0),
      maxMs: round(p[p.length - 1] ?? NaN, 0),
    },
    listWorkflows: { n: l.length, failures: w.listFailures, p50Ms: round(percentile(l, 50), 1), p99Ms: round(percentile(l, 99), 1) },
  };
}

async function runClass(ctx: BenchContext, cls: AttackClass, settings: { attackS: number; restProbes: number }) {
  const { log } = ctx;
  const stack = await startBenchStack(log, { workerProcess: true, apiProcess: true });
  try {
    const a = { token: stack.workspace.apiKey, workspaceId: stack.workspace.id };
    const provisioned = await provisionWorkspace(stack.api.deps.orm.em.fork(), {
      name: 'Bystander B',
      ownerEmail: `bench-b-${randomBytes(4).toString('hex')}@example.test`,
      ownerPassword: randomBytes(18).toString('base64url'),
      keyName: 'Bystander key',
    });
    const b = { token: provisioned.apiKey.token, workspaceId: provisioned.workspace.id };
    const db = await call(stack.apiUrl, a.token, 'POST', '/api/v1/databases', {
      databaseName: 'attack',
      tableName: 'items',
      columns: [{ name: 'label', type: 'text' }],
      rows: [{ label: 'one' }],
    });
    if (db.status !== 201) throw new Error(`database creation answered ${db.status}`);
    const env: Env = { url: stack.apiUrl, a, b, stack, aDatabaseId: db.body.database.id };
    const probeId = await createAndDeploy(env, b, probeGraph());
    // Warm-up: the first runs of a fresh worker pay for the sandbox threads and caches.
    for (let i = 0; i < 3; i++) await runToEnd(env, b, probeId, PROBE_INPUT);

    log(`${cls.key}: at rest (${settings.restProbes} probes)`);
    const rest = await measure(env, probeId, Promise.resolve(), settings.restProbes);
    ctx.throwIfInterrupted();

    const attack = await cls.prepare(env);
    log(`${cls.key}: under attack for ${settings.attackS} s: ${cls.describe}`);
    const answers: Answer[] = [];
    let stop = false;
    const attackLoop = (async () => {
      const started = performance.now();
      while (!stop && performance.now() - started < settings.attackS * 1000) {
        const got = await attack.once();
        answers.push(...got);
        if (got.some((g) => g.status === 0)) await sleep(1000); // the API is gone: do not spin
      }
    })();
    let under: Window;
    try {
      under = await measure(env, probeId, attackLoop, 1);
    } finally {
      stop = true;
      await attackLoop.catch(() => undefined);
      await attack.release?.();
    }
    // After the attack: one more probe and whether each process is still there.
    const after = await runToEnd(env, b, probeId, PROBE_INPUT);
    const processes = { apiAlive: alive(stack.apiPid), workerAlive: alive(stack.workerPid) };
    const row = {
      class: cls.key,
      attack: cls.describe,
      rest: summarize(rest),
      underAttack: summarize(under),
      attackAnswers: tally(answers),
      probeAfterAttack: { ok: after.ok, status: after.status, error: after.run?.error ?? null, ms: round(after.ms, 0) },
      processes,
      temporal: temporalFacts(stack),
    };
    const ratio = row.underAttack.probe.p50Ms / row.rest.probe.p50Ms;
    log(
      `${cls.key}: healthz p99 ${row.rest.healthz.p99Ms} → ${row.underAttack.healthz.p99Ms} ms; B probe p50 ${row.rest.probe.p50Ms} → ${row.underAttack.probe.p50Ms} ms (×${round(ratio, 2)}), ` +
        `failures ${row.underAttack.probe.failures}; A got ${JSON.stringify(row.attackAnswers)}; after: ${after.status}; api ${processes.apiAlive ? 'up' : 'DOWN'}, worker ${processes.workerAlive ? 'up' : 'DOWN'}`,
    );
    return row;
  } finally {
    await stack.stop();
  }
}

export async function abuseScenario(ctx: BenchContext): Promise<void> {
  const attackS = envNumber('BENCH_ABUSE_ATTACK_S', 20);
  const restProbes = envNumber('BENCH_ABUSE_REST_PROBES', 10);
  const only = (process.env.BENCH_ABUSE_CLASSES ?? '')
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  const classes = only.length ? CLASSES.filter((c) => only.includes(c.key)) : CLASSES;
  if (classes.length === 0) throw new Error(`BENCH_ABUSE_CLASSES matches none of ${CLASSES.map((c) => c.key).join(',')}`);
  const date = new Date();
  const environment = await benchEnvironment();
  const rows = [];
  for (const cls of classes) {
    ctx.throwIfInterrupted();
    try {
      rows.push(await runClass(ctx, cls, { attackS, restProbes }));
    } catch (err) {
      ctx.log(`${cls.key}: the class could not be measured: ${(err as Error).message}`);
      rows.push({ class: cls.key, attack: cls.describe, error: (err as Error).message });
    }
  }
  const results = {
    scenario: 'abuse',
    date: date.toISOString(),
    ...environment,
    settings: { attackS, restProbes, sqlMode: process.env.BENCH_ABUSE_SQL ?? 'lock', classes: classes.map((c) => c.key) },
    classes: rows,
  };
  const out = await writeResults('abuse', date, results);
  const cell = (x: number) => (Number.isFinite(x) ? String(x) : '–');
  const lines = [
    `abuse — ${environment.machine.cpuCount} × ${environment.machine.cpuModel}, ${environment.node}, commit ${environment.git.commit}${environment.git.dirtyWorkingTree ? ' (dirty)' : ''}, ${date.toISOString()}`,
    `B's probe (transform → code → transform) and /healthz at rest vs while A attacks for ${attackS} s; ms:`,
    '',
    ...textTable(
      [
        'class',
        'healthz p99 rest',
        'healthz p99 attack',
        'healthz fails',
        'B p50 rest',
        'B p50 attack',
        'B p99 rest',
        'B p99 attack',
        'B p50 ×',
        'B p99 ×',
        'B fails',
        'B list p99 attack',
        'after',
        'api/worker',
      ],
      rows.map((r) => {
        if (!('rest' in r)) return [r.class, 'error', r.error.slice(0, 60), '', '', '', '', '', '', '', '', '', '', ''];
        const x = r.underAttack.probe.p50Ms / r.rest.probe.p50Ms;
        const x99 = r.underAttack.probe.p99Ms / r.rest.probe.p99Ms;
        return [
          r.class,
          cell(r.rest.healthz.p99Ms),
          cell(r.underAttack.healthz.p99Ms),
          String(r.underAttack.healthz.failures),
          cell(r.rest.probe.p50Ms),
          cell(r.underAttack.probe.p50Ms),
          cell(r.rest.probe.p99Ms),
          cell(r.underAttack.probe.p99Ms),
          Number.isFinite(x) ? `${round(x, 2)}` : '–',
          Number.isFinite(x99) ? `${round(x99, 2)}` : '–',
          `${r.underAttack.probe.failures}/${r.underAttack.probe.n + r.underAttack.probe.failures}`,
          cell(r.underAttack.listWorkflows.p99Ms),
          r.probeAfterAttack.ok ? 'ok' : r.probeAfterAttack.status,
          `${r.processes.apiAlive ? 'up' : 'DOWN'}/${r.processes.workerAlive ? 'up' : 'DOWN'}`,
        ];
      }),
    ),
    '',
    "What A got, and why B's probes failed:",
    ...rows.map(
      (r) =>
        `  ${r.class}: ${'attackAnswers' in r ? `${JSON.stringify(r.attackAnswers)}${r.underAttack.probe.failures ? `; B: ${r.underAttack.probe.failureReasons.join(' | ')}` : ''}` : r.error}`,
    ),
    '',
    `results: ${out}`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
}
