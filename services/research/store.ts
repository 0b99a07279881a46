/**
 * Raw SQL of the research area: run rows, their status moves and their sources. Every status
 * move is conditional on the run not being terminal (`where status in ('queued', 'running')`),
 * so a cancel is never overwritten by the workflow's activities, nor an ended run by a cancel.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { wellFormedParams } from '../kernel/storableText';

/** A research run as first written, queued; the source URLs and limits as JSON text. */
export interface ResearchRunInsert {
  id: string;
  workspaceId: string;
  createdById: string;
  query: string;
  sourceUrls: string;
  limits: string;
  aiProvider: string | null;
  aiModel: string | null;
  fingerprint: string;
  now: Date;
}

/** Inserts a queued run; no row when a run of that id (the same Idempotency-Key) exists, which is left as it is. */
export async function insertQueuedResearchRun(em: EntityManager, r: ResearchRunInsert): Promise<Array<{ id: string }>> {
  return em.execute<Array<{ id: string }>>(
    `insert into research_runs (id, workspace_id, created_by_id, query, source_urls, limits, ai_provider, ai_model, status, request_fingerprint, created_at, updated_at)
     values (?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, 'queued', ?, ?, ?) on conflict (id) do nothing returning id`,
    [r.id, r.workspaceId, r.createdById, r.query, r.sourceUrls, r.limits, r.aiProvider, r.aiModel, r.fingerprint, r.now, r.now],
  );
}

/** Cancels a queued or running run on request; false when it had ended meanwhile (its execution is then left alone). */
export async function cancelLiveResearchRun(em: EntityManager, run: { id: string; workspaceId: string }, now: Date): Promise<boolean> {
  const updated = await em.execute<Array<{ id: string }>>(
    `update research_runs set status = 'canceled', cancel_requested_at = coalesce(cancel_requested_at, ?), finished_at = ?, updated_at = ?
        where id = ? and workspace_id = ? and status in ('queued', 'running') returning id`,
    [now, now, now, run.id, run.workspaceId],
  );
  return updated.length > 0;
}

/** queued → running, keeping the first start; a run in any other status is left as it is (the caller reads it back). */
export async function markQueuedResearchRunning(em: EntityManager, ref: { runId: string; workspaceId: string }, now: Date): Promise<void> {
  await em.execute(
    `update research_runs set status = 'running', started_at = coalesce(started_at, ?), updated_at = ? where id = ? and workspace_id = ? and status = 'queued'`,
    [now, now, ref.runId, ref.workspaceId],
  );
}

/** Fails a queued or running run with `error` (already storable). */
export async function failLiveResearchRun(
  em: EntityManager,
  ref: { runId: string; workspaceId: string },
  error: string,
  now: Date,
): Promise<void> {
  await em.execute(
    `update research_runs set status = 'failed', error = ?, finished_at = ?, updated_at = ? where id = ? and workspace_id = ? and status in ('queued', 'running')`,
    [error, now, now, ref.runId, ref.workspaceId],
  );
}

/** A queued or running run whose execution was cancelled becomes canceled; the first cancel request and finish are kept. */
export async function markLiveResearchCanceled(em: EntityManager, ref: { runId: string; workspaceId: string }, now: Date): Promise<void> {
  await em.execute(
    `update research_runs set status = 'canceled', cancel_requested_at = coalesce(cancel_requested_at, ?), finished_at = coalesce(finished_at, ?), updated_at = ?
      where id = ? and workspace_id = ? and status in ('queued', 'running')`,
    [now, now, now, ref.runId, ref.workspaceId],
  );
}

/** The run's status, the row locked until `tx` ends (so a cancel waits for the answer's commit); undefined when the run is gone. */
export async function lockResearchRunStatus(tx: EntityManager, runId: string): Promise<string | undefined> {
  const locked = await tx.execute<Array<{ status: string }>>(`select status from research_runs where id = ? for update`, [runId], 'all');
  return locked[0]?.status;
}

/**
 * Marks the run succeeded with its answer document and usage. Unconditional: the caller holds
 * the row lock and saw it running. Runs on `tx`'s transaction context.
 */
export async function markResearchSucceeded(
  tx: EntityManager,
  r: { runId: string; documentId: string; promptTokens: number; completionTokens: number; costCredits: number; now: Date },
): Promise<void> {
  await tx.execute(
    `update research_runs set status = 'succeeded', result_document_id = ?, error = null, prompt_tokens = ?, completion_tokens = ?, cost_credits = ?, finished_at = ?, updated_at = ?
        where id = ?`,
    [r.documentId, r.promptTokens, r.completionTokens, r.costCredits, r.now, r.now, r.runId],
    'all',
    tx.getTransactionContext(),
  );
}

/** A source row of a run as `insertSourceOnce` writes it; `links` is its storable JSON text. */
export interface ResearchSourceInsert {
  id: string;
  runId: string;
  workspaceId: string;
  url: string;
  outcome: string;
  reason: string | null;
  canonicalUrl: string;
  title: string | null;
  fetchedAt: Date | null;
  sha256: string | null;
  snapshotText: string | null;
  links: string;
  bytes: number;
  createdAt: Date;
}

/** Inserts the source of (run, url) unless one exists (a retried fetch keeps the first), every text made well-formed. */
export async function insertSourceOnce(em: EntityManager, s: ResearchSourceInsert): Promise<void> {
  await em.execute(
    `insert into research_sources (id, run_id, workspace_id, url, outcome, reason, canonical_url, title, fetched_at, sha256, snapshot_text, snapshot_file_id, links, bytes, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, ?::jsonb, ?, ?) on conflict (run_id, url) do nothing`,
    wellFormedParams([
      s.id,
      s.runId,
      s.workspaceId,
      s.url,
      s.outcome,
      s.reason,
      s.canonicalUrl,
      s.title,
      s.fetchedAt,
      s.sha256,
      s.snapshotText,
      s.links,
      s.bytes,
      s.createdAt,
    ]),
  );
}
