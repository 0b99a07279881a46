/**
 * The worker's run progress writer (issue 30 point 1). Run workflows started under patch
 * `sink-progress-v1` emit their progress through a Temporal sink instead of a local activity:
 * no command, no marker, no extra activation. The sink hands each batch to this writer on the
 * worker's main thread, which coalesces a run's batches and writes them every `intervalMs`,
 * off the workflow thread, one transaction per run. Batches carry a per-run sequence number:
 * the write is refused in SQL when a newer batch is already stored (claimProgressSeq), so a
 * late, repeated or replayed batch never overwrites a newer state.
 *
 * The sink is called during replay too (`callDuringReplay`): a worker that takes over a run
 * from a killed one replays its history and emits every batch again, so what the killed worker
 * had not written yet is written now; batches already stored are dropped, in memory when this
 * process wrote them, else by the sequence check. Runs whose execution closed before anything
 * replayed them are caught up by the reconciler (reconcile.ts).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { TERMINAL_RUN_STATUSES } from '../../engine/statuses';
import { recordRunProgress, type RunProgress } from './readModel';
import { runStepId } from './store';

/** A sink batch: a progress with its sequence number. */
export type SequencedRunProgress = RunProgress & { seq: number };

export interface RunProgressWriter {
  /** Queues a batch; never throws and never waits (it is called from the sink). */
  emit(progress: SequencedRunProgress): void;
  /** Writes every queued batch now (a stopping worker calls it last). */
  flush(): Promise<void>;
}

/** The default interval (config RUN_PROGRESS_FLUSH_MS): the read model lags Temporal by about this much. */
export const RUN_PROGRESS_FLUSH_MS = 250;

/** Runs whose last written sequence is remembered; beyond it the memory starts over (the SQL check still holds). */
const REMEMBERED_RUNS = 50_000;
/** Runs written at once in one flush (each is one transaction on its own pool connection). */
const PARALLEL_WRITES = 4;

/** `newer` folded into `older`: later step records and run fields win, logs are appended once. */
export function mergeProgress(older: SequencedRunProgress, newer: SequencedRunProgress): SequencedRunProgress {
  const steps = new Map(older.steps.map((s) => [runStepId(older.runId, s), s]));
  for (const s of newer.steps) {
    const key = runStepId(older.runId, s);
    steps.delete(key);
    steps.set(key, s);
  }
  const seen = new Set(older.logs.map((l) => l.seq));
  return {
    ...newer,
    run: { ...older.run, ...newer.run },
    steps: [...steps.values()],
    logs: [...older.logs, ...newer.logs.filter((l) => !seen.has(l.seq))],
  };
}

const isTerminal = (p: RunProgress) => p.run.status !== undefined && (TERMINAL_RUN_STATUSES as readonly string[]).includes(p.run.status);

/** A writer that flushes `intervalMs` after the first batch queued since its last flush. */
export function createRunProgressWriter(opts: { orm: MikroORM; intervalMs?: number; logger?: Pick<Logger, 'warn'> }): RunProgressWriter {
  const intervalMs = opts.intervalMs ?? RUN_PROGRESS_FLUSH_MS;
  const logger = opts.logger ?? { warn: (obj: object, msg: string) => console.warn(msg, obj) };
  let pending = new Map<string, SequencedRunProgress>();
  const written = new Map<string, number>();

  // A timer only while something is queued: an idle writer holds nothing open.
  let timer: NodeJS.Timeout | null = null;
  const schedule = () => {
    if (timer || pending.size === 0) return;
    timer = setTimeout(() => void flush(), intervalMs);
    timer.unref();
  };

  const emit = (p: SequencedRunProgress) => {
    if (p.seq <= (written.get(p.runId) ?? 0)) return;
    const queued = pending.get(p.runId);
    // Same process, same deterministic run: a sequence already queued is the same batch again (a replay after eviction).
    if (queued && p.seq <= queued.seq) return;
    pending.set(p.runId, queued ? mergeProgress(queued, p) : p);
    schedule();
  };

  const writeOne = async (p: SequencedRunProgress) => {
    try {
      await recordRunProgress(opts.orm.em.fork(), p);
      if (isTerminal(p)) written.delete(p.runId);
      else {
        if (written.size >= REMEMBERED_RUNS) written.clear();
        written.set(p.runId, p.seq);
      }
    } catch (err) {
      // Kept for the next flush, before anything emitted since.
      const later = pending.get(p.runId);
      pending.set(p.runId, later ? mergeProgress(p, later) : p);
      logger.warn({ err, runId: p.runId }, 'run progress write failed; retrying');
    }
  };

  let flushing: Promise<void> = Promise.resolve();
  const flushOnce = async () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const batch = [...pending.values()];
    pending = new Map();
    for (let i = 0; i < batch.length; i += PARALLEL_WRITES) await Promise.all(batch.slice(i, i + PARALLEL_WRITES).map(writeOne));
    // What was emitted meanwhile, or failed and was put back, waits for the next interval.
    schedule();
  };
  // Flushes never overlap: a run's batches are written in order.
  const flush = (): Promise<void> => (flushing = flushing.then(flushOnce));

  return { emit, flush };
}
