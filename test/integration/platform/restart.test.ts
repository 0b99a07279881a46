/**
 * `npm start` after a crash (issue 10, item 5): the service (scripts/start.ts, run as one
 * process with `node --import tsx`) is killed with SIGKILL and started again on the same
 * DATA_DIR and ports; it must come back, within 30 s. Each start uses free ports, a temp
 * DATA_DIR and its own database on the tests' PostgreSQL server; every child is killed and
 * the database dropped at the end.
 */
// Real processes, so no useTestStack(): the kit's client and deployWorkflow talk to the started service.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { dropDatabase } from '../../../scripts/lib/postgres';
import { findFreePort } from '../../../scripts/lib/temporalDevServer';
import { testEnv } from '../../support/env';
import { client, deployWorkflow, http, line, node } from '../../kit';

jest.setTimeout(400_000);

const ROOT = path.resolve(__dirname, '../../..');
const started: ChildProcess[] = [];
let dataDir: string;
let databaseUrl: string;
let env: NodeJS.ProcessEnv;
let apiPort: number;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-restart-'));
  const url = new URL(testEnv('databaseUrl'));
  url.pathname = `/svc_restart_${randomBytes(5).toString('hex')}`;
  databaseUrl = url.toString();
  apiPort = await findFreePort();
  env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PORT: String(apiPort), LOG_LEVEL: 'warn' };
  env.TEMPORAL_PORT = String(await findFreePort());
  env.TEMPORAL_UI_PORT = String(await findFreePort());
  for (const name of ['TEMPORAL_ADDRESS', 'TEMPORAL_UI_URL', 'NODE_ENV', 'SECRET_KEY']) delete env[name];
});

// A test that failed half-way must not leave its service to the next one: stop what it started
// and wait for the service's dev server to go (its watchdog stops it when the service dies).
afterEach(async () => {
  for (const child of started) await killed(child);
  try {
    const record = JSON.parse(readFileSync(path.join(dataDir, 'temporal-dev-server.pid'), 'utf8')) as { pid: number };
    if (!(await gone(record.pid))) process.kill(-record.pid, 'SIGKILL');
  } catch {
    /* none recorded */
  }
});

afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  // A dev server still recorded after the kills would be a leak of this test: stop it.
  try {
    const record = JSON.parse(readFileSync(path.join(dataDir, 'temporal-dev-server.pid'), 'utf8')) as { pid: number };
    process.kill(-record.pid, 'SIGKILL');
  } catch {
    /* none left */
  }
  await dropDatabase(databaseUrl).catch(() => {});
  await rm(dataDir, { recursive: true, force: true }).catch(() => {});
});

interface Started {
  child: ChildProcess;
  ms: number;
  /** What the service printed so far. */
  output(): string;
}

/** Starts the service; resolves when it printed its API line, rejects with its output if it exits first. */
function startService(timeoutMs: number): Promise<Started> {
  const t0 = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no API line after ${timeoutMs} ms:\n${output.slice(-3000)}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/API:\s+http/.test(output)) {
        clearTimeout(timer);
        resolve({ child, ms: Date.now() - t0, output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`service exited (${signal ?? code}) before it was ready:\n${output.slice(-3000)}`));
    });
  });
}

/** Runs a start that must fail; resolves with its output and how long it took. */
function startFailing(timeoutMs: number): Promise<{ output: string; ms: number; code: number | null }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`start did not fail within ${timeoutMs} ms:\n${output.slice(-3000)}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ output, ms: Date.now() - t0, code });
    });
  });
}

async function healthz(): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${apiPort}/healthz`);
  return res.status;
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

const recordedDevServer = () => (JSON.parse(readFileSync(path.join(dataDir, 'temporal-dev-server.pid'), 'utf8')) as { pid: number }).pid;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A process that has exited but was not yet reaped (its parent is gone; init reaps it when
  // it gets to it) still answers signal 0: it is a zombie, not running.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Waits (generously) until `pid` is gone; false if it is still there. */
async function gone(pid: number, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isRunning(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  return !isRunning(pid);
}

/** The watchdogs the service started (its children running the `node -e` watch). */
function watchdogsOf(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return children.filter((c) => {
    try {
      return readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('process.ppid');
    } catch {
      return false;
    }
  });
}

/** Creates a workspace with the admin command on the service's database; returns its workspace key. */
function adminWorkspace(): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'scripts/admin.ts',
      'create-workspace',
      '--name',
      'Crash test',
      '--owner-email',
      'crash@example.test',
      '--owner-password',
      'correct horse battery staple',
      '--json',
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code === 0 && line) resolve(JSON.parse(line).apiKey.token);
      else reject(new Error(`admin create-workspace failed (${code}): ${out.slice(-2000)}`));
    }),
  );
}

/** The started service, for the kit's client (the service is a real process, so no `useTestStack()`). */
const service = () => ({ url: `http://127.0.0.1:${apiPort}` });

/** A deployed workflow: (start|webhook) → wait 2 s → transform echoing the input. */
async function deployedWaiter(token: string, trigger: 'start' | 'webhook'): Promise<{ id: string; webhookPath?: string }> {
  const graph = {
    name: `${trigger} waiter`,
    ...line(node.of(trigger, 'in'), node.wait('pause', 2), node.transform('echo', '$')),
  };
  const { workflowId, webhookPath } = await deployWorkflow({ app: service(), ws: { token } }, graph);
  return { id: workflowId, webhookPath: webhookPath ?? undefined };
}

async function runRows(workflowId: string): Promise<Array<{ status: string; n: number | null }>> {
  const client = new PgClient({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(`select status, (input->>'n')::int as n from runs where workflow_id = $1`, [workflowId]);
    return rows;
  } finally {
    await client.end();
  }
}

/**
 * Without OPERATOR_TOKEN or OPERATOR_EMAILS, `npm start` keeps an operator token in
 * DATA_DIR/operator-token, prints it on the start that created it only, and the codec endpoint
 * encrypts and decrypts for it, with CORS for the UI's origin (localhost on the UI port).
 */
async function expectOperatorAccessOutOfTheBox(start: Started, opts: { printsToken: boolean }): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!start.output().includes('Operators:') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const token = readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim();
  expect(start.output().includes(`operator token: ${token}`)).toBe(opts.printsToken);
  expect(start.output()).toContain('--codec-endpoint');
  const plain = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"hello"').toString('base64') };
  type Codec = { payloads: Array<typeof plain> };
  const encoded = await http<Codec>(service(), 'POST', '/api/temporal-codec/encode', { token, body: { payloads: [plain] } });
  expect(encoded.status).toBe(200);
  expect(Buffer.from(encoded.body.payloads[0]!.metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
  const origin = `http://localhost:${env.TEMPORAL_UI_PORT}`;
  const decoded = await http<Codec>(service(), 'POST', '/api/temporal-codec/decode', { token, body: encoded.body, headers: { origin } });
  expect(decoded.body.payloads).toEqual([plain]);
  expect(decoded.headers.get('access-control-allow-origin')).toBe(origin);
}

test('kill -9 of the service, then a start on the same DATA_DIR and ports comes back, and every accepted run and webhook completes once', async () => {
  const first = await startService(240_000);
  expect(await healthz()).toBe(200);
  const devServerPid = recordedDevServer();
  await expectOperatorAccessOutOfTheBox(first, { printsToken: true });

  // Work accepted just before the crash: executions (202) and webhook deliveries (202, outbox).
  const token = await adminWorkspace();
  const executed = await deployedWaiter(token, 'start');
  const hooked = await deployedWaiter(token, 'webhook');
  const ACCEPTED = 10;
  for (let n = 0; n < ACCEPTED; n++) expect((await client(service(), token).workflows.execute(executed.id, { n })).status).toBe(202);
  for (let n = 0; n < ACCEPTED; n++) expect((await client(service()).webhooks.invoke(hooked.webhookPath!, { n })).status).toBe(202);

  await killed(first.child);
  // The dev server dies with its parent (the watchdog), before anyone starts again.
  expect(await gone(devServerPid)).toBe(true);
  const second = await startService(120_000);
  expect(await healthz()).toBe(200);
  await expectOperatorAccessOutOfTheBox(second, { printsToken: false });
  // The first dev server went with its parent; the new one is a different process.
  const now = recordedDevServer();
  expect(now).not.toBe(devServerPid);

  // Every accepted execution and webhook becomes exactly one run, and each one finishes.
  const expected = Array.from({ length: ACCEPTED }, (_, n) => n);
  const deadline = Date.now() + 120_000;
  let rows: Array<{ status: string; n: number | null }> = [];
  for (;;) {
    rows = [...(await runRows(executed.id)), ...(await runRows(hooked.id))];
    if ((rows.length === 2 * ACCEPTED && rows.every((r) => r.status === 'succeeded')) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  expect(rows.filter((r) => r.status === 'succeeded')).toHaveLength(2 * ACCEPTED);
  expect((await runRows(executed.id)).map((r) => r.n).sort((a, b) => a! - b!)).toEqual(expected);
  expect((await runRows(hooked.id)).map((r) => r.n).sort((a, b) => a! - b!)).toEqual(expected);
  await killed(second.child);
  expect(await gone(now)).toBe(true);
});

test('a dev server that outlived its start (watchdog killed too) is stopped by the next start, which goes on', async () => {
  const first = await startService(240_000);
  const watchdogs = watchdogsOf(first.child.pid!);
  expect(watchdogs.length).toBeGreaterThan(0);
  for (const pid of watchdogs) process.kill(pid, 'SIGKILL');
  await killed(first.child);
  const stale = recordedDevServer();
  // No watchdog left: only the next start can clean it up. Unless the server writes a log line
  // first: its stdout was a pipe to the killed parent, so that write ends it (SIGPIPE), which
  // on a busy machine happens within seconds. Either way the next start must go on.
  const outlived = isRunning(stale);

  const second = await startService(120_000);
  expect(await healthz()).toBe(200);
  // Stopped by the second start (the signal is sent before it starts its own server; the
  // process may take a moment more to be gone).
  expect({ outlived, gone: await gone(stale) }).toEqual({ outlived, gone: true });
  const now = recordedDevServer();
  await killed(second.child);
  expect(await gone(now)).toBe(true);
});

test("a start that finds someone else's process on the Temporal port fails, naming the port and the process", async () => {
  env.TEMPORAL_PORT = String(await findFreePort());
  const squatter = net.createServer();
  await new Promise<void>((resolve, reject) => {
    squatter.once('error', reject);
    squatter.listen(Number(env.TEMPORAL_PORT), '127.0.0.1', resolve);
  });
  try {
    const result = await startFailing(120_000);
    expect(result.code).toBe(1);
    expect(result.output).toContain(`port 127.0.0.1:${env.TEMPORAL_PORT} is not free`);
    expect(result.output).toContain('not the dev server recorded in');
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
});
