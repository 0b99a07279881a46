/**
 * `npx tsx scripts/bench/sandboxFairness.ts`: what one workspace's spinning code costs another
 * workspace in the sandbox host (issue 26 item 5, row F6). Workspace B runs a quick code call
 * in a loop (one at a time), first at rest, then while workspace A has 40 `while (true) {}`
 * calls queued (each killed at its 1 s deadline); once with the per-workspace fair queue
 * (the default: A holds at most half of the code threads), with round-robin only (A may
 * take every thread), and with one FIFO for everyone (the pool before issue 26). Prints B's latency p50/p95/max per phase. No stack
 * needed: it calls runUserCode directly, as the worker's code activity does.
 */
import { closeSandboxPool, configureSandbox, runUserCode, SANDBOX_THREADS } from '../../services/kernel/sandbox/sandbox';

const PROBE = 'return { sum: input.n * 2 + 1 };';
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function probeLoop(count: number, workspaceId: string): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const r = await runUserCode(PROBE, { n: i }, { workspaceId });
    if (!r.ok) throw new Error(`probe failed: ${r.error.message}`);
    ms.push(performance.now() - t);
  }
  return ms;
}

/** `probeWorkspace` 'ws_A' puts B in A's queue: one FIFO for everyone, as the pool was before. */
async function phase(label: string, perWorkspace: number | undefined, probeWorkspace = 'ws_B'): Promise<void> {
  await closeSandboxPool();
  configureSandbox(perWorkspace ? { codePerWorkspace: perWorkspace } : {});
  await probeLoop(10, probeWorkspace); // host start and warm threads
  const rest = await probeLoop(SAMPLES, probeWorkspace);
  const attack = Array.from({ length: 40 }, () => runUserCode('while (true) {}', null, { workspaceId: 'ws_A' }));
  await new Promise((r) => setTimeout(r, 200)); // A's calls hold their threads
  const attacked = await probeLoop(SAMPLES, probeWorkspace);
  const t = performance.now();
  await Promise.all(attack);
  const attackLeft = performance.now() - t;
  const fmt = (v: number[]) => `p50 ${pct(v, 50).toFixed(1)} ms, p95 ${pct(v, 95).toFixed(1)} ms, max ${Math.max(...v).toFixed(1)} ms`;
  console.log(
    `${label}\n  B at rest:           ${fmt(rest)}\n  B while A spins 40:  ${fmt(attacked)}\n  (A's 40 calls still ran ${Math.round(attackLeft)} ms after B's ${SAMPLES} probes)`,
  );
}

async function main(): Promise<void> {
  console.log(`sandbox host: ${SANDBOX_THREADS} code threads; B samples per phase: ${SAMPLES}`);
  await phase(`fair queue (a workspace holds at most ${Math.ceil(SANDBOX_THREADS / 2)} threads)`, undefined);
  await phase(`round-robin only (a workspace may hold all ${SANDBOX_THREADS} threads)`, SANDBOX_THREADS);
  await phase('one FIFO for every workspace (the pool before this change)', SANDBOX_THREADS, 'ws_A');
  await closeSandboxPool();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
