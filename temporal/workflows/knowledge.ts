import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  ParentClosePolicy,
  continueAsNew,
  isCancellation,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { createActivities } from '../../activities';
import { SEARCH_ATTRIBUTES } from '../shared';

type Activities = ReturnType<typeof createActivities>;

const { prepareKnowledgeDocuments, finishKnowledgeDocuments, failKnowledgeDocuments, nextKnowledgeRunDocuments } =
  proxyActivities<Activities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '15 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 10,
      nonRetryableErrorTypes: ['ExtractionError'],
    },
  });

// Embedding calls: the client retries 429 and 5xx itself; these retries cover longer outages.
const { embedKnowledgeChunks } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

const { embedKnowledgeQuery } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 1 },
});

interface DocumentRef {
  id: string;
  contentVersion: number;
}

/** Chunks embedded per activity call: a crash loses at most this much embedding work. */
const EMBED_CHUNKS_PER_CALL = 256;

async function indexDocuments(workspaceId: string, refs: DocumentRef[]): Promise<{ ready: number; failed: number }> {
  let prepared: DocumentRef[] = [];
  try {
    const result = await prepareKnowledgeDocuments({ workspaceId, documents: refs });
    prepared = result.prepared;
    if (result.embeddings && prepared.length > 0) {
      for (;;) {
        const { remaining } = await embedKnowledgeChunks({ workspaceId, documents: prepared, maxChunks: EMBED_CHUNKS_PER_CALL });
        if (remaining === 0) break;
      }
    }
    const ready = await finishKnowledgeDocuments({ workspaceId, documents: prepared });
    return { ready, failed: result.failed };
  } catch (err) {
    const message = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    await failKnowledgeDocuments({ workspaceId, documents: refs, error: `Indexing failed: ${message}` });
    return { ready: 0, failed: refs.length };
  }
}

export interface KnowledgeIndexDocumentInput {
  workspaceId: string;
  documentId: string;
  contentVersion: number;
}

/**
 * One per uploaded document version (id `knowledge-index-<documentId>-v<version>`): extract and
 * chunk, embed in bounded calls, then ready (or failed). A worker crash resumes at the step it
 * stopped in: chunks already written and embeddings already stored are kept.
 */
export async function knowledgeIndexDocumentWorkflow(input: KnowledgeIndexDocumentInput): Promise<{ ready: number; failed: number }> {
  return indexDocuments(input.workspaceId, [{ id: input.documentId, contentVersion: input.contentVersion }]);
}

export interface KnowledgeIndexRunInput {
  workspaceId: string;
  runId: string;
  afterId?: string | null;
  indexed?: number;
}

/** Documents indexed per activity round of a sync run's indexing. */
const RUN_PAGE = 50;
/** Pages per execution before continuing as new (keeps the history short for 5,000-item runs). */
const PAGES_PER_EXECUTION = 20;

/**
 * Indexes the documents a sync run upserted (id `knowledge-index-<runId>`), page by page in id
 * order, with the same steps as an upload.
 */
export async function knowledgeIndexRunWorkflow(input: KnowledgeIndexRunInput): Promise<{ indexed: number }> {
  let afterId = input.afterId ?? null;
  let indexed = input.indexed ?? 0;
  for (let page = 0; page < PAGES_PER_EXECUTION; page++) {
    const refs = await nextKnowledgeRunDocuments({ workspaceId: input.workspaceId, runId: input.runId, afterId, limit: RUN_PAGE });
    const last = refs.at(-1);
    if (last === undefined) return { indexed };
    await indexDocuments(input.workspaceId, refs);
    indexed += refs.length;
    afterId = last.id;
  }
  return continueAsNew<typeof knowledgeIndexRunWorkflow>({ ...input, afterId, indexed });
}

/** Embeds a search query (model calls run in activities only). */
export async function knowledgeQueryEmbeddingWorkflow(input: { text: string }): Promise<number[]> {
  const vector = await embedKnowledgeQuery(input);
  if (!vector) throw ApplicationFailure.nonRetryable('No embeddings endpoint is configured on the worker.', 'EmbeddingsNotConfigured');
  return vector;
}

// ---------------------------------------------------------------------------------------------
// Sync runs

export interface KnowledgeSyncInput {
  workspaceId: string;
  connectorId: string;
  runId: string;
  options: { maxPages: number; maxItems: number; maxBytes: number; timeoutMs: number };
  leaseMs: number;
}

export interface SyncFailureDetails {
  kind: 'invalid' | 'conflict' | 'internal';
  code?: string;
  envelope?: Record<string, unknown>;
}

const { claimKnowledgeSync, failKnowledgeSync } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 5, nonRetryableErrorTypes: ['KnowledgeSyncError'] },
});

function failureOf(err: unknown): { message: string; details: SyncFailureDetails } {
  let cause: unknown = err;
  while (cause instanceof ActivityFailure || cause instanceof ChildWorkflowFailure) cause = cause.cause;
  if (cause instanceof ApplicationFailure && cause.type === 'KnowledgeSyncError') {
    return { message: cause.message, details: (cause.details?.[0] as SyncFailureDetails | undefined) ?? { kind: 'internal' } };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return { message: `Knowledge sync failed: ${message}`, details: { kind: 'internal' } };
}

/**
 * One sync run (workflow id = run id): claim the connector's lease, fetch and apply the batch
 * (one activity: the batch never enters the history; it heartbeats, and the lease is renewed
 * every third of `leaseMs`), then index the upserted documents in a child workflow that outlives
 * this one. A failure after the claim marks the run and the connector failed.
 */
export async function knowledgeSyncWorkflow(input: KnowledgeSyncInput): Promise<{ upserted: number; tombstoned: number }> {
  const { runKnowledgeSync } = proxyActivities<Activities>({
    startToCloseTimeout: input.options.timeoutMs + 120_000,
    // A worker that died is noticed before the lease runs out; the retry renews the same lease.
    heartbeatTimeout: Math.max(2_000, Math.floor((input.leaseMs * 2) / 3)),
    retry: { initialInterval: '1 second', maximumAttempts: 5, nonRetryableErrorTypes: ['KnowledgeSyncError'] },
  });
  let leaseToken: string | null = null;
  const connectorName = workflowInfo().searchAttributes[SEARCH_ATTRIBUTES.SvcName];
  try {
    // The claim is short and decides the run's state: a cancel requested meanwhile applies after it.
    ({ leaseToken } = await CancellationScope.nonCancellable(() => claimKnowledgeSync(input)));
    const result = await runKnowledgeSync({ ...input, leaseToken });
    if (result.upserted > 0) {
      try {
        await startChild(knowledgeIndexRunWorkflow, {
          workflowId: `knowledge-index-${input.runId}`,
          args: [{ workspaceId: input.workspaceId, runId: input.runId }],
          parentClosePolicy: ParentClosePolicy.ABANDON,
          // Filed like the indexing passes the API starts (temporal/knowledgeClient.ts), under the
          // run's connector name from this execution's start event. Search attributes of a child
          // start are not part of the replay check, so histories recorded without them replay.
          searchAttributes: {
            [SEARCH_ATTRIBUTES.WorkspaceId]: [input.workspaceId],
            [SEARCH_ATTRIBUTES.SvcTrigger]: ['knowledge'],
            ...(connectorName ? { [SEARCH_ATTRIBUTES.SvcName]: connectorName } : {}),
          },
        });
      } catch (err) {
        // An indexing pass of an earlier attempt of this run still works through its documents.
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }
    return result;
  } catch (err) {
    if (isCancellation(err)) throw err;
    const failure = failureOf(err);
    if (leaseToken) await failKnowledgeSync({ ...input, leaseToken, error: failure.message });
    throw ApplicationFailure.nonRetryable(failure.message, 'KnowledgeSyncError', failure.details);
  }
}
