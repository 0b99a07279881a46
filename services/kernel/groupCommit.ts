/**
 * Group commit: concurrent callers each enqueue one row, a writer puts many of them into the
 * database with one statement (one commit), and each caller's promise settles only once the
 * statement that carried its row has returned. So an answer that waits for `enqueue` still
 * means "committed", while the database does one commit per batch instead of one per request.
 */

/**
 * Writes one batch with one statement in its own transaction, and returns one outcome per row, in
 * order: its result, or an Error that concerns that row alone (it is rejected, the others are
 * not). Throwing fails the batch: see `GroupCommitOptions.isolate`.
 */
export type BatchWrite<Row, Result> = (rows: Row[]) => Promise<Array<Result | Error>>;

export interface GroupCommitOptions<Row, Result> {
  write: BatchWrite<Row, Result>;
  /** Rows of one statement at most. */
  maxBatch: number;
  /**
   * How long rows gather while another batch is on the wire and a slot is free, before a
   * partial batch is sent (ms). With nothing in flight a batch leaves at the end of the current
   * turn of the event loop: a lone request never waits for the timer. 0: never wait.
   */
  maxWaitMs: number;
  /** Statements on the wire at once. */
  maxInFlight: number;
  /**
   * Whether a thrown error may concern some rows only (a constraint, a value the database
   * refuses), so the batch is written again by halves until the rows it concerns are alone and
   * fail alone. Default `rowLevelError`: PostgreSQL data, constraint, limit and raised errors.
   * Anything else (the connection, the pool) fails every row of the batch at once.
   */
  isolate?: (err: unknown) => boolean;
}

/** Counters of one writer since it was built. */
export interface GroupCommitStats {
  /** Rows enqueued. */
  rows: number;
  /** Statements that returned (each its own commit), retries by halves included. */
  commits: number;
  /** Statements that failed. */
  failedStatements: number;
  /** Rows rejected (their own error, or a batch-wide failure). */
  failedRows: number;
}

interface Pending<Row, Result> {
  row: Row;
  enqueuedAt: number;
  resolve(result: Result): void;
  reject(err: unknown): void;
}

/**
 * SQLSTATE classes of errors caused by what a row holds: data exceptions (22: a NUL character,
 * a bad number), integrity constraints (23: foreign key, unique, check), program limits (54: a
 * value too large) and errors raised by PL/pgSQL (P0: a trigger). A batch that fails with one
 * of them is split to find the rows concerned.
 */
const ROW_LEVEL_SQLSTATE_CLASSES = new Set(['22', '23', '54', 'P0']);

/** The default `isolate`: a PostgreSQL error whose SQLSTATE class is about the rows' values (the driver's `code`). */
export function rowLevelError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && ROW_LEVEL_SQLSTATE_CLASSES.has(code.slice(0, 2));
}

/**
 * A group-commit writer (see the file comment). Built once per process by its area. Caveats:
 * a batch that fails with a row-level error is retried by halves, so k bad rows among n cost
 * about 2k·log2(n) statements more, and the good rows of that batch wait for those retries; the
 * retried statements must therefore be safe to repeat for rows that were not written (a failed
 * statement wrote nothing, its transaction rolled back). A process that dies with a batch on
 * the wire answers none of its rows: they may or may not be committed, and their callers never
 * got an answer.
 */
export class GroupCommit<Row, Result> {
  private queue: Array<Pending<Row, Result>> = [];
  private inFlight = 0;
  private flushScheduled = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly counters: GroupCommitStats = { rows: 0, commits: 0, failedStatements: 0, failedRows: 0 };
  private readonly listeners: Array<(results: Result[]) => void> = [];
  private readonly isolate: (err: unknown) => boolean;

  constructor(private readonly opts: GroupCommitOptions<Row, Result>) {
    if (opts.maxBatch < 1 || opts.maxInFlight < 1 || opts.maxWaitMs < 0) throw new Error('GroupCommit: invalid options');
    this.isolate = opts.isolate ?? rowLevelError;
  }

  /** Writes `row` with the next batch; resolves with its result once that batch committed. */
  enqueue(row: Row): Promise<Result> {
    this.counters.rows++;
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ row, enqueuedAt: performance.now(), resolve, reject });
      this.pump();
    });
  }

  /** Calls `listener` with the results of every statement that committed (not with its rows' own errors). */
  onCommitted(listener: (results: Result[]) => void): void {
    this.listeners.push(listener);
  }

  /** A copy of the counters. */
  stats(): GroupCommitStats {
    return { ...this.counters };
  }

  /** Sends what may leave now, and arms the end-of-turn flush or the wait timer for the rest. */
  private pump(): void {
    for (let oldest = this.queue.at(0); oldest && this.inFlight < this.opts.maxInFlight; oldest = this.queue.at(0)) {
      const full = this.queue.length >= this.opts.maxBatch;
      const waited = performance.now() - oldest.enqueuedAt >= this.opts.maxWaitMs;
      if (!full && this.inFlight === 0) {
        // Requests parsed in this turn of the event loop join the batch.
        this.scheduleFlush();
        return;
      }
      if (!full && !waited) {
        this.armTimer();
        return;
      }
      this.send();
    }
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      if (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) this.send();
      this.pump();
    });
  }

  private armTimer(): void {
    const oldest = this.queue.at(0);
    if (this.timer || !oldest) return;
    const due = oldest.enqueuedAt + this.opts.maxWaitMs - performance.now();
    this.timer = setTimeout(
      () => {
        this.timer = null;
        if (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) this.send();
        this.pump();
      },
      Math.max(0, Math.ceil(due)),
    );
  }

  private send(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.queue.splice(0, this.opts.maxBatch);
    this.inFlight++;
    void this.writeIsolating(batch).finally(() => {
      this.inFlight--;
      this.pump();
    });
  }

  /** Writes `batch`; on a row-level failure, each half again, until the rows concerned fail alone. */
  private async writeIsolating(batch: Array<Pending<Row, Result>>): Promise<void> {
    let outcomes: Array<Result | Error>;
    try {
      outcomes = await this.opts.write(batch.map((p) => p.row));
      this.counters.commits++;
    } catch (err) {
      this.counters.failedStatements++;
      if (batch.length > 1 && this.isolate(err)) {
        const half = Math.ceil(batch.length / 2);
        // In turn, not at once: a half that holds no bad row commits before the other is retried.
        await this.writeIsolating(batch.slice(0, half));
        await this.writeIsolating(batch.slice(half));
        return;
      }
      this.counters.failedRows += batch.length;
      for (const p of batch) p.reject(err);
      return;
    }
    if (outcomes.length !== batch.length) {
      const err = new Error(`GroupCommit: the write returned ${outcomes.length} outcomes for ${batch.length} rows`);
      this.counters.failedRows += batch.length;
      for (const p of batch) p.reject(err);
      return;
    }
    const results: Result[] = [];
    batch.forEach((p, i) => {
      // outcomes has one entry per row (checked above).
      const outcome = outcomes.at(i)!;
      if (outcome instanceof Error) {
        this.counters.failedRows++;
        p.reject(outcome);
      } else {
        results.push(outcome);
        p.resolve(outcome);
      }
    });
    for (const listener of this.listeners) listener(results);
  }
}
