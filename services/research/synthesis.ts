/**
 * The last step of a research run: the stored snapshots go to the language model
 * (services/models/chat.ts) with the query, and its answer, with numbered citations and the
 * list of sources, becomes a document of the workspace's "Research" knowledge base (created when
 * missing). The document, the run's `resultDocumentId`, token usage and cost are written in one
 * transaction, only while the run is still running (a cancel wins).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ResearchRunSchema, ResearchSourceSchema, type ResearchRun, type ResearchSource } from '../../db/entities';
import type { LlmConfig, LocalAiCliConfig } from '../kernel/config';
import type { CredentialKeySettings } from '../credentials/keys';
import { addTextDocument, findOrCreateKnowledgeBase } from '../knowledge';
import { workspaceChatClient, type ChatMessage, type ChatResult } from '../models/chat';
import { askLocalAiCli } from '../workers/localAiCli';
import type { ResearchRunRef } from './runs';
import { lockResearchRunStatus, markResearchSucceeded } from './store';

export const RESEARCH_KNOWLEDGE_BASE = 'Research';
/** Characters of each snapshot given to the model, and of all of them together. */
const PER_SOURCE_CHARS = 12_000;
const TOTAL_SOURCE_CHARS = 60_000;

export interface SynthesisDeps {
  llm: LlmConfig;
  keys: CredentialKeySettings;
  allowPrivateNetworks: boolean;
  signal?: AbortSignal;
  /** Local AI CLIs, for runs whose `aiProvider` is `cliA` or `cliB`. */
  localAiCli?: LocalAiCliConfig;
}

export type SynthesisOutcome =
  | { kind: 'succeeded'; documentId: string; contentVersion: number }
  /** No snapshot was stored: nothing to research (the run fails). */
  | { kind: 'no_sources' }
  /** The run is no longer running (canceled meanwhile). */
  | { kind: 'not_running' };

/** The document id of a run's answer: stable, so a retried activity adds it once. */
export const researchDocumentId = (runId: string) => `doc_${runId}`;

/** The web search that gave a run its sources (runs without source URLs): kept in the answer's metadata. */
export interface SearchSummary {
  provider: string;
  results: Array<{ url: string; title: string | null }>;
}

export async function synthesizeResearch(
  em: EntityManager,
  deps: SynthesisDeps,
  ref: ResearchRunRef,
  search?: SearchSummary,
): Promise<SynthesisOutcome> {
  const run = await em.findOneOrFail(ResearchRunSchema, { id: ref.runId, workspaceId: ref.workspaceId });
  if (run.status === 'succeeded' && run.resultDocumentId) return { kind: 'succeeded', documentId: run.resultDocumentId, contentVersion: 1 };
  if (run.status !== 'running') return { kind: 'not_running' };
  const considered = await em.find(ResearchSourceSchema, { runId: run.id }, { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const stored = considered.filter((s) => s.outcome === 'stored');
  if (stored.length === 0) return { kind: 'no_sources' };

  const result = await answerOf(em, deps, run, promptOf(run.query, stored));
  const answer = (result.content ?? '').trim();
  const text = documentText(run.query, answer, stored);
  const metadata = {
    researchRunId: run.id,
    query: run.query,
    model: result.model,
    usage: result.usage,
    costCredits: result.costCredits,
    sources: stored.map((s, i) => ({ n: i + 1, url: s.canonicalUrl, title: s.title })),
    notFetched: considered.filter((s) => s.outcome !== 'stored').map((s) => ({ url: s.url, outcome: s.outcome, reason: s.reason })),
    ...(search ? { search } : {}),
  };

  return em.transactional(async (tx) => {
    if ((await lockResearchRunStatus(tx, run.id)) !== 'running') return { kind: 'not_running' } as const;
    const kb = await findOrCreateKnowledgeBase(
      tx,
      run.workspaceId,
      RESEARCH_KNOWLEDGE_BASE,
      'Answers of research runs, with their sources.',
    );
    const doc = await addTextDocument(tx, {
      id: researchDocumentId(run.id),
      workspaceId: run.workspaceId,
      knowledgeBaseId: kb.id,
      name: `Research: ${run.query}`.slice(0, 200),
      mimeType: 'text/markdown',
      text,
      metadata,
      createdById: run.createdById,
    });
    const now = new Date();
    await markResearchSucceeded(tx, {
      runId: run.id,
      documentId: doc.id,
      promptTokens: result.usage.promptTokens,
      completionTokens: result.usage.completionTokens,
      costCredits: result.costCredits,
      now,
    });
    return { kind: 'succeeded', documentId: doc.id, contentVersion: doc.contentVersion } as const;
  });
}

/**
 * The model's answer: the deployment's (or the workspace's) chat endpoint, or with `aiProvider`
 * the workspace's connected local AI CLI (one text prompt; its usage is the CLI account's, so
 * 0 tokens and 0 credits are recorded).
 */
async function answerOf(em: EntityManager, deps: SynthesisDeps, run: ResearchRun, messages: ChatMessage[]): Promise<ChatResult> {
  if (run.aiProvider)
    return askLocalAiCli(em, { config: deps.localAiCli, keys: deps.keys }, run.workspaceId, run.aiProvider, messages, run.aiModel);
  const client = await workspaceChatClient(em, deps, run.workspaceId, run.aiModel);
  return client.chat({ messages, temperature: 0.2, signal: deps.signal });
}

function promptOf(query: string, sources: ResearchSource[]): ChatMessage[] {
  let budget = TOTAL_SOURCE_CHARS;
  const blocks = sources.map((s, i) => {
    const take = Math.max(0, Math.min(PER_SOURCE_CHARS, budget));
    budget -= take;
    const text = (s.snapshotText ?? '').slice(0, take);
    return `[${i + 1}] ${s.title ?? s.canonicalUrl}\nURL: ${s.canonicalUrl}\n\n${text}`;
  });
  return [
    {
      role: 'system',
      content:
        'You are a careful research assistant. Answer the question using only the numbered sources given. ' +
        'Cite every claim with the source numbers in square brackets, e.g. [1] or [2][3]. ' +
        'If the sources do not answer the question, say so. Answer in Markdown without a title.',
    },
    { role: 'user', content: `Question: ${query}\n\nSources:\n\n${blocks.join('\n\n---\n\n')}` },
  ];
}

function documentText(query: string, answer: string, sources: ResearchSource[]): string {
  const list = sources.map((s, i) => `[${i + 1}] ${s.title ? `${s.title} — ` : ''}${s.canonicalUrl}`).join('\n');
  return `# ${query}\n\n${answer || '(The model gave no answer.)'}\n\n## Sources\n\n${list}\n`;
}
