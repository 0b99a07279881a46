/**
 * `npm run bench -- usersql`: what workspace A's 30 parallel slow read-only queries (issue 26,
 * F5: 5 s each, re-sent as soon as they end) cost workspace B. B's `GET /api/v1/workflows` and
 * B's own small query, one at a time, BENCH_QUERY_REPEATS times (default 40), at rest and under
 * the attack; twice: with the service's per-workspace limits (DATABASE_QUERY_* defaults) and
 * with them lifted (pool 32, 32 per workspace), which is how the shared, unlimited path behaved.
 */
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { provisionWorkspace } from '../../services/accounts/bootstrap';
import { benchEnvironment, envNumber, writeResults, type BenchContext } from './report';
import { startBenchStack, type BenchStack } from './stack';
import { percentile, round, textTable } from './stats';

const SLOW = 'select count(*) as n from (select generate_series(1, 2000000000) as g) as s';
const MODES: Array<{ name: string; env: Record<string, string> }> = [
  { name: 'per-workspace limits (defaults)', env: {} },
  {
    name: 'limits lifted (pool 32, 32 per workspace)',
    env: { DATABASE_QUERY_POOL_MAX: '32', DATABASE_QUERY_PER_WORKSPACE: '32', DATABASE_QUERY_QUEUE_PER_WORKSPACE: '100' },
  },
];

async function call(
  stack: BenchStack,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; ms: number; json: { database: { id: string } } }> {
  const started = performance.now();
  const res = await fetch(`${stack.apiUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => null)) as { database: { id: string } };
  return { status: res.status, ms: performance.now() - started, json };
}

function summary(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  return { n: sorted.length, p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), max: round(sorted.at(-1) ?? 0) };
}

export async function userSqlScenario(ctx: BenchContext): Promise<void> {
  const { log } = ctx;
  const repeats = envNumber('BENCH_QUERY_REPEATS', 40);
  const attackers = envNumber('BENCH_ATTACKERS', 30);
  const environment = await benchEnvironment();
  type Probe = { list: ReturnType<typeof summary>; query: ReturnType<typeof summary>; failures: number[] };
  const results: Array<{ mode: string; rest: Probe; underAttack: Probe; attackOutcomes: Record<number, number> }> = [];
  for (const mode of MODES) {
    const saved = { ...process.env };
    Object.assign(process.env, { DATABASE_QUERY_TIMEOUT_MS: '5000', ...mode.env });
    const stack = await startBenchStack(log);
    process.env = saved;
    try {
      const a = stack.workspace.apiKey;
      const b = (
        await provisionWorkspace(stack.api.deps.orm.em.fork(), {
          name: 'B',
          ownerEmail: `b-${randomBytes(4).toString('hex')}@example.test`,
          ownerPassword: randomBytes(18).toString('base64url'),
        })
      ).apiKey.token;
      const db = async (token: string) =>
        (
          await call(stack, token, 'POST', '/api/v1/databases', {
            databaseName: 'd',
            tableName: 't',
            columns: [{ name: 'v', type: 'text' }],
            rows: [{ v: 'ok' }],
          })
        ).json.database.id;
      const [aDb, bDb] = [await db(a), await db(b)];
      const probe = async () => {
        const list: number[] = [];
        const query: number[] = [];
        const failures: number[] = [];
        for (let i = 0; i < repeats; i++) {
          ctx.throwIfInterrupted();
          const l = await call(stack, b, 'GET', '/api/v1/workflows');
          const q = await call(stack, b, 'POST', '/api/v1/databases/query', { databaseId: bDb, sql: 'select v from t' });
          list.push(l.ms);
          query.push(q.ms);
          for (const r of [l, q]) if (r.status !== 200) failures.push(r.status);
        }
        return { list: summary(list), query: summary(query), failures };
      };
      log(`${mode.name}: B at rest`);
      const rest = await probe();
      log(`${mode.name}: B while A sends ${attackers} slow queries at a time`);
      let attacking = true;
      const outcomes: Record<number, number> = {};
      const attack = Array.from({ length: attackers }, async () => {
        while (attacking) {
          const r = await call(stack, a, 'POST', '/api/v1/databases/query', { databaseId: aDb, sql: SLOW });
          outcomes[r.status] = (outcomes[r.status] ?? 0) + 1;
          // A refused attacker retries after a short pause, as a client honouring nothing would.
          if (r.status === 429) await new Promise((res) => setTimeout(res, 100));
        }
      });
      await new Promise((res) => setTimeout(res, 2_000));
      const underAttack = await probe();
      attacking = false;
      await Promise.all(attack);
      results.push({ mode: mode.name, rest, underAttack, attackOutcomes: outcomes });
    } finally {
      await stack.stop();
    }
  }
  const rows = results.flatMap((r) =>
    (['list', 'query'] as const).map((k) => [
      r.mode,
      k === 'list' ? 'B GET /workflows' : 'B query',
      `${r.rest[k].p50} / ${r.rest[k].p99}`,
      `${r.underAttack[k].p50} / ${r.underAttack[k].p99} (max ${r.underAttack[k].max})`,
      String(r.underAttack.failures.length),
    ]),
  );
  const table = textTable(['mode', 'probe', 'at rest p50 / p99 ms', 'under attack p50 / p99 ms', 'B failures'], rows);
  process.stdout.write(`${table.join('\n')}\n`);
  for (const r of results) process.stdout.write(`${r.mode}: A's answers ${JSON.stringify(r.attackOutcomes)}\n`);
  const file = await writeResults('usersql', new Date(), { environment, settings: { repeats, attackers, timeoutMs: 5000 }, results });
  log(`results: ${file}`);
}
