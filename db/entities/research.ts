import { EntitySchema } from '@mikro-orm/core';

export const RESEARCH_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const;
export type ResearchStatus = (typeof RESEARCH_STATUSES)[number];
export const RESEARCH_TERMINAL_STATUSES: readonly ResearchStatus[] = ['succeeded', 'failed', 'canceled'];

/** What happened to one URL a research run considered: only `stored` rows are source snapshots. */
export const RESEARCH_SOURCE_OUTCOMES = ['stored', 'skipped', 'refused', 'failed'] as const;
export type ResearchSourceOutcome = (typeof RESEARCH_SOURCE_OUTCOMES)[number];

/**
 * A durable research run (workflow id = run id). Token usage and cost are recorded here but not
 * serialized (the spec's run fields do not carry them).
 */
export interface ResearchRun {
  /** `research_` + 32 hex of SHA-256(workspaceId NUL Idempotency-Key). */
  id: string;
  workspaceId: string;
  createdById: string;
  query: string;
  sourceUrls: string[];
  /** The limits as the client sent them (may be empty); defaults apply at execution. */
  limits: Record<string, number>;
  status: ResearchStatus;
  resultDocumentId: string | null;
  error: string | null;
  /** SHA-256 of the creating user and the canonical request body: a replay must match it. */
  requestFingerprint: string;
  /** A connected local AI CLI that synthesizes the answer instead of the model endpoint (our extension). */
  aiProvider: 'cliA' | 'cliB' | null;
  /** The model the provider is asked for (the CLI's, or the endpoint's). */
  aiModel: string | null;
  promptTokens: number;
  completionTokens: number;
  costCredits: number;
  cancelRequestedAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * One URL a run considered. `stored` rows are the run's source snapshots; the others record a
 * URL that was not fetched (robots.txt, the outbound guard, a limit) or failed, with `reason`.
 */
export interface ResearchSource {
  id: string;
  runId: string;
  workspaceId: string;
  /** The URL as requested (normalized); unique per run, so a retried activity finds its row. */
  url: string;
  outcome: ResearchSourceOutcome;
  reason: string | null;
  canonicalUrl: string;
  title: string | null;
  fetchedAt: Date | null;
  sha256: string | null;
  snapshotText: string | null;
  snapshotFileId: string | null;
  /** Same-domain links found on the page (for the crawl), never serialized. */
  links: string[];
  bytes: number;
  createdAt: Date;
}

const ts = (fieldName: string, nullable = false) => ({ type: 'Date', fieldName, columnType: 'timestamptz', nullable }) as const;

export const ResearchRunSchema = new EntitySchema<ResearchRun>({
  name: 'ResearchRun',
  tableName: 'research_runs',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    createdById: { type: 'string', fieldName: 'created_by_id' },
    query: { type: 'text' },
    sourceUrls: { type: 'json', fieldName: 'source_urls' },
    limits: { type: 'json' },
    status: { type: 'string' },
    resultDocumentId: { type: 'string', fieldName: 'result_document_id', nullable: true },
    error: { type: 'text', nullable: true },
    requestFingerprint: { type: 'string', fieldName: 'request_fingerprint', hidden: true },
    aiProvider: { type: 'string', fieldName: 'ai_provider', nullable: true },
    aiModel: { type: 'string', fieldName: 'ai_model', nullable: true },
    promptTokens: { type: 'integer', fieldName: 'prompt_tokens' },
    completionTokens: { type: 'integer', fieldName: 'completion_tokens' },
    costCredits: { type: 'double', fieldName: 'cost_credits' },
    cancelRequestedAt: ts('cancel_requested_at', true),
    startedAt: ts('started_at', true),
    finishedAt: ts('finished_at', true),
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});

export const ResearchSourceSchema = new EntitySchema<ResearchSource>({
  name: 'ResearchSource',
  tableName: 'research_sources',
  properties: {
    id: { type: 'string', primary: true },
    runId: { type: 'string', fieldName: 'run_id' },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    url: { type: 'text' },
    outcome: { type: 'string' },
    reason: { type: 'text', nullable: true },
    canonicalUrl: { type: 'text', fieldName: 'canonical_url' },
    title: { type: 'text', nullable: true },
    fetchedAt: ts('fetched_at', true),
    sha256: { type: 'string', nullable: true },
    snapshotText: { type: 'text', fieldName: 'snapshot_text', nullable: true },
    snapshotFileId: { type: 'string', fieldName: 'snapshot_file_id', nullable: true },
    links: { type: 'json' },
    bytes: { type: 'integer' },
    createdAt: ts('created_at'),
  },
});
