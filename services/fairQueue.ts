/**
 * A concurrency limiter shared by tenants: at most `total` tasks run at once, at most
 * `perKey` of them for one key (a workspace), and waiting tasks are served round-robin over
 * the keys that have some, so a key with a long queue delays another key by at most one task
 * of each key ahead of it in the ring. Each key's queue is bounded: past `queuePerKey` waiting
 * tasks, `run` refuses at once with a `FairQueueFull` instead of queueing without end.
 *
 * Per process: several API or worker processes each have their own limiter.
 */
export class FairQueueFull extends Error {
  constructor(
    readonly key: string,
    readonly limits: { perKey: number; queuePerKey: number },
  ) {
    super(`Queue of ${key} is full`);
    this.name = 'FairQueueFull';
  }
}

export interface FairQueueLimits {
  /** Tasks running at once over all keys. */
  total: number;
  /** Tasks of one key running at once. */
  perKey: number;
  /** Tasks of one key waiting at once; beyond, `run` throws FairQueueFull. */
  queuePerKey: number;
}

interface Waiter {
  start: () => void;
}

export class FairQueue {
  private running = 0;
  private readonly active = new Map<string, number>();
  /** Keys with waiters, in ring order: the first is served next. */
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(readonly limits: FairQueueLimits) {}

  /** Runs `task` when a slot of its key is free; rejects with FairQueueFull when the key's queue is full. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    if (!this.canStart(key)) {
      const queue = this.waiting.get(key) ?? [];
      if (queue.length >= this.limits.queuePerKey) throw new FairQueueFull(key, this.limits);
      await new Promise<void>((resolve) => {
        queue.push({ start: resolve });
        this.waiting.set(key, queue);
      });
    } else {
      this.take(key);
    }
    try {
      return await task();
    } finally {
      this.release(key);
    }
  }

  /** Counts for metrics and tests. */
  stats(): { running: number; waiting: number } {
    let waiting = 0;
    for (const q of this.waiting.values()) waiting += q.length;
    return { running: this.running, waiting };
  }

  private canStart(key: string): boolean {
    return this.running < this.limits.total && (this.active.get(key) ?? 0) < this.limits.perKey && !this.waiting.has(key);
  }

  private take(key: string): void {
    this.running++;
    this.active.set(key, (this.active.get(key) ?? 0) + 1);
  }

  private release(key: string): void {
    this.running--;
    const left = (this.active.get(key) ?? 1) - 1;
    if (left > 0) this.active.set(key, left);
    else this.active.delete(key);
    this.dispatch();
  }

  private dispatch(): void {
    while (this.running < this.limits.total) {
      const next = [...this.waiting.keys()].find((k) => (this.active.get(k) ?? 0) < this.limits.perKey);
      if (next === undefined) return;
      const queue = this.waiting.get(next)!;
      const waiter = queue.shift()!;
      // Re-inserting moves the key to the end of the ring: the other keys go first next time.
      this.waiting.delete(next);
      if (queue.length > 0) this.waiting.set(next, queue);
      this.take(next);
      waiter.start();
    }
  }
}
