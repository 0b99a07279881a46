import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure } from '@temporalio/common';
import type { KnowledgeConfig } from '../services/kernel/config';
import type { KnowledgeIndexer, KnowledgeSyncLauncher, QueryEmbedder, SyncExecutionOutcome } from '../services/kernel/ports';
import type { KnowledgeSyncInput, SyncFailureDetails } from './workflows/knowledge';
import {
  knowledgeIndexDocumentWorkflowId,
  knowledgeIndexRunWorkflowId,
  SEARCH_ATTRIBUTES,
  svcNameValue,
  TASK_QUEUE,
  WORKFLOW_TYPES,
} from './shared';
import { cancelExecution, startOnce } from './client';

const KNOWLEDGE_TRIGGER = 'knowledge';
/** The SvcName of query embeddings: the caller has no base or connector to name them after, and the query stays out of it. */
const QUERY_EMBEDDING_NAME = 'query embedding';

/** Starts indexing workflows; a pass already running for the same target is left as it is. */
export function temporalKnowledgeIndexer(client: Client): KnowledgeIndexer {
  return {
    async start(target) {
      const searchAttributes = {
        [SEARCH_ATTRIBUTES.WorkspaceId]: [target.workspaceId],
        [SEARCH_ATTRIBUTES.SvcTrigger]: [KNOWLEDGE_TRIGGER],
        ...(target.name === undefined ? {} : { [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(target.name)] }),
      };
      if (target.kind === 'document') {
        await startOnce(client, WORKFLOW_TYPES.knowledgeIndexDocument, {
          taskQueue: TASK_QUEUE,
          workflowId: knowledgeIndexDocumentWorkflowId(target.documentId, target.contentVersion),
          args: [{ workspaceId: target.workspaceId, documentId: target.documentId, contentVersion: target.contentVersion }],
          searchAttributes,
        });
      } else {
        await startOnce(client, WORKFLOW_TYPES.knowledgeIndexRun, {
          taskQueue: TASK_QUEUE,
          workflowId: knowledgeIndexRunWorkflowId(target.runId),
          args: [{ workspaceId: target.workspaceId, runId: target.runId }],
          searchAttributes,
        });
      }
    },
  };
}

/** Embeds search queries through a short workflow whose activity calls the embeddings endpoint. */
export function temporalQueryEmbedder(client: Client, config: KnowledgeConfig): QueryEmbedder {
  return {
    configured: Boolean(config.embeddings.baseUrl),
    model: config.embeddings.model,
    async embed(workspaceId, text, budgetMs) {
      const handle = await client.workflow.start(WORKFLOW_TYPES.knowledgeQueryEmbedding, {
        taskQueue: TASK_QUEUE,
        workflowId: `knowledge-query-${randomUUID()}`,
        args: [{ text }],
        workflowExecutionTimeout: budgetMs,
        searchAttributes: {
          [SEARCH_ATTRIBUTES.WorkspaceId]: [workspaceId],
          [SEARCH_ATTRIBUTES.SvcTrigger]: [KNOWLEDGE_TRIGGER],
          [SEARCH_ATTRIBUTES.SvcName]: [QUERY_EMBEDDING_NAME],
        },
      });
      try {
        return (await handle.result()) as number[];
      } catch (err) {
        const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
        const root = (cause as { cause?: unknown } | undefined)?.cause ?? cause;
        throw new Error(
          root instanceof ApplicationFailure || root instanceof Error ? root.message : 'the query embedding did not finish in time',
        );
      }
    },
  };
}

const SYNC_TRIGGER = 'knowledge.sync';

/** Starts sync runs (workflow id = run id) and waits for them; cancels them. */
export function temporalKnowledgeSyncLauncher(client: Client): KnowledgeSyncLauncher {
  return {
    async execute(start, waitMs) {
      // The name is for operators (a search attribute), not for the workflow.
      const { connectorName, ...rest } = start;
      const input: KnowledgeSyncInput = rest;
      const handle = await client.workflow.start(WORKFLOW_TYPES.knowledgeSync, {
        taskQueue: TASK_QUEUE,
        workflowId: start.runId,
        args: [input],
        // A replay while an execution of the run is still open waits for that one.
        workflowIdConflictPolicy: 'USE_EXISTING',
        memo: { connectorId: start.connectorId },
        searchAttributes: {
          [SEARCH_ATTRIBUTES.WorkspaceId]: [start.workspaceId],
          [SEARCH_ATTRIBUTES.SvcTrigger]: [SYNC_TRIGGER],
          [SEARCH_ATTRIBUTES.SvcName]: [svcNameValue(connectorName)],
        },
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<SyncExecutionOutcome>((resolve) => {
        timer = setTimeout(() => resolve({ kind: 'still_running' }), waitMs);
      });
      try {
        return await Promise.race([handle.result().then((): SyncExecutionOutcome => ({ kind: 'succeeded' }), outcomeOfFailure), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (runId) => cancelExecution(client, runId),
  };
}

function outcomeOfFailure(err: unknown): SyncExecutionOutcome {
  if (!(err instanceof WorkflowFailedError)) throw err;
  const cause = err.cause;
  if (cause instanceof CancelledFailure) return { kind: 'cancelled' };
  if (cause instanceof TerminatedFailure)
    return {
      kind: 'failed',
      errorKind: 'internal',
      code: undefined,
      message: "The sync run's execution was terminated before it finished.",
    };
  if (cause instanceof ApplicationFailure && cause.type === 'KnowledgeSyncError') {
    const details = (cause.details?.[0] ?? { kind: 'internal' }) as SyncFailureDetails;
    return { kind: 'failed', errorKind: details.kind, code: details.code, message: cause.message, envelope: details.envelope };
  }
  return { kind: 'failed', errorKind: 'internal', code: undefined, message: cause?.message ?? err.message };
}
