import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { EmbeddingsClient } from '../services/models/embeddings';
import {
  claimSyncRun,
  embedPendingChunks,
  executeSyncRun,
  failDocuments,
  failSyncRun,
  finishDocuments,
  nextRunDocuments,
  prepareDocuments,
  SyncError,
  type DocumentRef,
  type SyncRunRef,
} from '../services/knowledge';
import type { ActivityDeps } from './index';

const heartbeat = () => {
  try {
    Context.current().heartbeat();
  } catch {
    /* not inside an activity (never in production) */
  }
};

/** Heartbeats every few seconds while `work` runs, so a dead worker is noticed within the heartbeat timeout. */
async function heartbeating<T>(work: () => Promise<T>, everyMs = 3_000): Promise<T> {
  heartbeat();
  const timer = setInterval(heartbeat, everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

const cancellation = (): AbortSignal | undefined => {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
};

/** A sync failure with a known answer becomes a non-retryable failure the workflow passes on; anything else is retried. */
async function syncFailures<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof SyncError)
      throw ApplicationFailure.nonRetryable(err.message, 'KnowledgeSyncError', { kind: err.kind, code: err.code, envelope: err.envelope });
    throw err;
  }
}

/** The indexing, query-embedding and sync activities (services/knowledge/indexing.ts, sync.ts). */
export function createKnowledgeActivities(deps: ActivityDeps) {
  const embeddings = (): EmbeddingsClient | null => deps.knowledge?.embedder ?? null;

  return {
    async prepareKnowledgeDocuments(input: {
      workspaceId: string;
      documents: DocumentRef[];
    }): Promise<{ prepared: DocumentRef[]; failed: number; embeddings: boolean }> {
      const result = await heartbeating(() =>
        prepareDocuments(deps.orm.em.fork(), deps.blobs, input.workspaceId, input.documents, heartbeat),
      );
      return { prepared: result.prepared, failed: result.failed.length, embeddings: embeddings() !== null };
    },

    async embedKnowledgeChunks(input: {
      workspaceId: string;
      documents: DocumentRef[];
      maxChunks: number;
    }): Promise<{ embedded: number; remaining: number }> {
      const client = embeddings();
      if (!client) return { embedded: 0, remaining: 0 };
      return heartbeating(() =>
        embedPendingChunks(deps.orm.em.fork(), client, input.workspaceId, input.documents, input.maxChunks, {
          signal: cancellation(),
          heartbeat,
        }),
      );
    },

    async finishKnowledgeDocuments(input: { workspaceId: string; documents: DocumentRef[] }): Promise<number> {
      return finishDocuments(deps.orm.em.fork(), input.workspaceId, input.documents);
    },

    async failKnowledgeDocuments(input: { workspaceId: string; documents: DocumentRef[]; error: string }): Promise<void> {
      await failDocuments(deps.orm.em.fork(), input.workspaceId, input.documents, input.error);
    },

    async nextKnowledgeRunDocuments(input: {
      workspaceId: string;
      runId: string;
      afterId: string | null;
      limit: number;
    }): Promise<DocumentRef[]> {
      return nextRunDocuments(deps.orm.em.fork(), input.workspaceId, input.runId, input.afterId, input.limit);
    },

    async claimKnowledgeSync(input: SyncRunRef): Promise<{ leaseToken: string }> {
      return syncFailures(() => claimSyncRun(deps.orm.em.fork(), input));
    },

    async runKnowledgeSync(input: SyncRunRef & { leaseToken: string }): Promise<{ upserted: number; tombstoned: number }> {
      if (!deps.knowledge)
        throw ApplicationFailure.nonRetryable('This worker has no knowledge configuration.', 'KnowledgeSyncError', { kind: 'internal' });
      const config = deps.knowledge;
      // Temporal hears from the activity every few seconds (cancellation arrives with heartbeats); the lease is renewed every third of it.
      return heartbeating(
        () =>
          syncFailures(() =>
            executeSyncRun(
              deps.orm.em.fork(),
              {
                keys: deps.credentials ?? { key: undefined, previousKeys: [], secretKey: config.secretKey },
                config: config.config,
                allowPrivateNetworks: deps.allowPrivateNetworks,
              },
              input,
              { heartbeat, signal: cancellation() },
            ),
          ),
        Math.min(3_000, Math.max(250, Math.floor(input.leaseMs / 3))),
      );
    },

    async failKnowledgeSync(input: SyncRunRef & { leaseToken: string; error: string }): Promise<void> {
      await failSyncRun(deps.orm.em.fork(), input, input.error);
    },

    async embedKnowledgeQuery(input: { text: string }): Promise<number[] | null> {
      const client = embeddings();
      if (!client) return null;
      try {
        const [vector] = await client.embed([input.text], cancellation());
        // One vector per text; null (no embedding) only if the client broke that promise.
        return vector ?? null;
      } catch (err) {
        throw ApplicationFailure.nonRetryable((err as Error).message, 'EmbeddingsFailed');
      }
    },
  };
}
