import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, executionSpan, HIDDEN, timestamps, timestamptz, workspaceScoped } from './columns';
import type { ResearchStatus, ResearchSourceOutcome } from '../../engine/statuses';
export type { ResearchStatus, ResearchSourceOutcome } from '../../engine/statuses';

export const ResearchRunSchema = entity('ResearchRun', 'research_runs', {
  /** `research_` + 32 hex of SHA-256(workspaceId NUL Idempotency-Key). */
  ...workspaceScoped(),
  createdById: p.string(),
  query: p.text(),
  sourceUrls: p.json<string[]>(),
  /** The limits as the client sent them (may be empty); defaults apply at execution. */
  limits: p.json<Record<string, number>>(),
  status: p.string().$type<ResearchStatus>(),
  resultDocumentId: p.string().nullable(),
  error: p.text().nullable(),
  /** SHA-256 of the creating user and the canonical request body: a replay must match it. */
  requestFingerprint: p.string().hidden(HIDDEN),
  /** A connected local AI CLI that synthesizes the answer instead of the model endpoint (our extension). */
  aiProvider: p.string().$type<'cliA' | 'cliB'>().nullable(),
  /** The model the provider is asked for (the CLI's, or the endpoint's). */
  aiModel: p.string().nullable(),
  promptTokens: p.integer(),
  completionTokens: p.integer(),
  costCredits: p.double().$type<number>(),
  cancelRequestedAt: timestamptz('cancel_requested_at').nullable(),
  ...executionSpan(),
  ...timestamps(),
});
/**
 * A durable research run (workflow id = run id). Token usage and cost are recorded here but not
 * serialized (the spec's run fields do not carry them).
 */
export type ResearchRun = InferEntity<typeof ResearchRunSchema>;

export const ResearchSourceSchema = entity('ResearchSource', 'research_sources', {
  id: p.string().primary(),
  runId: p.string(),
  workspaceId: p.string(),
  /** The URL as requested (normalized); unique per run, so a retried activity finds its row. */
  url: p.text(),
  outcome: p.string().$type<ResearchSourceOutcome>(),
  reason: p.text().nullable(),
  canonicalUrl: p.text(),
  title: p.text().nullable(),
  fetchedAt: timestamptz('fetched_at').nullable(),
  sha256: p.string().nullable(),
  snapshotText: p.text().nullable(),
  snapshotFileId: p.string().nullable(),
  /** Same-domain links found on the page (for the crawl), never serialized. */
  links: p.json<string[]>(),
  bytes: p.integer(),
  ...createdAt(),
});
/**
 * One URL a run considered. `stored` rows are the run's source snapshots; the others record a
 * URL that was not fetched (robots.txt, the outbound guard, a limit) or failed, with `reason`.
 */
export type ResearchSource = InferEntity<typeof ResearchSourceSchema>;
