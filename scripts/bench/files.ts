/**
 * `npm run bench -- files`: memory of the API process while it streams a 100 MiB upload into
 * encrypted blob storage and while the file is downloaded whole by ranges.
 *
 * The usual stack (scripts/bench/stack.ts) provides PostgreSQL, Temporal, a worker and a
 * workspace; the measured API is a second process (`node --import tsx main/api.ts`, the
 * docker-compose shape) on the same database, so its RSS is its own and not the load
 * generator's. Its resident set is read from /proc every 10 ms, and its kernel high-water mark
 * (VmHWM) is reset before each phase (`clear_refs` 5) and read after it. The client streams the
 * upload from a generator with a known Content-Length and discards downloaded bytes after
 * hashing them: neither side ever holds the file. Local blob backend (a temp folder).
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { benchEnvironment, envNumber, writeResults, type BenchContext } from './report';
import { startBenchStack, superviseChild, temporalFacts, type BenchStack } from './stack';
import { round } from './stats';

const MiB = 1024 * 1024;

interface RssPhase {
  phase: string;
  seconds: number;
  bytes: number;
  mibPerSecond: number;
  rssBeforeMiB: number;
  rssPeakSampledMiB: number;
  rssAfterMiB: number;
  /** Kernel high-water mark of the phase (VmHWM after a reset), when the kernel allowed the reset. */
  rssHighWaterMiB: number | null;
  samples: number;
}

export async function filesScenario(ctx: BenchContext): Promise<void> {
  const settings = {
    sizeBytes: envNumber('BENCH_FILES_MIB', 100) * MiB,
    rangeBytes: envNumber('BENCH_FILES_RANGE_MIB', 8) * MiB,
    sampleMs: 10,
  };
  if (settings.sizeBytes > 104857600) throw new Error('BENCH_FILES_MIB must be at most 100 (the file size limit)');
  const { log } = ctx;
  const started = new Date();
  const env = await benchEnvironment();
  let stack: BenchStack | null = null;
  let api: ApiProcess | null = null;
  const blobDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-blobs-'));
  try {
    stack = await startBenchStack(log);
    ctx.throwIfInterrupted();
    api = await spawnApi(stack, blobDir);
    log(`measured API process: pid ${api.pid} on ${api.url}`);
    const token = stack.workspace.apiKey;
    const idleRss = rssOf(api.pid);

    const created = await json(api.url, 'POST', '/api/v1/files', token, {
      name: 'bench.bin',
      mimeType: 'application/octet-stream',
      sizeBytes: settings.sizeBytes,
    });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    const fileId = created.body.data.file.id as string;

    log(`upload: ${settings.sizeBytes / MiB} MiB streamed with Content-Length`);
    const upload = await measure(api.pid, `upload (PUT content, ${settings.sizeBytes / MiB} MiB streamed)`, settings.sampleMs, () =>
      putStreamed(api!.url, token, fileId, settings.sizeBytes),
    );
    log(`  ${round(upload.result.seconds, 2)} s, peak RSS ${upload.phase.rssPeakSampledMiB} MiB (before ${upload.phase.rssBeforeMiB} MiB)`);
    ctx.throwIfInterrupted();

    const done = await json(api.url, 'POST', `/api/v1/files/${fileId}/complete`, token, {});
    if (done.status !== 202 || done.body.data.file.status !== 'ready')
      throw new Error(`complete: ${done.status} ${JSON.stringify(done.body)}`);
    if (done.body.data.file.sha256 !== upload.result.sha256) throw new Error('the stored digest differs from the uploaded one');

    log(`download: whole file by ${settings.rangeBytes / MiB} MiB ranges`);
    const download = await measure(api.pid, `download (GET content by ${settings.rangeBytes / MiB} MiB ranges)`, settings.sampleMs, () =>
      getByRanges(api!.url, token, fileId, settings.sizeBytes, settings.rangeBytes),
    );
    if (download.result.sha256 !== upload.result.sha256) throw new Error('downloaded bytes differ from the uploaded ones');
    log(
      `  ${round(download.result.seconds, 2)} s in ${download.result.requests} requests, peak RSS ${download.phase.rssPeakSampledMiB} MiB`,
    );

    const result = {
      scenario: 'files',
      date: started.toISOString(),
      ...env,
      temporal: temporalFacts(stack),
      service: { measuredProcess: 'API alone (main/api.ts), local blob backend', logLevel: 'warn', blobSegmentBytes: 65536 },
      settings,
      idleRssMiB: round(idleRss / MiB, 1),
      phases: [upload.phase, download.phase],
      sha256: upload.result.sha256,
      downloadRequests: download.result.requests,
    };
    const file = await writeResults('files', started, result);
    printSummary(result, file);
  } finally {
    await api?.stop();
    if (stack) {
      log('shutting down the stack');
      await stack.stop();
    }
    await rm(blobDir, { recursive: true, force: true });
  }
}

interface ApiProcess {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The production API entry point in its own process, on the stack's database and Temporal. */
async function spawnApi(stack: BenchStack, blobDir: string): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'main/api.ts'], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporal.address,
      TEMPORAL_NAMESPACE: stack.config.temporal.namespace,
      SECRET_KEY: stack.config.secretKey!,
      HOST: '127.0.0.1',
      PORT: String(port),
      BLOB_DIR: blobDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const stop = superviseChild(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`API process exited early (${child.exitCode})`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error('API process did not answer /healthz within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  return { pid: child.pid!, url, stop };
}

function rssOf(pid: number, field = 'VmRSS'): number {
  // Synchronous on purpose: one small procfs read per sample.
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
  return kb ? Number(kb) * 1024 : NaN;
}

async function resetHighWater(pid: number): Promise<boolean> {
  try {
    await writeFile(`/proc/${pid}/clear_refs`, '5');
    return /VmHWM/.test(await readFile(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

async function measure<T extends { seconds: number; bytes: number }>(
  pid: number,
  phase: string,
  sampleMs: number,
  work: () => Promise<T>,
): Promise<{ phase: RssPhase; result: T }> {
  const hwm = await resetHighWater(pid);
  const before = rssOf(pid);
  let peak = before;
  let samples = 0;
  const timer = setInterval(() => {
    const rss = rssOf(pid);
    samples++;
    if (rss > peak) peak = rss;
  }, sampleMs);
  let result: T;
  try {
    result = await work();
  } finally {
    clearInterval(timer);
  }
  const after = rssOf(pid);
  const highWater = hwm ? rssOf(pid, 'VmHWM') : NaN;
  return {
    result,
    phase: {
      phase,
      seconds: round(result.seconds, 2),
      bytes: result.bytes,
      mibPerSecond: round(result.bytes / MiB / result.seconds, 1),
      rssBeforeMiB: round(before / MiB, 1),
      rssPeakSampledMiB: round(Math.max(peak, after) / MiB, 1),
      rssAfterMiB: round(after / MiB, 1),
      rssHighWaterMiB: hwm ? round(highWater / MiB, 1) : null,
      samples,
    },
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- envelope bodies of the API, checked by the callers
async function json(base: string, method: string, pathName: string, token: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${pathName}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomBytes(12).toString('hex') },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** PUT `size` pseudo-random bytes, generated 1 MiB at a time and written with back-pressure. */
function putStreamed(
  base: string,
  token: string,
  fileId: string,
  size: number,
): Promise<{ seconds: number; bytes: number; sha256: string }> {
  const url = new URL(base);
  const hash = createHash('sha256');
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'PUT',
        path: `/api/v1/files/${fileId}/content`,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/octet-stream',
          'content-length': String(size),
          'idempotency-key': randomBytes(12).toString('hex'),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          if (res.statusCode !== 201) return reject(new Error(`PUT content: ${res.statusCode} ${text}`));
          const sha256 = hash.digest('hex');
          if (JSON.parse(text).data.blob.sha256 !== sha256) return reject(new Error('the server computed another digest'));
          resolve({ seconds: (performance.now() - t0) / 1000, bytes: size, sha256 });
        });
      },
    );
    req.on('error', reject);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        const chunk = randomBytes(Math.min(MiB, size - sent));
        hash.update(chunk);
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

/** GET the whole file in consecutive ranges, hashing and discarding each part. */
async function getByRanges(
  base: string,
  token: string,
  fileId: string,
  size: number,
  rangeBytes: number,
): Promise<{ seconds: number; bytes: number; sha256: string; requests: number }> {
  const hash = createHash('sha256');
  const t0 = performance.now();
  let requests = 0;
  let received = 0;
  for (let start = 0; start < size; start += rangeBytes) {
    const end = Math.min(size, start + rangeBytes) - 1;
    const res = await fetch(`${base}/api/v1/files/${fileId}/content`, {
      headers: { authorization: `Bearer ${token}`, range: `bytes=${start}-${end}` },
    });
    requests++;
    if (res.status !== 206 || res.headers.get('content-range') !== `bytes ${start}-${end}/${size}`)
      throw new Error(`range ${start}-${end}: ${res.status}`);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      received += chunk.length;
    }
  }
  if (received !== size) throw new Error(`received ${received} of ${size} bytes`);
  return { seconds: (performance.now() - t0) / 1000, bytes: size, sha256: hash.digest('hex'), requests };
}

function printSummary(result: { idleRssMiB: number; phases: RssPhase[]; settings: { sizeBytes: number } }, file: string): void {
  const lines = [
    '',
    `files: ${result.settings.sizeBytes / MiB} MiB; API process RSS when idle ${result.idleRssMiB} MiB`,
    ...result.phases.map(
      (p) =>
        `  ${p.phase}: ${p.seconds} s (${p.mibPerSecond} MiB/s); RSS before ${p.rssBeforeMiB} MiB, peak ${p.rssPeakSampledMiB} MiB (${p.samples} samples), high-water ${p.rssHighWaterMiB ?? 'n/a'} MiB, after ${p.rssAfterMiB} MiB`,
    ),
    `results: ${file}`,
    '',
  ];
  process.stdout.write(lines.join('\n'));
}
