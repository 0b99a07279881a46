/**
 * Runs a local AI CLI: the configured executable with an argument array (never a shell), a
 * scrubbed environment (an allow-list plus what the session adds: HOME and XDG_CONFIG_HOME
 * pointing at the workspace's own configuration directory, and the session's token), a time
 * budget after which the whole process group is killed, and capped output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The only variables of the service's environment a CLI sees. */
export const CLI_ENV_ALLOW_LIST = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ'] as const;

const MAX_OUTPUT_BYTES = 1024 * 1024;

export interface CliInvocation {
  executable: string;
  args: string[];
  /** The workspace's configuration directory of this CLI (HOME of the process); need not exist yet. */
  configDir: string;
  /** Variables the session adds (a token); never taken from the service's environment. */
  extraEnv?: Record<string, string>;
  timeoutMs: number;
}

export type CliRunResult =
  | { kind: 'exited'; code: number | null; stdout: string; stderr: string }
  | { kind: 'timeout' }
  /** The executable could not be started (missing, not executable). */
  | { kind: 'notStarted' };

/** The environment of a CLI process: the allow-list of `source`, then HOME and XDG_CONFIG_HOME, then `extra`. */
export function cliEnvironment(
  configDir: string,
  extra: Record<string, string> = {},
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of CLI_ENV_ALLOW_LIST) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, HOME: configDir, XDG_CONFIG_HOME: path.join(configDir, '.config'), ...extra };
}

export async function isDirectory(dir: string): Promise<boolean> {
  return stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** Starts the CLI (no shell, own process group so a timeout can kill everything it started). */
export async function spawnCli(inv: Omit<CliInvocation, 'timeoutMs'>): Promise<ChildProcess> {
  const cwd = (await isDirectory(inv.configDir)) ? inv.configDir : os.tmpdir();
  return spawn(inv.executable, inv.args, {
    cwd,
    env: cliEnvironment(inv.configDir, inv.extraEnv),
    shell: false,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
}

/** Kills the CLI's process group (and the process itself when the group is gone). */
export function killCli(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/** Collects a stream's text up to the output cap (the rest is dropped). */
function collect(stream: NodeJS.ReadableStream | null): () => string {
  const chunks: Buffer[] = [];
  let size = 0;
  stream?.on('data', (chunk: Buffer) => {
    if (size >= MAX_OUTPUT_BYTES) return;
    chunks.push(chunk.subarray(0, MAX_OUTPUT_BYTES - size));
    size += chunk.length;
  });
  return () => Buffer.concat(chunks).toString('utf8');
}

/** Runs the CLI to its end or its time budget. Never rejects. */
export async function runCli(inv: CliInvocation): Promise<CliRunResult> {
  let child: ChildProcess;
  try {
    child = await spawnCli(inv);
  } catch {
    return { kind: 'notStarted' };
  }
  const stdout = collect(child.stdout);
  const stderr = collect(child.stderr);
  return new Promise<CliRunResult>((resolve) => {
    let settled = false;
    const settle = (result: CliRunResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => {
      killCli(child);
      settle({ kind: 'timeout' });
    }, inv.timeoutMs);
    child.once('error', () => settle({ kind: 'notStarted' }));
    child.once('close', (code) => settle({ kind: 'exited', code, stdout: stdout(), stderr: stderr() }));
  });
}
