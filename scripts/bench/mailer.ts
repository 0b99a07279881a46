/**
 * `npm run bench -- mailer`: signed inbound mail accepted per second and its latency. Every
 * request carries a new externalMessageId and a fresh `x-svc-signature`, so each is a new
 * message stored with its outbox entry (a replay would be a 409). The load is generated in
 * this process (fetch, keep-alive) because each body must be signed on the fly; it therefore
 * shares the CPU with the API.
 */
import { createHmac } from 'node:crypto';
import { apiCall, deployWorkflow } from './api';
import { benchEnvironment, envList, envNumber, writeResults, type BenchContext } from './report';
import { startBenchStack, type BenchStack } from './stack';
import { fmtSpread, percentile, round, spread, textTable } from './stats';

interface RunResult {
  acceptedPerSec: number;
  p50: number;
  p99: number;
  non202: number;
}

async function loadRun(url: string, secret: string, concurrency: number, durationS: number, seq: { n: number }): Promise<RunResult> {
  const latencies: number[] = [];
  let non202 = 0;
  const end = performance.now() + durationS * 1000;
  const started = performance.now();
  const worker = async () => {
    while (performance.now() < end) {
      const i = seq.n++;
      const raw = JSON.stringify({
        externalMessageId: `bench-${i}`,
        from: `sender${i % 50}@example.test`,
        subject: `Ticket ${i % 200}`,
        text: `Body of message ${i}`,
      });
      const ts = String(Math.floor(Date.now() / 1000));
      const sig = createHmac('sha256', secret).update(`${ts}.`).update(raw).digest('hex');
      const t0 = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-timestamp': ts, 'x-svc-signature': `v1=${sig}` },
        body: raw,
      });
      await res.arrayBuffer();
      const ms = performance.now() - t0;
      if (res.status === 202) latencies.push(ms);
      else non202++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { acceptedPerSec: latencies.length / elapsedS, p50: percentile(latencies, 50), p99: percentile(latencies, 99), non202 };
}

export async function mailerScenario(ctx: BenchContext): Promise<void> {
  const settings = {
    durationS: envNumber('BENCH_DURATION_S', 5),
    runsPerStep: envNumber('BENCH_RUNS', 3),
    concurrency: envList('BENCH_CONCURRENCY', [10, 50]),
    warmupS: envNumber('BENCH_WARMUP_S', 3),
  };
  const { log } = ctx;
  const started = new Date();
  const env = await benchEnvironment();
  let stack: BenchStack | null = null;
  try {
    stack = await startBenchStack(log);
    const { workflowId } = await deployWorkflow(stack, {
      name: 'Benchmark mail',
      nodes: [{ id: 'start', type: 'start', config: {} }],
      edges: [],
    });
    const res = await fetch(`${stack.apiUrl}/api/v1/mailer/routes`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${stack.workspace.apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': `bench-${Date.now()}`,
      },
      body: JSON.stringify({ address: 'bench@example.test', workflowId }),
    });
    const created = (await res.json()) as { route: { id: string }; signingSecret: string };
    if (res.status !== 201) throw new Error(`route creation answered ${res.status}`);
    const url = `${stack.apiUrl}/api/v1/mailer/inbound/${created.route.id}`;
    const seq = { n: 0 };
    log(`warm-up ${settings.warmupS} s at concurrency 10`);
    await loadRun(url, created.signingSecret, 10, settings.warmupS, seq);
    const steps = [];
    for (const concurrency of settings.concurrency) {
      const runs: RunResult[] = [];
      for (let r = 0; r < settings.runsPerStep; r++) {
        ctx.throwIfInterrupted();
        const result = await loadRun(url, created.signingSecret, concurrency, settings.durationS, seq);
        log(
          `  c=${concurrency} run ${r + 1}: ${round(result.acceptedPerSec)} msg/s, p50 ${round(result.p50)} ms, p99 ${round(result.p99)} ms, non-202 ${result.non202}`,
        );
        runs.push(result);
      }
      steps.push({
        concurrency,
        runs,
        acceptedPerSec: spread(runs.map((r) => r.acceptedPerSec)),
        p50: spread(runs.map((r) => r.p50)),
        p99: spread(runs.map((r) => r.p99)),
        non202: runs.reduce((s, r) => s + r.non202, 0),
      });
    }
    const stored = await apiCall<{ messages: unknown[] }>(stack, 'GET', '/api/v1/mailer/messages?limit=1');
    const file = await writeResults('mailer', started, {
      scenario: 'mailer',
      settings,
      env,
      steps,
      sent: seq.n,
      storedSample: stored.messages.length,
    });
    for (const line of textTable(
      ['concurrency', 'accepted msg/s, median [min–max]', 'p50 ms', 'p99 ms', 'non-202'],
      steps.map((s) => [String(s.concurrency), fmtSpread(s.acceptedPerSec, 0), fmtSpread(s.p50, 0), fmtSpread(s.p99, 0), String(s.non202)]),
    ))
      log(line);
    log(`results: ${file}`);
  } finally {
    await stack?.stop();
  }
}
