import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SANDBOX_DEFAULTS, type SandboxLimits, type SandboxOptions, type SandboxResult } from './sandboxEngine';
import type { SandboxTask, SandboxThreadMessage } from './sandboxThread';

export {
  LOG_MAX_ENTRIES,
  LOG_MESSAGE_MAX_BYTES,
  SANDBOX_DEFAULTS,
  type SandboxErrorKind,
  type SandboxLog,
  type SandboxLogLevel,
  type SandboxOptions,
  type SandboxResult,
} from './sandboxEngine';

/**
 * Runs user-supplied JavaScript (the code node) off the main thread.
 *
 * The QuickJS executor (services/sandboxEngine.ts) runs in a small pool of worker threads, one
 * call per thread at a time, so the API's and the worker's event loop never run guest code. The
 * QuickJS interrupt and memory limit inside are the first line; the hard line is outside: when a
 * call is handed to a thread, a wall-clock timer of `timeoutMs + KILL_GRACE_MS` starts, and if
 * the thread has not answered by then (an `async` function swallowing the interrupt, microtask
 * loops, GC-bound allocation loops) it is terminated and replaced, and the call fails as kind
 * `timeout` with the same message the interrupt gives. Time spent queued for a free thread is
 * not charged to the call.
 *
 * The pool is created on first use, once per process, and closed by `closeSandboxPool()` on
 * shutdown (API stop, worker stop). Idle threads do not keep the process alive.
 */

/**
 * Threads in the pool: the CPU count, at least 4 and at most 8. Spinning guests cannot starve the
 * main thread (the OS schedules it fairly), and at least 4 keeps a burst of ten 1 s code nodes
 * (three waves) well inside the code activity's start-to-close timeout of 6 s.
 */
export const SANDBOX_THREADS = Math.max(4, Math.min(8, availableParallelism()));
/**
 * Head start of the inner interrupt over the outer kill, so ordinary timeouts keep the guest's logs.
 * 500 ms leaves a busy machine room for the thread to notice its interrupt (200 ms lost the logs at a
 * load of 8 on 2 cores) and keeps three waves of 1 s calls (4.5 s) inside the 6 s activity timeout.
 */
export const KILL_GRACE_MS = 500;
/** V8 heap of one sandbox thread (the QuickJS heap is WASM memory, bounded by `memoryLimitBytes`). */
const THREAD_HEAP_MB = 256;

function checkPositive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`runUserCode: ${name} must be a positive number`);
  return value;
}

/**
 * Runs `source` as the body of `async function (input, console) { ... }` in a fresh QuickJS
 * runtime on a sandbox thread and returns its JSON-serialisable result.
 *
 * - `input` is a deep copy (JSON round trip) of the given value; it must be JSON-serialisable
 *   (otherwise this throws a TypeError: that is a caller bug, not a guest error).
 * - The return value goes through the guest's original `JSON.stringify`; `undefined` becomes
 *   `null`; more than `maxOutputBytes` (or a value that cannot be serialised) is kind `output`.
 * - `console.log/info/warn/error/debug` are captured (log → info); each message is cut to
 *   2 KB, and only the first 100 entries are kept. A call stopped by the outer deadline loses its logs.
 * - Awaiting a promise that can never settle ends as kind `timeout` at once: the guest has no
 *   timers or I/O, so once its job queue is empty nothing can resolve it.
 * - A call never takes longer than `timeoutMs + KILL_GRACE_MS` once it holds a thread.
 * - Error messages are the guest's `Name: message (line N)`, with lines counted in `source`;
 *   host stack traces are never included.
 */
export async function runUserCode(source: string, input: unknown, opts: SandboxOptions = {}): Promise<SandboxResult> {
  const limits: SandboxLimits = {
    timeoutMs: checkPositive('timeoutMs', opts.timeoutMs ?? SANDBOX_DEFAULTS.timeoutMs),
    memoryLimitBytes: checkPositive('memoryLimitBytes', opts.memoryLimitBytes ?? SANDBOX_DEFAULTS.memoryLimitBytes),
    maxStackBytes: checkPositive('maxStackBytes', opts.maxStackBytes ?? SANDBOX_DEFAULTS.maxStackBytes),
    maxOutputBytes: checkPositive('maxOutputBytes', opts.maxOutputBytes ?? SANDBOX_DEFAULTS.maxOutputBytes),
  };
  if (typeof source !== 'string') throw new TypeError('runUserCode: source must be a string');
  let inputJson: string | undefined;
  try {
    inputJson = JSON.stringify(input);
  } catch (err) {
    throw new TypeError(`runUserCode: input is not JSON-serialisable (${(err as Error).message})`);
  }
  pool ??= new SandboxPool(SANDBOX_THREADS);
  return pool.run(source, inputJson, limits);
}

/** Closes the pool: calls already made finish (within their deadlines), then the threads end. A later call starts a new pool. */
export async function closeSandboxPool(): Promise<void> {
  const current = pool;
  pool = undefined;
  await current?.close();
}

let pool: SandboxPool | undefined;

interface Pending {
  source: string;
  inputJson: string | undefined;
  limits: SandboxLimits;
  resolve(result: SandboxResult): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  task?: Pending & { id: number; timer: NodeJS.Timeout };
}

/** The entry of a sandbox thread: compiled JavaScript next to this file, or the TypeScript source through a tsx bootstrap. */
function threadEntry(): { filename: string; workerData?: { entry: string } } {
  if (__filename.endsWith('.ts')) {
    return { filename: path.join(__dirname, 'sandboxThread.bootstrap.js'), workerData: { entry: path.join(__dirname, 'sandboxThread.ts') } };
  }
  return { filename: path.join(__dirname, 'sandboxThread.js') };
}

class SandboxPool {
  private readonly slots = new Set<Slot>();
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private readonly drained: Array<() => void> = [];

  constructor(private readonly size: number) {}

  run(source: string, inputJson: string | undefined, limits: SandboxLimits): Promise<SandboxResult> {
    if (this.closed) return Promise.reject(new Error('The sandbox pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ source, inputJson, limits, resolve, reject });
      this.dispatch();
    });
  }

  /** Takes no new calls, lets queued and running ones finish (each is bounded by its deadline), then terminates the threads. */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.idle()) await new Promise<void>((resolve) => this.drained.push(resolve));
    const slots = [...this.slots];
    this.slots.clear();
    await Promise.all(slots.map((slot) => slot.worker.terminate().catch(() => undefined)));
  }

  private idle(): boolean {
    return this.queue.length === 0 && ![...this.slots].some((s) => s.task);
  }

  /** Hands queued calls to ready idle threads; starts threads (up to `size`) while calls wait. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) break;
      if (slot.ready && !slot.task) this.start(slot, this.queue.shift()!);
    }
    const starting = [...this.slots].filter((s) => !s.ready).length;
    for (let i = starting; i < this.queue.length && this.slots.size < this.size; i++) this.spawn();
    if (this.closed && this.idle()) for (const resolve of this.drained.splice(0)) resolve();
  }

  private start(slot: Slot, pending: Pending): void {
    const id = this.nextId++;
    const timer = setTimeout(() => this.kill(slot, id), pending.limits.timeoutMs + KILL_GRACE_MS);
    slot.task = { ...pending, id, timer };
    slot.worker.ref();
    const task: SandboxTask = { id, source: pending.source, inputJson: pending.inputJson, limits: pending.limits };
    slot.worker.postMessage(task);
  }

  private finish(slot: Slot, id: number): (Pending & { id: number }) | undefined {
    const task = slot.task;
    if (!task || task.id !== id) return undefined;
    clearTimeout(task.timer);
    slot.task = undefined;
    slot.worker.unref();
    return task;
  }

  /** The outer deadline: the thread is terminated (V8 stops it even inside WASM) and a new one takes its place. */
  private kill(slot: Slot, id: number): void {
    const task = this.finish(slot, id);
    if (!task) return;
    this.retire(slot);
    task.resolve({ ok: false, error: { kind: 'timeout', message: `Code exceeded its time limit of ${task.limits.timeoutMs} ms` }, logs: [] });
    this.dispatch();
  }

  private retire(slot: Slot): void {
    this.slots.delete(slot);
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate().catch(() => undefined);
  }

  private spawn(): void {
    const { filename, workerData } = threadEntry();
    const worker = new Worker(filename, { workerData, resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB }, stdout: false, stderr: false });
    worker.unref();
    const slot: Slot = { worker, ready: false };
    this.slots.add(slot);
    worker.on('message', (msg: SandboxThreadMessage) => {
      if (msg.type === 'ready') {
        slot.ready = true;
        this.dispatch();
        return;
      }
      const task = this.finish(slot, msg.id);
      if (!task) return;
      if (msg.type === 'result') task.resolve(msg.result);
      else task.reject(new Error(`Sandbox error: ${msg.message}`));
      this.dispatch();
    });
    // A thread that dies (out of heap, engine abort, failed start) fails its call and is replaced.
    const died = (err: Error | undefined) => {
      if (!this.slots.has(slot)) return;
      const wasReady = slot.ready;
      const task = slot.task ? this.finish(slot, slot.task.id) : undefined;
      this.retire(slot);
      if (task) {
        const outOfMemory = (err as NodeJS.ErrnoException | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
        task.resolve({
          ok: false,
          error: outOfMemory
            ? { kind: 'memory', message: `Code exceeded its memory limit of ${task.limits.memoryLimitBytes} bytes (the sandbox thread ran out of memory)` }
            : { kind: 'runtime', message: 'InternalError: the sandbox stopped unexpectedly' },
          logs: [],
        });
      } else if (!wasReady && ![...this.slots].some((s) => s.ready)) {
        // No thread can start (e.g. the entry cannot load): fail the waiting calls instead of spawning forever.
        const failure = new Error(`The sandbox thread could not start: ${err?.message ?? 'it exited'}`);
        for (const pending of this.queue.splice(0)) pending.reject(failure);
      }
      this.dispatch();
    };
    worker.on('error', died);
    worker.on('exit', () => died(undefined));
  }
}
