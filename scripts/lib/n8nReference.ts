/**
 * Reference outputs from n8n itself, for the migration benchmark (scripts/bench/migration.ts).
 *
 * A pinned n8n 1.x (the npm package; 1.x runs on Node 20) is installed into
 * `<cache>/<version>` (~/.cache/svc-n8n by default, N8N_CACHE moves it) with
 * `npm install --prefix`: it is a tool of this script, never a dependency of the product, and
 * nothing of it is imported by our code. It runs headless: `n8n import:workflow` then
 * `n8n execute-batch --snapshot`, on a throwaway PostgreSQL database of the local server
 * (127.0.0.1:5432) because its SQLite driver is native and the install skips install scripts.
 * Telemetry, version checks and templates are off, and every proxy-aware outbound request is
 * sent to a closed loopback port, so the corpus filter (only offline node types) is not the
 * only guard.
 *
 * What is recorded per export (`<cache>/references/<version>/<sha256 of the export>.json`): the
 * run's status, its error, and per node the `json` of every item of every output of every run.
 * n8n's batch runner writes node data only for runs that succeeded; a failed run is recorded
 * with its error and no nodes, so it is compared by status alone.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDatabase, dropDatabase } from './postgres';
import { n8nCacheRoot, sha256 } from './n8nCorpus';
import type { N8nNodeRecord, N8nReference } from './n8nParity';

/** The n8n release references are recorded with; a change re-records everything. */
export const N8N_VERSION = '1.123.81';

/**
 * The registry's n8n 1.x depends on `xlsx` by a URL of cdn.sheetjs.com, which this machine
 * cannot reach; the registry's last `xlsx` stands in (only the spreadsheet nodes use it, none of
 * them is in the offline corpus).
 */
const OVERRIDES = { xlsx: '0.18.5' };

const LOCAL_PG = 'postgres://postgres@127.0.0.1:5432';

export interface StoredReference extends N8nReference {
  n8nVersion: string;
  key: string;
  recordedAt: string;
}

export function referencesDir(version = N8N_VERSION): string {
  return path.join(n8nCacheRoot(), 'references', version);
}

export function referenceFile(exportText: string, version = N8N_VERSION): string {
  return path.join(referencesDir(version), `${sha256(exportText)}.json`);
}

export async function readReference(exportText: string): Promise<StoredReference | null> {
  const file = referenceFile(exportText);
  if (!existsSync(file)) return null;
  return JSON.parse(await readFile(file, 'utf8')) as StoredReference;
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; log?: (m: string) => void }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-200_000)));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-200_000)));
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          opts.log?.(`${path.basename(cmd)} ${args[0] ?? ''}: no end after ${opts.timeoutMs} ms, stopping it`);
          child.kill('SIGTERM');
        }, opts.timeoutMs)
      : null;
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

/**
 * The n8n binary of {@link N8N_VERSION}, installed into the cache first if needed (several
 * minutes and about 1.5 GB the first time). `N8N_BIN` overrides the lookup.
 *
 * Caveats: `--ignore-scripts` leaves native modules unbuilt (SQLite, isolated-vm), hence
 * PostgreSQL; an install interrupted half-way is detected by the missing binary and redone.
 */
export async function ensureN8n(log: (m: string) => void = () => {}): Promise<string> {
  if (process.env.N8N_BIN) {
    if (!existsSync(process.env.N8N_BIN)) throw new Error(`N8N_BIN=${process.env.N8N_BIN} does not exist`);
    return process.env.N8N_BIN;
  }
  const prefix = path.join(n8nCacheRoot(), N8N_VERSION);
  const bin = path.join(prefix, 'node_modules', 'n8n', 'bin', 'n8n');
  if (existsSync(bin)) return bin;
  await mkdir(prefix, { recursive: true });
  await writeFile(
    path.join(prefix, 'package.json'),
    JSON.stringify({ name: 'svc-n8nReference', private: true, overrides: OVERRIDES }, null, 2) + '\n',
  );
  log(`installing n8n ${N8N_VERSION} into ${prefix} (first time: several minutes)`);
  const res = await run(
    'npm',
    ['install', '--prefix', prefix, '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', `n8n@${N8N_VERSION}`],
    { log },
  );
  if (res.code !== 0 || !existsSync(bin))
    throw new Error(`npm install n8n@${N8N_VERSION} failed (${res.code}): ${res.stderr.slice(-2000)}`);
  return bin;
}

/** n8n's environment: a private user folder and database, nothing reaching out. */
function n8nEnv(userFolder: string, database: string): NodeJS.ProcessEnv {
  const deadProxy = 'http://127.0.0.1:9';
  return {
    PATH: process.env.PATH,
    HOME: userFolder,
    TZ: 'UTC',
    GENERIC_TIMEZONE: 'UTC',
    N8N_USER_FOLDER: userFolder,
    N8N_ENCRYPTION_KEY: 'svc-n8nReference-not-a-secret',
    DB_TYPE: 'postgresdb',
    DB_POSTGRESDB_HOST: '127.0.0.1',
    DB_POSTGRESDB_PORT: '5432',
    DB_POSTGRESDB_USER: 'postgres',
    DB_POSTGRESDB_PASSWORD: '',
    DB_POSTGRESDB_DATABASE: database,
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_TEMPLATES_ENABLED: 'false',
    N8N_PERSONALIZATION_ENABLED: 'false',
    N8N_HIRING_BANNER_ENABLED: 'false',
    N8N_COMMUNITY_PACKAGES_ENABLED: 'false',
    N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
    N8N_BLOCK_ENV_ACCESS_IN_NODE: 'true',
    N8N_LOG_LEVEL: 'warn',
    // 1.123's default "vm" engine needs isolated-vm, a native module the install does not build
    // (and whose release wants Node 22); "legacy" is the engine of every earlier 1.x release.
    N8N_EXPRESSION_ENGINE: 'legacy',
    EXTERNAL_FRONTEND_HOOKS_URLS: '',
    HTTP_PROXY: deadProxy,
    HTTPS_PROXY: deadProxy,
    http_proxy: deadProxy,
    https_proxy: deadProxy,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
}

/**
 * What n8n imports: the export as a user would import it, made runnable by the CLI — its own id
 * (the corpus reuses ids), inactive, without pinned data (live executions ignore it, as our live
 * runs do), without tags (an export's tags name tag rows of its own instance, which the import
 * refuses) and without node notes (the batch runner reads `KEY=value` lines of notes as
 * instructions to trim its output).
 */
export function forN8nImport(exported: Record<string, unknown>, id: string): Record<string, unknown> {
  const nodes = Array.isArray(exported.nodes)
    ? (exported.nodes as Array<Record<string, unknown>>).map(({ notes: _notes, ...rest }) => rest)
    : exported.nodes;
  const { pinData: _pin, tags: _tags, ...rest } = exported;
  return { ...rest, id, active: false, nodes, name: typeof exported.name === 'string' && exported.name ? exported.name : id };
}

interface RunDataTask {
  data?: { main?: Array<Array<{ json?: unknown }> | null> };
  error?: { message?: string } | null;
}

/** n8n's `resultData.runData` as {@link N8nReference.nodes}. */
export function nodesFromRunData(runData: Record<string, RunDataTask[]>): Record<string, N8nNodeRecord> {
  const nodes: Record<string, N8nNodeRecord> = {};
  for (const [name, tasks] of Object.entries(runData)) {
    nodes[name] = {
      runs: tasks.map((t) => ({
        outputs: (t.data?.main ?? []).map((items) => (items ?? []).map((item) => item.json ?? {})),
        ...(t.error ? { error: t.error.message ?? 'error' } : {}),
      })),
    };
  }
  return nodes;
}

/**
 * Runs the given exports on n8n and stores one reference per export (keyed by the SHA-256 of
 * its text). Returns how many were recorded; exports that n8n could not import or run are
 * recorded as failed runs with n8n's message; those n8n refuses to import get none (`refused`).
 */
export async function recordReferences(
  exports: Array<{ key: string; text: string }>,
  log: (m: string) => void = () => {},
): Promise<{ recorded: number; failed: number; refused: number }> {
  if (exports.length === 0) return { recorded: 0, failed: 0, refused: 0 };
  const bin = await ensureN8n(log);
  const work = await mkdtemp(path.join(os.tmpdir(), 'svc-n8n-ref-'));
  const database = `svc_n8n_ref_${randomBytes(5).toString('hex')}`;
  const dbUrl = `${LOCAL_PG}/${database}`;
  await createDatabase(dbUrl);
  try {
    const env = n8nEnv(path.join(work, 'user'), database);
    const input = path.join(work, 'input');
    const snapshots = path.join(work, 'snapshots');
    await Promise.all([
      mkdir(input, { recursive: true }),
      mkdir(snapshots, { recursive: true }),
      mkdir(env.N8N_USER_FOLDER!, { recursive: true }),
    ]);
    const ids = exports.map((_, i) => `svcref${String(i).padStart(6, '0')}`);
    await Promise.all(
      exports.map((e, i) => writeFile(path.join(input, `${ids[i]}.json`), JSON.stringify(forN8nImport(JSON.parse(e.text), ids[i])))),
    );
    log(`n8n ${N8N_VERSION}: importing ${exports.length} workflow(s)`);
    const importArgs = (from: string) => [bin, 'import:workflow', ...(from === input ? ['--separate'] : []), `--input=${from}`];
    const imported = await run(process.execPath, importArgs(input), { env, timeoutMs: 600_000, log });
    // One export n8n refuses fails the whole import: then each alone (slow, n8n boots each
    // time), and those it refuses get no reference, so they are not compared at all.
    const importable = new Set(ids);
    if (imported.code !== 0) {
      log(`n8n import of the batch failed; importing one by one: ${(imported.stdout + imported.stderr).slice(-500)}`);
      for (let i = 0; i < ids.length; i++) {
        const one = await run(process.execPath, importArgs(path.join(input, `${ids[i]}.json`)), { env, timeoutMs: 120_000, log });
        if (one.code === 0) continue;
        importable.delete(ids[i]);
        log(`n8n refuses ${exports[i].key}: ${(one.stdout + one.stderr).trim().split('\n').slice(-2).join(' ').slice(0, 300)}`);
      }
      if (importable.size === 0) return { recorded: 0, failed: 0, refused: ids.length };
    }
    const idsFile = path.join(work, 'ids.txt');
    await writeFile(idsFile, ids.filter((id) => importable.has(id)).join(','));
    const output = path.join(work, 'output.json');
    log(`n8n ${N8N_VERSION}: executing ${importable.size} workflow(s) (execute-batch)`);
    const executed = await run(
      process.execPath,
      [bin, 'execute-batch', `--ids=${idsFile}`, `--snapshot=${snapshots}`, `--output=${output}`, '--concurrency=1'],
      { env, timeoutMs: 60_000 + importable.size * 30_000, log },
    );
    if (!existsSync(output))
      throw new Error(`n8n execute-batch wrote no results (${executed.code}): ${(executed.stderr || executed.stdout).slice(-3000)}`);
    const results = JSON.parse(await readFile(output, 'utf8')) as {
      executions?: Array<{ workflowId: string; executionStatus: string; error?: string }>;
    };
    const byId = new Map((results.executions ?? []).map((r) => [r.workflowId, r]));
    const snapshotFiles = new Set(await readdir(snapshots));
    await mkdir(referencesDir(), { recursive: true });
    let recorded = 0;
    let failed = 0;
    for (let i = 0; i < exports.length; i++) {
      if (!importable.has(ids[i])) continue;
      const result = byId.get(ids[i]);
      const snapshot = `${ids[i]}-snapshot.json`;
      let reference: N8nReference;
      if (snapshotFiles.has(snapshot)) {
        const data = JSON.parse(await readFile(path.join(snapshots, snapshot), 'utf8')) as {
          data: { resultData: { runData: Record<string, RunDataTask[]> } };
        };
        reference = { status: 'success', error: null, nodes: nodesFromRunData(data.data.resultData.runData) };
        recorded++;
      } else {
        reference = { status: 'error', error: result?.error ?? 'n8n did not run it (not in execute-batch results)', nodes: {} };
        failed++;
      }
      const stored: StoredReference = { ...reference, n8nVersion: N8N_VERSION, key: exports[i].key, recordedAt: new Date().toISOString() };
      await writeFile(referenceFile(exports[i].text), JSON.stringify(stored, null, 1) + '\n');
    }
    return { recorded, failed, refused: ids.length - importable.size };
  } finally {
    await dropDatabase(dbUrl).catch((err: unknown) =>
      log(`dropping ${database} failed: ${err instanceof Error ? err.message : String(err)}`),
    );
    await rm(work, { recursive: true, force: true });
  }
}
