/**
 * The read model's reconciler (issue 30 point 1). Run progress leaves workflows through a sink
 * (progressWriter.ts): a worker killed between a sink call and its write loses the batch, and
 * Temporal, which owns the truth, does not know. A worker that replays the run later re-emits
 * it, but a run whose execution closed, or parked in a wait, is not replayed by anyone. This
 * pass finds live rows (queued, running, waiting) that have not moved for `staleMs` and asks
 * Temporal:
 *
 * - closed execution: the terminal state (status, output or error, Temporal's close time) is
 *   written from Temporal, with the workflow's steps from the `progress` query (a worker
 *   replays the closed history to answer it, re-emitting every batch, logs included);
 * - open execution whose row says queued or running: the query's status, waits and steps.
 *   A `waiting` row of an open execution is left alone: parked runs are legitimately still,
 *   and asking each would replay it.
 *
 * The terminal status is written once: the update keeps a terminal status it finds (the writer
 * or a cancel got there first), and the writer's later batches never turn it back.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EngineRunState, RunLauncher, WebhookReplyResult } from '../kernel/ports';
import { toStorable } from '../kernel/storableText';
import { advanceQueuedRun, staleLiveRunsAfter, updateRunProgress, upsertRunSteps } from './store';
import type { RunProgress } from './readModel';

export const READ_MODEL_RECONCILER = {
  /** Only rows whose projection has not moved for this long are asked about. */
  staleMs: 30_000,
  /** Rows examined per pass. */
  batch: 100,
  /** How long the `progress` query may wait for a worker. */
  queryBudgetMs: 5_000,
} as const;

export interface ReconcileOptions {
  staleMs?: number;
  batch?: number;
  queryBudgetMs?: number;
}

/** Where the last pass stopped; the next one goes on from there and starts over after the last row. */
export interface ReconcileCursor {
  after: { updatedAt: string; id: string } | null;
}

/** One pass; returns the ids of the runs whose row it changed. */
export async function reconcileRunReadModel(
  em: EntityManager,
  launcher: RunLauncher,
  opts: ReconcileOptions = {},
  cursor: ReconcileCursor = { after: null },
): Promise<string[]> {
  const batch = opts.batch ?? READ_MODEL_RECONCILER.batch;
  const rows = await staleLiveRunsAfter(em, opts.staleMs ?? READ_MODEL_RECONCILER.staleMs, cursor.after, batch);
  const last = rows.at(-1);
  cursor.after = last && rows.length === batch ? { updatedAt: new Date(last.updated_at).toISOString(), id: last.id } : null;
  const changed: string[] = [];
  for (const row of rows) {
    const state = await launcher.engineState(row.id, {
      // Asking a parked run would replay it on a worker for nothing: only closed or moving ones.
      withProgress: row.status !== 'waiting',
      queryBudgetMs: opts.queryBudgetMs ?? READ_MODEL_RECONCILER.queryBudgetMs,
    });
    if (!state) continue;
    if (state.open && (row.status === 'waiting' || !state.progress)) continue;
    if (!state.open && row.status === 'waiting') {
      // Closed while the row says waiting: the steps too, now that the answer costs one replay.
      const withSteps = await launcher.engineState(row.id, {
        withProgress: true,
        queryBudgetMs: opts.queryBudgetMs ?? READ_MODEL_RECONCILER.queryBudgetMs,
      });
      if (withSteps) await applyEngineState(em, row, withSteps);
    } else await applyEngineState(em, row, state);
    changed.push(row.id);
  }
  return changed;
}

/**
 * Brings one run's row up to what a synchronous start's reply (`startWithReply`) says of it,
 * without waiting for the progress writer (which stores a batch up to RUN_PROGRESS_FLUSH_MS
 * later), for a caller that answers with the run or lets its client read it next: a run that
 * ended gets the closed execution's end state from Temporal (status, output or error, close
 * time; a terminal status already stored is kept); a reply or a wait only moves a row still
 * `queued`. Over the budget (`timeout`) nothing is known: a backlog may not have started it.
 */
export async function catchUpAfterReply(
  em: EntityManager,
  launcher: RunLauncher,
  run: { id: string; workspaceId: string },
  reply: WebhookReplyResult['kind'],
): Promise<void> {
  if (reply === 'timeout') return;
  if (reply === 'response' || reply === 'waiting') return advanceQueuedRun(em, run.id, reply === 'response' ? 'running' : 'waiting');
  const state = await launcher.engineState(run.id, { withProgress: false, queryBudgetMs: READ_MODEL_RECONCILER.queryBudgetMs });
  if (state && !state.open) await applyEngineState(em, { id: run.id, workspace_id: run.workspaceId }, state);
}

async function applyEngineState(em: EntityManager, row: { id: string; workspace_id: string }, state: EngineRunState): Promise<void> {
  const run: RunProgress['run'] = state.open
    ? {
        status: state.progress?.status === 'waiting' ? 'waiting' : 'running',
        ...(state.progress ? { waits: state.progress.waits } : {}),
      }
    : {
        status: state.status,
        ...(state.status === 'succeeded' ? { output: state.output } : {}),
        error: state.error,
        errorNodeId: state.errorNodeId,
        waits: [],
        finishedAt: state.finishedAt,
        ...(state.status === 'canceled' ? { cancelReason: 'Canceled on request' } : {}),
      };
  const progress = toStorable({ runId: row.id, workspaceId: row.workspace_id, at: new Date().toISOString(), run });
  const steps = toStorable(state.progress?.steps ?? []);
  await em.transactional(async (tx) => {
    if (steps.length > 0) await upsertRunSteps(tx, progress, steps);
    await updateRunProgress(tx, progress);
  });
}
