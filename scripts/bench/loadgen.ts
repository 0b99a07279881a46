/**
 * Load generator child process of the benchmarks: runs autocannon on request from the parent
 * (over the IPC channel of `fork`) so that generating load does not share an event loop with
 * the API and worker under test. Refuses any target that is not 127.0.0.1.
 */
import autocannon from 'autocannon';
import { percentile } from './stats';

export interface LoadRunRequest {
  type: 'run';
  id: number;
  url: string;
  connections: number;
  durationS: number;
  /** GET sends no body (read routes); default POST with the numbered JSON body. */
  method?: 'GET' | 'POST';
  /** Extra request headers (e.g. Authorization for the execute API). */
  headers?: Record<string, string>;
  /** Send `{ "input": { "i": n } }` (the execute API's body) instead of `{ "i": n }`. */
  wrapInInput?: boolean;
  /** Send `{ "values": { "n": n, "label": "row-n", "meta": { "i": n } } }` (the rows API's body). */
  wrapInValues?: boolean;
}

export interface LoadRunResult {
  connections: number;
  /** Elapsed seconds as autocannon measured them. */
  durationS: number;
  sent: number;
  ok2xx: number;
  accepted202: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** 2xx count / duration. */
  acceptedPerSec: number;
  /** Raw response times of 2xx answers, ms (no coordinated-omission correction). */
  latencyMs: { p50: number; p95: number; p99: number; max: number; mean: number };
  /** autocannon's own histogram figures, for cross-checking. */
  autocannonLatencyMs: { p50: number; p97_5: number; p99: number };
  /** First and last `i` sent in this run. */
  counterRange: [number, number];
}

export type LoadgenMessage = { type: 'result'; id: number; result: LoadRunResult } | { type: 'error'; id: number; message: string };

/** Monotonic body counter across all runs of this process: bodies are `{ "i": <counter> }`. */
let counter = 0;

function bodyFor(req: LoadRunRequest, i: number): unknown {
  if (req.wrapInValues) return { values: { n: i, label: `row-${i}`, meta: { i } } };
  return req.wrapInInput ? { input: { i } } : { i };
}

function runOnce(req: LoadRunRequest): Promise<LoadRunResult> {
  const target = new URL(req.url);
  if (target.hostname !== '127.0.0.1') throw new Error(`Refusing to send load to ${target.hostname}: loopback 127.0.0.1 only`);
  const firstCounter = counter;
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: req.url,
        connections: req.connections,
        duration: req.durationS,
        pipelining: 1,
        timeout: 10,
        requests: [
          req.method === 'GET'
            ? { method: 'GET', headers: { ...req.headers } }
            : {
                method: 'POST',
                headers: { ...req.headers, 'content-type': 'application/json' },
                setupRequest: (r) => ({ ...r, body: JSON.stringify(bodyFor(req, counter++)) }),
              },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        latencies.sort((a, b) => a - b);
        const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, v]) => [code, v.count]));
        const durationS = result.duration || req.durationS;
        resolve({
          connections: req.connections,
          durationS,
          sent: result.requests.sent,
          ok2xx: result['2xx'],
          accepted202: statusCodes['202'] ?? 0,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes,
          acceptedPerSec: result['2xx'] / durationS,
          latencyMs: {
            p50: percentile(latencies, 50),
            p95: percentile(latencies, 95),
            p99: percentile(latencies, 99),
            max: latencies.length > 0 ? latencies[latencies.length - 1] : NaN,
            mean: latencies.length > 0 ? latencies.reduce((a, b) => a + b, 0) / latencies.length : NaN,
          },
          autocannonLatencyMs: { p50: result.latency.p50, p97_5: result.latency.p97_5, p99: result.latency.p99 },
          counterRange: [firstCounter, counter - 1],
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTimeMs);
    });
  });
}

if (require.main === module) {
  if (!process.send) {
    console.error('loadgen.ts is started by scripts/bench.ts over an IPC channel');
    process.exit(2);
  }
  const reply = (msg: LoadgenMessage) => process.send!(msg);
  process.on('message', (msg: LoadRunRequest) => {
    if (msg?.type !== 'run') return;
    runOnce(msg)
      .then((result) => reply({ type: 'result', id: msg.id, result }))
      .catch((err: unknown) => reply({ type: 'error', id: msg.id, message: err instanceof Error ? err.message : String(err) }));
  });
  // The parent going away (normal end or crash) ends this process too.
  process.on('disconnect', () => process.exit(0));
  // Ctrl-C reaches the whole process group; the parent decides how to wind down.
  process.on('SIGINT', () => undefined);
}
