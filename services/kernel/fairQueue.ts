/**
 * A queue of work keyed by tenant (the workspace id): each key has its own FIFO, at most
 * `perKeyLimit` of a key's items run at once, and free capacity goes round-robin over the keys
 * that have work waiting and room under their limit. One tenant with 40 waiting items therefore
 * delays another tenant's next item by at most the time until one running item ends.
 *
 * Pure bookkeeping (no timers, no I/O): the owner calls `take()` whenever capacity frees up and
 * `release(key)` when an item it took has ended.
 */
export class FairQueue<T> {
  /** Keys with waiting items, in round-robin order (a key is appended when its queue becomes non-empty). */
  private readonly ring: string[] = [];
  private readonly waiting = new Map<string, T[]>();
  private readonly running = new Map<string, number>();
  private size = 0;

  constructor(private readonly perKeyLimit: number) {
    if (!Number.isInteger(perKeyLimit) || perKeyLimit < 1) throw new RangeError('FairQueue: perKeyLimit must be a positive integer');
  }

  /** Items waiting (not yet taken). */
  get length(): number {
    return this.size;
  }

  /** Items waiting (not yet taken), for one key. */
  waitingOf(key: string): number {
    return this.waiting.get(key)?.length ?? 0;
  }

  /** Items taken and not yet released, for one key. */
  runningOf(key: string): number {
    return this.running.get(key) ?? 0;
  }

  push(key: string, item: T): void {
    let list = this.waiting.get(key);
    if (!list) {
      list = [];
      this.waiting.set(key, list);
      this.ring.push(key);
    }
    list.push(item);
    this.size++;
  }

  /**
   * The next item to run, or undefined when every key with waiting items is at its limit.
   * The chosen key moves to the back of the ring, so keys take turns.
   */
  take(): { key: string; item: T } | undefined {
    // The ring changes only just before the return, so the walk never sees a spliced ring.
    for (const [i, key] of this.ring.entries()) {
      if (this.runningOf(key) >= this.perKeyLimit) continue;
      const list = this.waiting.get(key)!;
      const item = list.shift()!;
      this.size--;
      this.ring.splice(i, 1);
      if (list.length > 0) this.ring.push(key);
      else this.waiting.delete(key);
      this.running.set(key, this.runningOf(key) + 1);
      return { key, item };
    }
    return undefined;
  }

  /** Ends one running item of `key`, making room for its next one. */
  release(key: string): void {
    const n = this.runningOf(key) - 1;
    if (n > 0) this.running.set(key, n);
    else this.running.delete(key);
  }

  /** Removes a waiting item (e.g. its caller gave up); true when it was still waiting. */
  remove(key: string, predicate: (item: T) => boolean): boolean {
    const list = this.waiting.get(key);
    const index = list ? list.findIndex(predicate) : -1;
    if (!list || index < 0) return false;
    list.splice(index, 1);
    this.size--;
    if (list.length === 0) {
      this.waiting.delete(key);
      this.ring.splice(this.ring.indexOf(key), 1);
    }
    return true;
  }

  /** Takes every waiting item out (shutdown, or no thread can start). */
  drain(): T[] {
    const all = this.ring.flatMap((key) => this.waiting.get(key)!);
    this.ring.length = 0;
    this.waiting.clear();
    this.size = 0;
    return all;
  }
}

/** Thrown by FairLimiter.run when the key's waiting queue is full. */
export class FairQueueFull extends Error {
  constructor(
    readonly key: string,
    readonly limits: { perKey: number; queuePerKey: number },
  ) {
    super(`Queue of ${key} is full`);
    this.name = 'FairQueueFull';
  }
}

export interface FairLimiterLimits {
  /** Tasks running at once over all keys. */
  total: number;
  /** Tasks of one key running at once. */
  perKey: number;
  /** Tasks of one key waiting at once; beyond, `run` throws FairQueueFull. */
  queuePerKey: number;
}

/**
 * A concurrency limiter over FairQueue for promise-returning tasks: at most `total` run at
 * once, at most `perKey` for one key, waiting tasks served round-robin over keys. Each key's
 * queue is bounded: past `queuePerKey` waiting tasks, `run` refuses at once with FairQueueFull
 * instead of queueing without end. Per process: several API or worker processes each have their own.
 */
export class FairLimiter {
  private readonly queue: FairQueue<() => void>;
  private running = 0;

  constructor(readonly limits: FairLimiterLimits) {
    this.queue = new FairQueue(limits.perKey);
  }

  /** Runs `task` when a slot of its key is free; rejects with FairQueueFull when the key's queue is full. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    if (this.queue.waitingOf(key) >= this.limits.queuePerKey) throw new FairQueueFull(key, this.limits);
    await new Promise<void>((resolve) => {
      this.queue.push(key, resolve);
      this.dispatch();
    });
    try {
      return await task();
    } finally {
      this.running--;
      this.queue.release(key);
      this.dispatch();
    }
  }

  /** Counts for metrics and tests. */
  stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.queue.length };
  }

  private dispatch(): void {
    while (this.running < this.limits.total) {
      const next = this.queue.take();
      if (!next) return;
      this.running++;
      next.item();
    }
  }
}
