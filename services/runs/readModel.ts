/**
 * The run read model: the `runs`, `run_steps` and `run_logs` rows that mirror executions on
 * the durable engine. Temporal owns the truth; the run workflow writes this copy through the
 * `recordRunProgress` activity so the API can list, filter and show runs with SQL.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { type RunStatus, type StoredWait } from '../../db/entities';
import type { LogRecord, StepRecord } from '../../engine/interpreter';
import { toStorable } from '../kernel/storableText';
import { insertRunLogs, runStepId, updateRunProgress, upsertRunSteps } from './store';

export interface RunProgress {
  runId: string;
  workspaceId: string;
  /** Workflow time of the write (deterministic), used for updated_at. */
  at: string;
  run: {
    status?: RunStatus;
    startedAt?: string;
    finishedAt?: string;
    waits?: StoredWait[];
    output?: unknown;
    error?: string | null;
    errorNodeId?: string | null;
    costCredits?: number;
    cancelReason?: string;
  };
  steps: StepRecord[];
  logs: LogRecord[];
}

/** Rows per multi-row insert: one round trip per chunk, far below PostgreSQL's 65 535 parameters. */
const ROWS_PER_STATEMENT = 500;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Writes a run's progress: step upserts, new logs and run fields, in one transaction.
 * Idempotent, because activities may run again after a crash: steps are keyed by
 * (run, node, iteration), logs by (run, seq), and a terminal status is never overwritten by a
 * non-terminal one (the API may already have recorded a cancel).
 */
export async function recordRunProgress(em: EntityManager, progress: RunProgress): Promise<void> {
  // Node outputs, logs and errors may hold text PostgreSQL refuses (U+0000, lone surrogates):
  // made storable here, the one door into the read model, so the write cannot fail on them.
  const p = toStorable(progress);
  await writeProgress(em, p);
}

async function writeProgress(em: EntityManager, p: RunProgress): Promise<void> {
  // Every statement runs on the transaction's connection (the store passes its context): one pool connection per write, and atomic.
  await em.transactional(async (tx) => {
    // Later records of a node's iteration win: one statement cannot upsert the same row twice.
    const steps = [...new Map(p.steps.map((s) => [runStepId(p.runId, s), s])).values()];
    for (const chunk of chunks(steps, ROWS_PER_STATEMENT)) await upsertRunSteps(tx, p, chunk);
    for (const chunk of chunks(p.logs, ROWS_PER_STATEMENT)) await insertRunLogs(tx, p, chunk);
    await updateRunProgress(tx, p);
  });
}
