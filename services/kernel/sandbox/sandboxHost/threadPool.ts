import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { FairQueue } from '../../fairQueue';
import type { ThreadInbound, ThreadOutbound } from './protocol';

/**
 * A pool of worker threads inside the sandbox host, one task per thread at a time, fed from a
 * per-workspace fair queue. Each task gets a wall-clock deadline from the moment it holds a
 * thread: a thread that has not answered by then is terminated (V8 stops it even inside WASM)
 * and replaced. Time spent queued is not charged to the task.
 */
export interface ThreadPoolOptions<R> {
  /** Module of the thread entry, next to this file, without extension (`codeThread`, `graphThread`). */
  entry: string;
  size: number;
  perWorkspace: number;
  /** V8 old-generation heap of one thread (resourceLimits). */
  heapMb: number;
  /** How long a thread holding grown memory stays idle before it is replaced; default IDLE_RETIRE_MS. */
  idleRetireMs?: number;
  /** The answer of a task stopped by its deadline. */
  onTimeout(deadlineMs: number): R;
  /** The answer of a task whose thread died under it (out of heap, engine abort). */
  onDied(outOfMemory: boolean): R;
}

export interface TaskHooks {
  /** Called when the task gets a thread (its deadline starts). */
  onStart?(): void;
  /** Answers a request the task's thread sends out (a dry run's table read). */
  onCall?(op: string, args: unknown): Promise<unknown>;
}

interface Pending<R> {
  workspaceId: string;
  payload: unknown;
  deadlineMs: number;
  hooks: TaskHooks;
  resolve(result: R): void;
  reject(err: Error): void;
}

interface Slot<R> {
  worker: Worker;
  ready: boolean;
  task?: Pending<R> & { id: number; timer: NodeJS.Timeout };
  /** Replaces a thread that holds grown memory once it has been idle for IDLE_RETIRE_MS. */
  idleRetire?: NodeJS.Timeout;
}

/**
 * How long a thread holding grown memory must stay idle before it is replaced (its memory then
 * goes back to the system). Not at once: a tenant whose every call fills its memory limit would
 * otherwise make the host start a thread per call, which costs far more CPU than the call,
 * while other tenants' calls wait. Until then a thread holds at most one call's memory limit
 * plus the engine's headroom (sandboxEngine.ts).
 */
const IDLE_RETIRE_MS = 5_000;

/** The entry of a thread: compiled JavaScript next to this file, or the TypeScript source through the tsx bootstrap. */
function threadEntry(name: string): { filename: string; workerData?: { entry: string } } {
  if (__filename.endsWith('.ts')) {
    return { filename: path.join(__dirname, 'tsEntry.bootstrap.js'), workerData: { entry: path.join(__dirname, `${name}.ts`) } };
  }
  return { filename: path.join(__dirname, `${name}.js`) };
}

export class ThreadPool<R> {
  private readonly slots = new Set<Slot<R>>();
  private readonly queue: FairQueue<Pending<R>>;
  private nextId = 1;
  private started = 0;

  constructor(private readonly opts: ThreadPoolOptions<R>) {
    this.queue = new FairQueue(opts.perWorkspace);
  }

  /** Starts `count` threads ahead of the first task, so a restarted host serves its first calls without waiting for thread start. */
  prestart(count: number): void {
    while (this.slots.size < Math.min(count, this.opts.size)) this.spawn();
  }

  /** Queues a task; resolves with the thread's answer, or the timeout/died answer. Rejects only when no thread can start. */
  run(workspaceId: string, payload: unknown, deadlineMs: number, hooks: TaskHooks = {}): { done: Promise<R>; cancel(): boolean } {
    let pending!: Pending<R>;
    const done = new Promise<R>((resolve, reject) => {
      pending = { workspaceId, payload, deadlineMs, hooks, resolve, reject };
    });
    this.queue.push(workspaceId, pending);
    this.dispatch();
    return { done, cancel: () => this.queue.remove(workspaceId, (p) => p === pending) };
  }

  /** Threads started since the pool was made (the first ones included); replacements show as growth. */
  get threadsStarted(): number {
    return this.started;
  }

  /** Threads alive now (starting, idle or busy). */
  get threads(): number {
    return this.slots.size;
  }

  /** Terminates every thread; queued tasks are rejected. */
  async close(): Promise<void> {
    for (const p of this.queue.drain()) p.reject(new Error('The sandbox is shutting down'));
    const slots = [...this.slots];
    this.slots.clear();
    await Promise.all(slots.map((slot) => slot.worker.terminate().catch(() => undefined)));
  }

  /** Hands queued tasks to ready idle threads (fairly); starts threads (up to `size`) while tasks wait. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.task) continue;
      const next = this.queue.take();
      if (!next) break;
      this.start(slot, next.item);
    }
    const starting = [...this.slots].filter((s) => !s.ready).length;
    for (let i = starting; i < this.queue.length && this.slots.size < this.opts.size; i++) this.spawn();
  }

  private start(slot: Slot<R>, pending: Pending<R>): void {
    clearTimeout(slot.idleRetire);
    slot.idleRetire = undefined;
    const id = this.nextId++;
    const timer = setTimeout(() => this.kill(slot, id), pending.deadlineMs);
    slot.task = { ...pending, id, timer };
    pending.hooks.onStart?.();
    slot.worker.postMessage({ type: 'task', id, payload: pending.payload } satisfies ThreadInbound);
  }

  private finish(slot: Slot<R>, id: number): (Pending<R> & { id: number }) | undefined {
    const task = slot.task;
    if (!task || task.id !== id) return undefined;
    clearTimeout(task.timer);
    slot.task = undefined;
    this.queue.release(task.workspaceId);
    return task;
  }

  private kill(slot: Slot<R>, id: number): void {
    const task = this.finish(slot, id);
    if (!task) return;
    this.retire(slot);
    task.resolve(this.opts.onTimeout(task.deadlineMs));
    this.dispatch();
  }

  private retireWhenIdle(slot: Slot<R>): void {
    clearTimeout(slot.idleRetire);
    slot.idleRetire = setTimeout(() => {
      if (!this.slots.has(slot) || slot.task) return;
      this.retire(slot);
      this.dispatch();
    }, this.opts.idleRetireMs ?? IDLE_RETIRE_MS);
    slot.idleRetire.unref();
  }

  private retire(slot: Slot<R>): void {
    clearTimeout(slot.idleRetire);
    this.slots.delete(slot);
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate().catch(() => undefined);
  }

  private spawn(): void {
    const { filename, workerData } = threadEntry(this.opts.entry);
    const worker = new Worker(filename, {
      workerData,
      resourceLimits: { maxOldGenerationSizeMb: this.opts.heapMb },
      stdout: false,
      stderr: false,
    });
    this.started++;
    const slot: Slot<R> = { worker, ready: false };
    this.slots.add(slot);
    worker.on('message', (msg: ThreadOutbound) => {
      if (msg.type === 'ready') {
        slot.ready = true;
        this.dispatch();
        return;
      }
      if (msg.type === 'call') {
        const task = slot.task;
        if (!task || task.id !== msg.id) return;
        const answer = task.hooks.onCall ? task.hooks.onCall(msg.op, msg.args) : Promise.reject(new Error(`No handler for ${msg.op}`));
        answer.then(
          (value) =>
            slot.task?.id === msg.id && worker.postMessage({ type: 'reply', callId: msg.callId, ok: true, value } satisfies ThreadInbound),
          (err: unknown) =>
            slot.task?.id === msg.id &&
            worker.postMessage({
              type: 'reply',
              callId: msg.callId,
              ok: false,
              message: err instanceof Error ? err.message : String(err),
            } satisfies ThreadInbound),
        );
        return;
      }
      const task = this.finish(slot, msg.id);
      if (!task) return;
      if (msg.type === 'result' && msg.grown) this.retireWhenIdle(slot);
      if (msg.type === 'result') task.resolve(msg.result as R);
      else task.reject(new Error(`Sandbox error: ${msg.message}`));
      this.dispatch();
    });
    // A thread that dies (out of heap, engine abort, failed start) fails its task and is replaced.
    const died = (err: Error | undefined) => {
      if (!this.slots.has(slot)) return;
      const wasReady = slot.ready;
      const task = slot.task ? this.finish(slot, slot.task.id) : undefined;
      this.retire(slot);
      if (task) {
        task.resolve(this.opts.onDied(err !== undefined && 'code' in err && err.code === 'ERR_WORKER_OUT_OF_MEMORY'));
      } else if (!wasReady && ![...this.slots].some((s) => s.ready)) {
        // No thread can start (e.g. the entry cannot load): fail the waiting tasks instead of spawning forever.
        const failure = new Error(`The sandbox thread could not start: ${err?.message ?? 'it exited'}`);
        for (const pending of this.queue.drain()) pending.reject(failure);
      }
      this.dispatch();
    };
    worker.on('error', died);
    worker.on('exit', () => died(undefined));
  }
}
