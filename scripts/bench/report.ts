/** What every benchmark scenario shares: its context, settings from env, machine info, results files. */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const RESULTS_DIR = path.join(REPO_ROOT, 'bench-results');

export interface BenchContext {
  log(message: string): void;
  /** Throws once Ctrl-C (or SIGTERM) was received, so the scenario unwinds through its finally. */
  throwIfInterrupted(): void;
}

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
}

export function envList(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const list = raw.split(',').map((s) => Number(s.trim()));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n <= 0))
    throw new Error(`${name} must be a comma-separated list of positive integers, got ${JSON.stringify(raw)}`);
  return list;
}

/** Machine, runtime and source revision, for the results file; call it when the code under test is loaded. */
export async function benchEnvironment() {
  const cpus = os.cpus();
  const git = async (...args: string[]) => (await execFileP('git', args, { cwd: REPO_ROOT }).catch(() => ({ stdout: '' }))).stdout.trim();
  const commit = (await git('rev-parse', '--short', 'HEAD')) || 'unknown';
  // Tracked files that differ from the commit: what was measured is the working tree.
  const status = (
    await execFileP('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_ROOT }).catch(() => ({ stdout: '' }))
  ).stdout;
  const modified = status
    .split('\n')
    .filter((l) => l.length > 3)
    .map((l) => l.slice(3)); // "XY path
  return {
    machine: {
      cpuModel: cpus[0]?.model ?? 'unknown',
      cpuCount: cpus.length,
      totalMemoryBytes: os.totalmem(),
      totalMemoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    },
    node: process.version,
    git: { commit, dirtyWorkingTree: modified.length > 0, modifiedFiles: modified },
  };
}

/** Writes bench-results/<scenario>-<ISO timestamp>.json (colons replaced for portable file names). */
export async function writeResults(scenario: string, date: Date, data: unknown): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(
    RESULTS_DIR,
    `${scenario}-${date
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z')}.json`,
  );
  await writeFile(file, JSON.stringify(data, null, 2) + '\n');
  return path.relative(process.cwd(), file) || file;
}
