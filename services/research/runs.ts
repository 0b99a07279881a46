/**
 * Research runs: a query and source URLs (or, without them, the results of a web search of the
 * query: search.ts), researched by a Temporal workflow whose id is the run id
 * (temporal/workflows/research.ts): fetch the sources and same-domain pages they link to
 * (fetching.ts), then synthesize an answer with citations into the workspace's "Research"
 * knowledge base (synthesis.ts).
 *
 *   (none) ──POST──> queued ──execution starts──> running ──answer stored──> succeeded
 *                                                   └──no source stored, model failure──> failed
 *   queued | running ──POST cancel──> canceled (the execution is cancelled at its next step)
 *   terminal ──POST cancel──> unchanged (the current row, no 409)
 *
 * Run id: `research_` + the first 32 hex of SHA-256(workspaceId NUL Idempotency-Key). The key
 * names the run: a replay with the same body (and user) answers the run as it is now.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ResearchRunSchema, ResearchSourceSchema, type ResearchRun, type ResearchSource, type ResearchStatus } from '../../db/entities';
import { RESEARCH_STATUSES, RESEARCH_TERMINAL_STATUSES } from '../../engine/statuses';
import { canonicalJson } from '../../engine/canonicalJson';
import { conflict, invalidInput, notFound } from '../kernel/errors';
import { sha256Hex } from '../kernel/ids';
import { decodeCursor, nextCursorOf } from '../kernel/pagination';
import type { ResearchLauncher, ResearchLimits } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { storableString } from '../kernel/storableText';
import { pickFields } from '../kernel/views';
import {
  cancelLiveResearchRun,
  failLiveResearchRun,
  insertQueuedResearchRun,
  markLiveResearchCanceled,
  markQueuedResearchRunning,
} from './store';
import { WEB_SEARCH_SETTING } from './search';

/** Bounds and defaults of the `limits` keys (the spec leaves them open). */
export const RESEARCH_LIMIT_BOUNDS = {
  /** Pages fetched (sources and the pages they link to). */
  maxPages: { min: 1, max: 50, default: 10 },
  /** Distinct hostnames among the source URLs. */
  maxDomains: { min: 1, max: 20, default: 5 },
  /** Bytes downloaded by the whole run (robots.txt files excluded). */
  maxBytes: { min: 1024, max: 10_485_760, default: 2_097_152 },
  /** Budget of each request, redirects and body included. */
  timeoutMs: { min: 1000, max: 60_000, default: 15_000 },
} as const;

export const RESEARCH_LIST_LIMIT = { min: 1, max: 100, default: 25 } as const;
export const MAX_SOURCE_URLS = 20;

export const RESEARCH_MESSAGES = {
  notFound: (id: string) => `Research run ${id} not found.`,
  otherRequest: 'This Idempotency-Key was already used for a research run with a different request.',
  invalidStatus: `status must be one of ${RESEARCH_STATUSES.join(', ')}.`,
  noSources: 'No source could be fetched, so there was nothing to research.',
  noWebSearch: `Invalid request body: sourceUrls: sourceUrls must name at least one URL, since this deployment has no web search provider (${WEB_SEARCH_SETTING} is not set).`,
} as const;

export function researchRunId(workspaceId: string, key: string): string {
  return `research_${sha256Hex(`${workspaceId}\0${key}`).slice(0, 32)}`;
}

export function limitsWithDefaults(limits: Partial<ResearchLimits>): ResearchLimits {
  return {
    maxPages: limits.maxPages ?? RESEARCH_LIMIT_BOUNDS.maxPages.default,
    maxDomains: limits.maxDomains ?? RESEARCH_LIMIT_BOUNDS.maxDomains.default,
    maxBytes: limits.maxBytes ?? RESEARCH_LIMIT_BOUNDS.maxBytes.default,
    timeoutMs: limits.timeoutMs ?? RESEARCH_LIMIT_BOUNDS.timeoutMs.default,
  };
}

/** The fields of a stored source its view shows; a stored source has its fetch time, digest and text. */
const SOURCE_FIELDS = [
  'id',
  'runId',
  'canonicalUrl',
  'title',
  'fetchedAt',
  'sha256',
  'snapshotText',
  'snapshotFileId',
  'createdAt',
] as const;

export interface ResearchSourceView extends Omit<
  Pick<ResearchSource, (typeof SOURCE_FIELDS)[number]>,
  'fetchedAt' | 'sha256' | 'snapshotText'
> {
  fetchedAt: Date;
  sha256: string;
  snapshotText: string;
}

export interface ResearchRunView extends Pick<
  ResearchRun,
  | 'id'
  | 'workspaceId'
  | 'createdById'
  | 'query'
  | 'sourceUrls'
  | 'limits'
  | 'status'
  | 'resultDocumentId'
  | 'error'
  | 'cancelRequestedAt'
  | 'startedAt'
  | 'finishedAt'
  | 'createdAt'
  | 'updatedAt'
> {
  /** Present only when the run names a provider (our extension of the spec's run). */
  aiProvider?: 'cliA' | 'cliB';
  aiModel?: string;
  sources: ResearchSourceView[];
}

function sourceView(s: ResearchSource): ResearchSourceView {
  return { ...pickFields(s, SOURCE_FIELDS), fetchedAt: s.fetchedAt!, sha256: s.sha256!, snapshotText: s.snapshotText ?? '' };
}

function runView(r: ResearchRun, sources: ResearchSource[]): ResearchRunView {
  return {
    id: r.id,
    workspaceId: r.workspaceId,
    createdById: r.createdById,
    query: r.query,
    sourceUrls: r.sourceUrls,
    limits: r.limits ?? {},
    ...(r.aiProvider ? { aiProvider: r.aiProvider } : {}),
    ...(r.aiModel ? { aiModel: r.aiModel } : {}),
    status: r.status,
    resultDocumentId: r.resultDocumentId,
    error: r.error,
    cancelRequestedAt: r.cancelRequestedAt,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    sources: sources.filter((s) => s.runId === r.id && s.outcome === 'stored').map(sourceView),
  };
}

/** The runs with their stored snapshots (one query for the sources of all of them). */
async function viewsOf(em: EntityManager, runs: ResearchRun[]): Promise<ResearchRunView[]> {
  if (runs.length === 0) return [];
  const sources = await em.find(
    ResearchSourceSchema,
    { runId: { $in: runs.map((r) => r.id) }, outcome: 'stored' },
    { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
  );
  return runs.map((r) => runView(r, sources));
}

async function findRun(em: EntityManager, workspaceId: string, id: string): Promise<ResearchRun> {
  const run = await em.findOne(ResearchRunSchema, { id, workspaceId }, { refresh: true });
  if (!run) throw notFound(RESEARCH_MESSAGES.notFound(id));
  return run;
}

export interface CreateResearchInput {
  query: string;
  sourceUrls: string[];
  limits: Partial<ResearchLimits>;
  /** A connected local AI CLI synthesizes the answer (0 model cost); absent: the model endpoint. */
  aiProvider?: 'cliA' | 'cliB';
  aiModel?: string;
}

/** What creating a run needs besides the database. */
export interface ResearchCreateDeps {
  launcher: ResearchLauncher;
  /** A web search provider is configured: a run may name no `sourceUrls` (its query is searched). */
  webSearch: boolean;
}

export interface CreatedResearch {
  run: ResearchRunView;
  deduplicated: boolean;
}

/**
 * POST /research: queues the run named by the key and starts its execution. Without
 * `sourceUrls` the run searches the web for its query, and is refused (`validation_failed`
 * naming the setting) when no provider is configured. A replay (same key, user and body)
 * answers the run as it is now (`deduplicated`), starting its execution again only if it is
 * still queued (a start that failed before); another body under the key is 409.
 */
export async function createResearchRun(
  em: EntityManager,
  deps: ResearchCreateDeps,
  principal: WorkspacePrincipal,
  key: string,
  input: CreateResearchInput,
): Promise<CreatedResearch> {
  const { launcher } = deps;
  if (input.sourceUrls.length === 0 && !deps.webSearch) throw invalidInput(RESEARCH_MESSAGES.noWebSearch, { code: 'validation_failed' });
  const id = researchRunId(principal.workspaceId, key);
  // The provider joins the fingerprint only when given, so a request without it fingerprints as before.
  const provider = { ...(input.aiProvider ? { aiProvider: input.aiProvider } : {}), ...(input.aiModel ? { aiModel: input.aiModel } : {}) };
  const fingerprint = sha256Hex(
    canonicalJson({ userId: principal.userId, query: input.query, sourceUrls: input.sourceUrls, limits: input.limits, ...provider }),
  );
  const now = new Date();
  const inserted = await insertQueuedResearchRun(em, {
    id,
    workspaceId: principal.workspaceId,
    createdById: principal.userId,
    query: input.query,
    sourceUrls: JSON.stringify(input.sourceUrls),
    limits: JSON.stringify(input.limits),
    aiProvider: input.aiProvider ?? null,
    aiModel: input.aiModel ?? null,
    fingerprint,
    now,
  });
  const fresh = inserted.length > 0;
  const run = await findRun(em.fork(), principal.workspaceId, id);
  if (!fresh && run.requestFingerprint !== fingerprint) throw conflict(RESEARCH_MESSAGES.otherRequest);
  if (fresh || run.status === 'queued') {
    try {
      await launcher.start({
        workspaceId: run.workspaceId,
        runId: run.id,
        query: run.query,
        sourceUrls: run.sourceUrls,
        limits: limitsWithDefaults(run.limits),
      });
    } catch (err) {
      // Without an execution the run would stay queued: a fresh row is removed so the key can be retried.
      if (fresh) await em.nativeDelete(ResearchRunSchema, { id, workspaceId: principal.workspaceId });
      throw err;
    }
  }
  // viewsOf gives one view per run.
  const view = (await viewsOf(em.fork(), [await findRun(em.fork(), principal.workspaceId, id)])).at(0)!;
  return { run: view, deduplicated: !fresh };
}

export async function getResearchRun(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<ResearchRunView> {
  // viewsOf gives one view per run.
  return (await viewsOf(em, [await findRun(em, principal.workspaceId, id)])).at(0)!;
}

/** GET /research: newest first (createdAt desc, id desc), optional status filter, opaque cursor. */
export async function listResearchRuns(
  em: EntityManager,
  principal: WorkspacePrincipal,
  query: { status?: string; cursor?: string; limit: number },
): Promise<{ runs: ResearchRunView[]; nextCursor: string | null }> {
  if (query.status !== undefined && !(RESEARCH_STATUSES as readonly string[]).includes(query.status)) {
    throw invalidInput(RESEARCH_MESSAGES.invalidStatus, { code: 'validation_failed' });
  }
  const position = query.cursor ? decodeCursor(query.cursor) : null;
  const scope = { workspaceId: principal.workspaceId, ...(query.status ? { status: query.status as ResearchStatus } : {}) };
  const where = position
    ? { ...scope, $or: [{ createdAt: { $lt: position.createdAt } }, { createdAt: position.createdAt, id: { $lt: position.id } }] }
    : scope;
  const rows = await em.find(ResearchRunSchema, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: query.limit + 1 });
  const { page, nextCursor } = nextCursorOf(rows, query.limit);
  return { runs: await viewsOf(em, page), nextCursor };
}

/**
 * POST /research/{id}/cancel: a queued or running run becomes canceled at once and its execution
 * is cancelled (it stops at its next step); a terminal run is returned as it is.
 */
export async function cancelResearchRun(
  em: EntityManager,
  launcher: ResearchLauncher,
  principal: WorkspacePrincipal,
  id: string,
): Promise<ResearchRunView> {
  const run = await findRun(em, principal.workspaceId, id);
  if (!RESEARCH_TERMINAL_STATUSES.includes(run.status)) {
    const now = new Date();
    if (await cancelLiveResearchRun(em, run, now)) await launcher.cancel(run.id);
  }
  return getResearchRun(em.fork(), principal, id);
}

// ---------------------------------------------------------------------------------------------
// Worker side: status moves made by the workflow's activities. Each is conditional on the run
// not being terminal, so a cancel is never overwritten.

export interface ResearchRunRef {
  workspaceId: string;
  runId: string;
}

/** queued → running; false when the run is terminal already (canceled before it started). */
export async function markResearchRunning(em: EntityManager, ref: ResearchRunRef): Promise<boolean> {
  const now = new Date();
  await markQueuedResearchRunning(em, ref, now);
  const run = await em.findOne(ResearchRunSchema, { id: ref.runId, workspaceId: ref.workspaceId });
  return run?.status === 'running';
}

export async function markResearchFailed(em: EntityManager, ref: ResearchRunRef, error: string): Promise<void> {
  const now = new Date();
  await failLiveResearchRun(em, ref, storableString(error.slice(0, 2000)), now);
}

/** The execution was cancelled (by the API, or by an operator in Temporal): the run is canceled. */
export async function markResearchCanceled(em: EntityManager, ref: ResearchRunRef): Promise<void> {
  const now = new Date();
  await markLiveResearchCanceled(em, ref, now);
}
