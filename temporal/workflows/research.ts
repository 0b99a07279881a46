import {
  ApplicationFailure,
  ActivityFailure,
  CancellationScope,
  ParentClosePolicy,
  isCancellation,
  proxyActivities,
  startChild,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { createActivities } from '../../activities';
import { knowledgeIndexDocumentWorkflow } from './knowledge';
import { knowledgeIndexDocumentWorkflowId } from '../shared';

type Activities = ReturnType<typeof createActivities>;

export interface ResearchWorkflowInput {
  workspaceId: string;
  runId: string;
  /**
   * The run's source URLs (normalized) with their hostnames, in the order given. Empty: the run
   * named none, and its sources are the results of a web search of its query.
   */
  sources: Array<{ url: string; host: string }>;
  limits: { maxPages: number; maxDomains: number; maxBytes: number; timeoutMs: number };
}

const { startResearchRun, recordResearchSkip, failResearchRun, cancelResearchRunRow } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

const { synthesizeResearchRun } = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumAttempts: 3, nonRetryableErrorTypes: ['ResearchFailed'] },
});

/** Search results kept at most: as many URLs as a run may name (MAX_SOURCE_URLS). */
const MAX_SEARCH_RESULTS = 20;

function messageOf(err: unknown): string {
  let cause: unknown = err;
  while (cause instanceof ActivityFailure) cause = cause.cause;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * One research run (workflow id = run id). A run without source URLs first searches the web for
 * its query (one activity; its results are the sources). Sources are fetched one activity each,
 * in order, then the same-domain pages they link to, within the run's limits; each activity
 * stores its snapshot before it completes, and a retried one (a worker died) returns the stored
 * row without fetching again. Then one activity synthesizes the answer into the "Research" knowledge base, whose
 * indexing runs as a child workflow that outlives this one. Cancellation stops the run at its
 * next step and marks it canceled.
 */
export async function researchWorkflow(
  input: ResearchWorkflowInput,
): Promise<{ status: 'succeeded' | 'canceled'; resultDocumentId: string | null }> {
  const ref = { workspaceId: input.workspaceId, runId: input.runId };
  const { limits } = input;
  const { fetchResearchSource } = proxyActivities<Activities>({
    // robots.txt and the page, each within timeoutMs
    startToCloseTimeout: 2 * limits.timeoutMs + 30_000,
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
  });
  const { searchResearchSources } = proxyActivities<Activities>({
    // one provider request within timeoutMs; retried like the fetches
    startToCloseTimeout: limits.timeoutMs + 30_000,
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5, nonRetryableErrorTypes: ['ResearchFailed'] },
  });
  try {
    if (!(await startResearchRun(ref))) return { status: 'canceled', resultDocumentId: null };
    let sources = input.sources;
    let search: { provider: string; results: Array<{ url: string; title: string | null }> } | undefined;
    if (sources.length === 0) {
      // maxPages bounds the results taken: each is a page to fetch, read like a given URL from here on.
      const found = await searchResearchSources({
        ...ref,
        count: Math.min(limits.maxPages, MAX_SEARCH_RESULTS),
        timeoutMs: limits.timeoutMs,
      });
      sources = found.results.map((r) => ({ url: r.url, host: r.host }));
      search = { provider: found.provider, results: found.results.map((r) => ({ url: r.url, title: r.title })) };
    }
    const hosts: string[] = [];
    for (const s of sources) if (!hosts.includes(s.host) && hosts.length < limits.maxDomains) hosts.push(s.host);

    const queue = sources.map((s) => ({ url: s.url, host: s.host, source: true }));
    const seen = new Set(queue.map((q) => q.url));
    let pages = 0;
    let bytes = 0;
    while (queue.length > 0) {
      const item = queue.shift()!;
      if (item.source && !hosts.includes(item.host)) {
        await recordResearchSkip({ ...ref, url: item.url, reason: `Over the run's maxDomains limit (${limits.maxDomains}).` });
        continue;
      }
      if (pages >= limits.maxPages || bytes >= limits.maxBytes) {
        const which = pages >= limits.maxPages ? `maxPages limit (${limits.maxPages})` : `maxBytes limit (${limits.maxBytes})`;
        if (item.source) await recordResearchSkip({ ...ref, url: item.url, reason: `Over the run's ${which}.` });
        continue;
      }
      const result = await fetchResearchSource({
        ...ref,
        url: item.url,
        timeoutMs: limits.timeoutMs,
        maxBytes: limits.maxBytes - bytes,
        domains: hosts,
      });
      if (result.outcome === 'stored' || result.outcome === 'failed') pages++;
      bytes += result.bytes;
      for (const link of result.links) {
        if (seen.has(link)) continue;
        seen.add(link);
        queue.push({ url: link, host: '', source: false });
      }
    }

    const outcome = await synthesizeResearchRun(search ? { ...ref, search } : ref);
    if (outcome.kind !== 'succeeded') return { status: 'canceled', resultDocumentId: null };
    try {
      await startChild(knowledgeIndexDocumentWorkflow, {
        workflowId: knowledgeIndexDocumentWorkflowId(outcome.documentId, outcome.contentVersion),
        args: [{ workspaceId: input.workspaceId, documentId: outcome.documentId, contentVersion: outcome.contentVersion }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
    } catch (err) {
      // Started by an earlier attempt of this run.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    return { status: 'succeeded', resultDocumentId: outcome.documentId };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => cancelResearchRunRow(ref));
      throw err;
    }
    const message = messageOf(err);
    await failResearchRun({ ...ref, error: message });
    throw ApplicationFailure.nonRetryable(message, 'ResearchFailed');
  }
}
