/**
 * CPU profiles of a benchmark, cut to its measured windows.
 *
 * `BENCH_PROFILE=<dir> npm run bench -- <scenario>` runs the benchmark under `node --cpu-prof`
 * (Node 20 refuses the flag in NODE_OPTIONS, so bench.ts starts itself again with it), and so
 * does every Node process the benchmark spawns (spawnTsProcess). Each thread of each process
 * writes its own `.cpuprofile` at exit. Scenarios mark what they measure with `profileWindow`;
 * the marks are taken on the monotonic clock V8 also stamps its samples with, so one summary per
 * window and thread counts only the samples taken inside it, not start-up or drain.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** The directory profiles go to while a profiled benchmark runs; null when not profiling. */
export function activeProfileDir(): string | null {
  return process.env.BENCH_PROFILE_ACTIVE === '1' && process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : null;
}

/** Node flags that make a child process write its profiles beside the benchmark's own. */
export function profileNodeArgs(): string[] {
  const dir = activeProfileDir();
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

interface Window {
  label: string;
  startUs: number;
  endUs: number;
}
const windows: Window[] = [];
const processNames: Record<string, string> = {};
let flushRegistered = false;

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

function registerFlush(): void {
  if (flushRegistered) return;
  flushRegistered = true;
  process.on('exit', () => {
    const dir = activeProfileDir();
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `windows-${process.pid}.json`), JSON.stringify({ windows, processNames }, null, 2));
  });
}

/** Names a profiled process in the summary (its pid is in each profile's file name). */
export function nameProfiledProcess(pid: number, name: string): void {
  if (!activeProfileDir()) return;
  registerFlush();
  processNames[String(pid)] = name;
}

/** Starts a measured window; call the returned function when it ends. No-op unless profiling. */
export function profileWindow(label: string): () => void {
  if (!activeProfileDir()) return () => undefined;
  registerFlush();
  const startUs = nowUs();
  return () => void windows.push({ label, startUs, endUs: nowUs() });
}

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ThreadSummary {
  file: string;
  process: string;
  thread: string;
  /** Non-idle CPU time sampled inside the window, ms, and as % of one core over the window. */
  busyMs: number;
  busyPercentOfOneCore: number;
  /** Self time by where the code comes from (package, our folder, node core, GC, V8). */
  categories: Array<{ category: string; ms: number; percentOfBusy: number }>;
  /** The functions with the most self time. */
  topFunctions: Array<{ fn: string; at: string; category: string; ms: number; percentOfBusy: number }>;
  /** Our own functions (outside node_modules) by inclusive time: what they and all they call cost. */
  topOursInclusive: Array<{ fn: string; at: string; ms: number; percentOfBusy: number }>;
}

/** Where a frame's code comes from: an npm package, one of our top-level folders, node core, V8. */
export function categoryOf(frame: { functionName: string; url: string }): string {
  const { functionName, url } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'V8 (program)';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(root)') return 'root';
  if (!url) return 'V8 builtins';
  if (url.startsWith('node:')) {
    const parts = url.slice(5).split('/');
    return `node:${parts[0] === 'internal' ? (parts[1] ?? 'internal') : parts[0]}`;
  }
  const file = url.startsWith('file://') ? decodeURIComponent(url.slice(7)) : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  // The worker evaluates its workflow bundle in a vm context under this name.
  if (/workflow-bundle|webpack/.test(file)) return 'workflow bundle';
  if (file.startsWith(REPO_ROOT + '/')) return `ours: ${file.slice(REPO_ROOT.length + 1).split('/')[0]}/`;
  return `other: ${path.basename(file)}`;
}

/** One thread's profile cut to [startUs, endUs]. */
export function summarizeThread(
  profile: CpuProfile,
  window: { startUs: number; endUs: number },
  top = 15,
): Omit<ThreadSummary, 'file' | 'process' | 'thread'> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    if (t < window.startUs || t > window.endUs) continue;
    // A sample stands for the time until the next one.
    const dt = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1] : 0;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
  }
  const categories = new Map<string, number>();
  const functions = new Map<string, { fn: string; at: string; category: string; us: number }>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    const category = categoryOf(frame);
    if (category === 'idle' || category === 'root') continue;
    busyUs += us;
    categories.set(category, (categories.get(category) ?? 0) + us);
    const at = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
    const key = `${frame.functionName}@${at}`;
    const f = functions.get(key) ?? { fn: frame.functionName || '(anonymous)', at, category, us: 0 };
    f.us += us;
    functions.set(key, f);
  }
  // Inclusive time of our own frames: each sample credits every distinct one of ours on its stack once.
  const ours = new Map<string, { fn: string; at: string; us: number }>();
  for (const [id, us] of selfUs) {
    const category = categoryOf(byId.get(id)!.callFrame);
    if (category === 'idle' || category === 'root') continue;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parentOf.get(cur)) {
      const frame = byId.get(cur)!.callFrame;
      if (!categoryOf(frame).startsWith('ours: ')) continue;
      const at = `${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
      const key = `${frame.functionName}@${at}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const o = ours.get(key) ?? { fn: frame.functionName || '(anonymous)', at, us: 0 };
      o.us += us;
      ours.set(key, o);
    }
  }
  const pct = (us: number) => (busyUs > 0 ? Math.round((us / busyUs) * 1000) / 10 : 0);
  const ms = (us: number) => Math.round(us / 100) / 10;
  return {
    busyMs: ms(busyUs),
    busyPercentOfOneCore: Math.round((busyUs / Math.max(1, window.endUs - window.startUs)) * 1000) / 10,
    categories: [...categories.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([category, us]) => ({ category, ms: ms(us), percentOfBusy: pct(us) })),
    topFunctions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ fn: f.fn, at: f.at, category: f.category, ms: ms(f.us), percentOfBusy: pct(f.us) })),
    topOursInclusive: [...ours.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((o) => ({ fn: o.fn, at: o.at, ms: ms(o.us), percentOfBusy: pct(o.us) })),
  };
}

function shortUrl(url: string): string {
  const file = url.startsWith('file://') ? decodeURIComponent(url.slice(7)) : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) return file.slice(nm + '/node_modules/'.length);
  return file.startsWith(REPO_ROOT + '/') ? file.slice(REPO_ROOT.length + 1) : file;
}

/**
 * Every profile in `dir` cut to every window the benchmark marked: per window, the threads
 * that were busy in it (at least 1 % of a core), busiest first.
 */
export function summarizeProfileDir(dir: string): Array<{ window: string; durationMs: number; threads: ThreadSummary[] }> {
  const files = readdirSync(dir);
  const marks = files
    .filter((f) => /^windows-\d+\.json$/.test(f))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { windows: Window[]; processNames: Record<string, string> });
  const names: Record<string, string> = Object.assign({}, ...marks.map((m) => m.processNames));
  const allWindows = marks.flatMap((m) => m.windows);
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
  const profiles = files
    .map((f) => ({ f, m: /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(f) }))
    .filter((x): x is { f: string; m: RegExpExecArray } => x.m !== null)
    .map(({ f, m }) => ({
      file: f,
      pid: m[1],
      thread: m[2] === '0' ? 'main' : `worker thread ${m[2]}`,
      profile: JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as CpuProfile,
    }));
  return allWindows.map((w) => ({
    window: w.label,
    durationMs: Math.round((w.endUs - w.startUs) / 1000),
    threads: profiles
      .filter((p) => p.profile.startTime <= w.endUs && p.profile.endTime >= w.startUs)
      .map((p) => ({ file: p.file, process: names[p.pid] ?? `pid ${p.pid}`, thread: p.thread, ...summarizeThread(p.profile, w) }))
      .filter((s) => s.busyPercentOfOneCore >= 1)
      .sort((a, b) => b.busyMs - a.busyMs),
  }));
}

/** The summary as text: per window and thread, categories and top functions. */
export function formatProfileSummary(summary: ReturnType<typeof summarizeProfileDir>, topCategories = 12, topFunctions = 10): string {
  const out: string[] = [];
  for (const w of summary) {
    out.push(`== ${w.window} (${w.durationMs} ms)`);
    for (const t of w.threads) {
      out.push(`-- ${t.process}, ${t.thread}: ${t.busyPercentOfOneCore} % of a core (${t.busyMs} ms busy)`);
      out.push(
        '   by origin: ' +
          t.categories
            .slice(0, topCategories)
            .map((c) => `${c.category} ${c.percentOfBusy} %`)
            .join(', '),
      );
      for (const f of t.topFunctions.slice(0, topFunctions)) out.push(`   ${String(f.percentOfBusy).padStart(5)} %  ${f.fn}  ${f.at}`);
      if (t.topOursInclusive.length)
        out.push(
          '   ours, inclusive: ' +
            t.topOursInclusive
              .slice(0, topFunctions)
              .map((o) => `${o.fn} (${o.at}) ${o.percentOfBusy} %`)
              .join('; '),
        );
    }
    out.push('');
  }
  return out.join('\n');
}

// `tsx scripts/bench/profile.ts <dir>` summarizes a profiled benchmark's directory again.
if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: tsx scripts/bench/profile.ts <profile dir>\n');
    process.exit(2);
  }
  process.stdout.write(formatProfileSummary(summarizeProfileDir(dir)));
}
