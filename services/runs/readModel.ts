/**
 * The run read model: the `runs`, `run_steps` and `run_logs` rows that mirror executions on
 * the durable engine. Temporal owns the truth; the run workflow writes this copy through the
 * `recordRunProgress` activity so the API can list, filter and show runs with SQL.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { type RunStatus, type StoredWait } from '../../db/entities';
import { TERMINAL_RUN_STATUSES } from '../../engine/statuses';
import type { LogRecord, StepRecord } from '../../engine/interpreter';
import { toStorable } from '../kernel/storableText';

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

const json = (v: unknown) => JSON.stringify(v === undefined ? null : v);

/** Rows per multi-row insert: one round trip per chunk, far below PostgreSQL's 65 535 parameters. */
const ROWS_PER_STATEMENT = 500;

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
const TERMINAL_SQL = `('${TERMINAL_RUN_STATUSES.join("','")}')`;

/**
 * Writes a run's progress: step upserts, new logs and run fields, in one transaction.
 * Idempotent, because activities may run again after a crash: steps are keyed by
 * (run, node), logs by (run, seq), and a terminal status is never overwritten by a
 * non-terminal one (the API may already have recorded a cancel).
 */
export async function recordRunProgress(em: EntityManager, progress: RunProgress): Promise<void> {
  // Node outputs, logs and errors may hold text PostgreSQL refuses (U+0000, lone surrogates):
  // made storable here, the one door into the read model, so the write cannot fail on them.
  const p = toStorable(progress);
  await writeProgress(em, p);
}

async function writeProgress(em: EntityManager, p: RunProgress): Promise<void> {
  await em.transactional(async (tx) => {
    const conn = tx.getConnection();
    // Every statement must run on the transaction's connection: one pool connection per write, and atomic.
    const ctx = tx.getTransactionContext();
    // Later records of a node win: one statement cannot upsert the same row twice.
    const steps = [...new Map(p.steps.map((s) => [s.nodeId, s])).values()];
    for (const chunk of chunks(steps, ROWS_PER_STATEMENT)) {
      await conn.execute(
        `insert into run_steps (id, run_id, workspace_id, node_id, node_type, node_name, seq, status, attempts, input, output, error, started_at, finished_at, duration_ms)
         values ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?)').join(', ')}
         on conflict (id) do update set
           status = excluded.status, attempts = excluded.attempts, input = excluded.input, output = excluded.output,
           error = excluded.error, started_at = coalesce(run_steps.started_at, excluded.started_at),
           finished_at = excluded.finished_at, duration_ms = excluded.duration_ms`,
        chunk.flatMap((s) => [
          `${p.runId}:${s.nodeId}`,
          p.runId,
          p.workspaceId,
          s.nodeId,
          s.nodeType,
          s.nodeName,
          s.seq,
          s.status,
          s.attempts,
          json(s.input),
          json(s.output),
          s.error,
          s.startedAt,
          s.finishedAt,
          s.durationMs,
        ]),
        'run',
        ctx,
      );
    }
    for (const chunk of chunks(p.logs, ROWS_PER_STATEMENT)) {
      await conn.execute(
        `insert into run_logs (id, run_id, workspace_id, seq, node_id, level, message, data, created_at)
         values ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)').join(', ')} on conflict (id) do nothing`,
        chunk.flatMap((l) => [
          `${p.runId}:${l.seq}`,
          p.runId,
          p.workspaceId,
          l.seq,
          l.nodeId,
          l.level,
          l.message,
          json(l.data),
          l.createdAt,
        ]),
        'run',
        ctx,
      );
    }
    const sets: string[] = ['updated_at = ?'];
    const params: unknown[] = [p.at];
    const r = p.run;
    if (r.status) {
      sets.push(`status = case when status in ${TERMINAL_SQL} then status else ? end`);
      params.push(r.status);
    }
    if (r.startedAt) {
      sets.push('started_at = coalesce(started_at, ?)');
      params.push(r.startedAt);
    }
    if (r.finishedAt) {
      sets.push(
        'finished_at = coalesce(finished_at, ?)',
        'duration_ms = coalesce(duration_ms, (extract(epoch from (?::timestamptz - coalesce(started_at, created_at))) * 1000)::int)',
      );
      params.push(r.finishedAt, r.finishedAt);
    }
    if (r.waits) {
      sets.push('waits = ?::jsonb');
      params.push(json(r.waits));
    }
    if ('output' in r) {
      sets.push('output = ?::jsonb');
      params.push(json(r.output));
    }
    if ('error' in r) {
      sets.push('error = ?');
      params.push(r.error ?? null);
    }
    if ('errorNodeId' in r) {
      sets.push('error_node_id = ?');
      params.push(r.errorNodeId ?? null);
    }
    if (r.costCredits !== undefined) {
      sets.push('cost_credits = ?');
      params.push(r.costCredits);
    }
    if (r.cancelReason) {
      sets.push('cancel_reason = coalesce(cancel_reason, ?)');
      params.push(r.cancelReason);
    }
    await conn.execute(`update runs set ${sets.join(', ')} where id = ?`, [...params, p.runId], 'run', ctx);
  });
}
