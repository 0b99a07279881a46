/**
 * Optional CPU attribution for benchmarks (Linux only): reads utime+stime of processes from
 * /proc/<pid>/stat at the start and end of a phase and reports each group's CPU as a percentage
 * of one core over the phase's wall time (200 % = both cores of a 2-core machine). This is
 * what `ps -o pid,pcpu,comm` would give per interval; `ps` itself averages over the whole
 * process lifetime, which hides phases.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

export interface CpuGroups {
  /** Group name → pids; a function is re-evaluated at every sample (processes come and go). */
  [group: string]: () => number[];
}

export interface CpuSample {
  at: number;
  /** Threads of the processes given to sampleCpu's `threadsOf`: tid → name and ticks. */
  threads: Map<number, { name: string; ticks: number }>;
  /** pid → ticks (utime + stime) */
  ticks: Map<number, number>;
  groups: Record<string, number[]>;
  /** Whole machine: busy and total jiffies from /proc/stat. */
  system: { busy: number; total: number } | null;
}

/** Group → % of one core; `system` is the machine's busy share, `other` what no group explains. */
export type CpuUsage = Record<string, number>;

let clockTicks: number | null = null;
function ticksPerSecond(): number {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

export function cpuSamplingSupported(): boolean {
  try {
    readFileSync('/proc/self/stat', 'utf8');
    return true;
  } catch {
    return false;
  }
}

function processTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; fields after it start past the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
  } catch {
    return null;
  }
}

function systemTicks(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0); // user..steal (guest is already in user)
    const idle = v[3] + (v[4] ?? 0); // idle + iowait
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** Pids whose command name is `comm` (e.g. every `postgres` process of the machine). */
export function pidsByComm(comm: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) out.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** A pid and all its descendants (for process trees such as the Temporal CLI). */
export function pidTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      /* gone */
    }
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * Threads of a process by name (`comm`); the main thread (tid = pid) is "main", so for a Node
 * process it is the event loop. Worker threads, libuv's pool and native (e.g. Temporal core)
 * threads keep their own names.
 */
function threadTicks(pid: number, into: CpuSample['threads']): void {
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      into.set(Number(tid), { name: Number(tid) === pid ? 'main' : comm, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      /* gone */
    }
  }
}

export function sampleCpu(groups: CpuGroups, threadsOf: number[] = []): CpuSample {
  const threads: CpuSample['threads'] = new Map();
  for (const pid of threadsOf) threadTicks(pid, threads);
  const resolved: Record<string, number[]> = {};
  const ticks = new Map<number, number>();
  for (const [name, pidsOf] of Object.entries(groups)) {
    let pids: number[] = [];
    try {
      pids = pidsOf();
    } catch {
      /* group unavailable */
    }
    resolved[name] = pids;
    for (const pid of pids) {
      if (ticks.has(pid)) continue;
      const t = processTicks(pid);
      if (t !== null) ticks.set(pid, t);
    }
  }
  return { at: Date.now(), threads, ticks, groups: resolved, system: systemTicks() };
}

/**
 * CPU per group between two samples, in % of one core. A pid that appears only in the later
 * sample started during the phase and counts from zero; one that disappeared is lost.
 * Groups may overlap (e.g. "postgres: bench db" within "postgres: all"); `other` subtracts only
 * the groups listed in `disjoint`.
 */
export function cpuBetween(a: CpuSample, b: CpuSample, disjoint: string[]): CpuUsage {
  const seconds = (b.at - a.at) / 1000;
  const hz = ticksPerSecond();
  const usage: CpuUsage = {};
  if (seconds <= 0) return usage;
  for (const [name, pids] of Object.entries(b.groups)) {
    let delta = 0;
    for (const pid of new Set(pids)) {
      const end = b.ticks.get(pid);
      if (end === undefined) continue;
      delta += end - (a.ticks.get(pid) ?? 0);
    }
    usage[name] = (delta / hz / seconds) * 100;
  }
  if (a.system && b.system && b.system.total > a.system.total) {
    const cores = (b.system.total - a.system.total) / hz / seconds; // ≈ number of CPUs
    usage.system = ((b.system.busy - a.system.busy) / hz / seconds) * 100;
    usage.systemCapacity = cores * 100;
    usage.other = usage.system - disjoint.reduce((sum, g) => sum + (usage[g] ?? 0), 0);
  }
  return usage;
}

/** CPU per thread name between two samples, in % of one core, busiest first. */
export function threadsBetween(a: CpuSample, b: CpuSample): Record<string, number> {
  const seconds = (b.at - a.at) / 1000;
  if (seconds <= 0) return {};
  const byName = new Map<string, number>();
  for (const [tid, t] of b.threads) {
    const delta = t.ticks - (a.threads.get(tid)?.ticks ?? 0);
    byName.set(t.name, (byName.get(t.name) ?? 0) + delta);
  }
  const hz = ticksPerSecond();
  return Object.fromEntries(
    [...byName.entries()]
      .map(([name, ticks]) => [name, (ticks / hz / seconds) * 100] as const)
      .filter(([, pct]) => pct >= 0.5)
      .sort((x, y) => y[1] - x[1]),
  );
}
