/**
 * Keeps the servers `npm start` launches (Temporal dev server, embedded PostgreSQL) from
 * outliving it, and cleans up after a crash that outlived them anyway.
 *
 * - `watchParent()` starts a tiny detached watchdog (a `node -e` one-liner, so it runs the
 *   same under tsx and compiled JavaScript) that notices when this process dies — its stdin
 *   pipe from us reaches EOF, and, as a backup, its parent pid changes — and then signals the
 *   server (its whole process group when asked), escalating to SIGKILL after a grace period.
 *   Linux's PR_SET_PDEATHSIG is not reachable from Node; this is the portable equivalent.
 * - `writeOwnerRecord()` / `stopStaleServer()`: a pid file under DATA_DIR records which server
 *   we started, with its exact command line and our pid. A later start that finds the file
 *   stops the recorded server only when /proc shows that pid still runs that exact command
 *   line (a recycled pid is left alone) and the recorded owner is gone (a live `npm start` on
 *   the same DATA_DIR is reported, not killed).
 *
 * Caveat: the /proc checks are Linux-only; elsewhere a stale record is reported, not acted on.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

// argv: parentPid targetPid group(1|0) signal graceMs
const WATCHDOG = `
const [parent, target, group, sig, grace] = process.argv.slice(1);
const targetPid = Number(target), useGroup = group === '1', graceMs = Number(grace);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; } };
const send = (s) => { try { process.kill(useGroup ? -targetPid : targetPid, s); } catch {} };
for (const s of ['SIGINT', 'SIGHUP', 'SIGTERM']) process.on(s, () => {});
let fired = false;
const fire = () => {
  if (fired) return;
  fired = true;
  send(sig);
  const since = Date.now();
  setInterval(() => {
    if (!alive(targetPid)) process.exit(0);
    if (Date.now() - since > graceMs) { send('SIGKILL'); process.exit(0); }
  }, 100);
};
process.stdin.on('end', fire);
process.stdin.on('error', fire);
process.stdin.resume();
setInterval(() => {
  if (fired) return;
  if (!alive(targetPid)) process.exit(0);
  if (process.ppid !== Number(parent)) fire();
}, 500);
`;

export interface Watchdog {
  pid: number;
  /** Ends the watch without signalling the server (call after stopping it yourself). */
  dispose(): void;
}

/** Signals `targetPid` (or its process group) when this process dies, by any means. */
export function watchParent(targetPid: number, opts: { group: boolean; signal: NodeJS.Signals; graceMs: number }): Watchdog {
  const child = spawn(
    process.execPath,
    ['-e', WATCHDOG, String(process.pid), String(targetPid), opts.group ? '1' : '0', opts.signal, String(opts.graceMs)],
    {
      detached: true, // its own process group: a Ctrl-C meant for us does not kill the watch first
      stdio: ['pipe', 'ignore', 'ignore'],
    },
  );
  child.on('error', () => {});
  child.stdin!.on('error', () => {});
  // Neither the watchdog nor its pipe may keep this process alive.
  child.unref();
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  return {
    pid: child.pid ?? -1,
    dispose: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

interface OwnerRecord {
  /** The server's pid. */
  pid: number;
  /** Its command line as /proc/<pid>/cmdline shows it (NUL-separated). */
  cmdline: string;
  /** The `npm start` process that started it. */
  ownerPid: number;
  ownerCmdline: string;
}

/** /proc/<pid>/cmdline, or null when the process is gone or /proc is not there. */
export function procCmdline(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Records that this process started server `pid`. `argv` is the command line we spawned it with,
 * recorded as such: right after spawn() /proc can still show our own command line (the child
 * has forked but not yet exec'd), and a record of that would make a later start take the stale
 * server for someone else's. Without `argv` (a server whose pid we learned later) it is read
 * from /proc.
 */
export async function writeOwnerRecord(file: string, pid: number, argv: string[]): Promise<void> {
  const record: OwnerRecord = {
    pid,
    cmdline: argv.length > 0 ? argv.join('\0') + '\0' : (procCmdline(pid) ?? ''),
    ownerPid: process.pid,
    ownerCmdline: procCmdline(process.pid) ?? '',
  };
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(record) + '\n');
}

export async function removeOwnerRecord(file: string): Promise<void> {
  await rm(file, { force: true });
}

/**
 * Stops the server recorded in `file` if it outlived the process that started it; resolves to
 * a sentence for the log when it did, null when there was nothing to stop. Throws at once when
 * the recorded owner is still running (another start on the same data folder).
 */
export async function stopStaleServer(
  file: string,
  opts: { what: string; group: boolean; signal: NodeJS.Signals; graceMs?: number },
): Promise<string | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  let record: OwnerRecord;
  try {
    record = JSON.parse(text) as OwnerRecord;
  } catch {
    await removeOwnerRecord(file);
    return null;
  }
  const running = procCmdline(record.pid);
  if (running === null || running !== record.cmdline) {
    // Gone, or the pid now belongs to some other program: nothing of ours to stop.
    await removeOwnerRecord(file);
    return null;
  }
  if (record.ownerPid !== process.pid && isAlive(record.ownerPid) && procCmdline(record.ownerPid) === record.ownerCmdline) {
    throw new Error(
      `${opts.what} (pid ${record.pid}) belongs to another running start (pid ${record.ownerPid}) using the same data folder; stop that one first.`,
    );
  }
  const target = opts.group ? -record.pid : record.pid;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(target, s);
    } catch {
      /* already gone */
    }
  };
  signal(opts.signal);
  const deadline = Date.now() + (opts.graceMs ?? 10_000);
  while (isAlive(record.pid) && procCmdline(record.pid) === record.cmdline) {
    if (Date.now() > deadline) {
      signal('SIGKILL');
      await new Promise((r) => setTimeout(r, 500));
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await removeOwnerRecord(file);
  return `Stopped a stale ${opts.what} (pid ${record.pid}) left by an earlier start that did not shut down`;
}
