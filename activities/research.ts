import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { DomainError } from '../services/kernel/errors';
import { modelApiErrorStatus } from '../services/models/embeddings';
import type { LlmConfig } from '../services/kernel/config';
import {
  fetchResearchSource,
  markResearchCanceled,
  markResearchFailed,
  markResearchRunning,
  recordSkippedSource,
  RESEARCH_MESSAGES,
  synthesizeResearch,
  type FetchSourceInput,
  type FetchSourceResult,
  type ResearchRunRef,
} from '../services/research';
import { heartbeating } from './heartbeat';
import { LocalAiCliUnavailable } from '../services/workers/localAiCli';
import type { ActivityDeps } from './index';

const NO_LLM: LlmConfig = { baseUrl: undefined, apiKey: undefined, model: 'unset', timeoutMs: 60_000, maxRetries: 3, prices: {} };

/** Model answers that another attempt would not change (bad request, auth, unknown model). */
function permanent(err: unknown): boolean {
  if (err instanceof DomainError) return true;
  const status = modelApiErrorStatus(err);
  return status !== undefined && status >= 400 && status < 500 && ![408, 409, 429].includes(status);
}

/** The research run's steps (services/research). */
export function createResearchActivities(deps: ActivityDeps) {
  const ref = (input: ResearchRunRef): ResearchRunRef => ({ workspaceId: input.workspaceId, runId: input.runId });
  return {
    async startResearchRun(input: ResearchRunRef): Promise<boolean> {
      return markResearchRunning(deps.orm.em.fork(), ref(input));
    },

    async recordResearchSkip(input: ResearchRunRef & { url: string; reason: string }): Promise<void> {
      await recordSkippedSource(deps.orm.em.fork(), ref(input), input.url, input.reason);
    },

    async fetchResearchSource(input: FetchSourceInput): Promise<FetchSourceResult> {
      const signal = Context.current().cancellationSignal;
      return heartbeating(() =>
        fetchResearchSource(deps.orm.em.fork(), { allowPrivateNetworks: deps.allowPrivateNetworks, signal }, input),
      );
    },

    async synthesizeResearchRun(input: ResearchRunRef) {
      if (!deps.credentials) throw ApplicationFailure.nonRetryable('This worker has no credential keys configured.', 'ResearchFailed');
      const keys = deps.credentials;
      const signal = Context.current().cancellationSignal;
      try {
        const outcome = await heartbeating(() =>
          synthesizeResearch(
            deps.orm.em.fork(),
            { llm: deps.llm ?? NO_LLM, keys, allowPrivateNetworks: deps.allowPrivateNetworks, signal, localAiCli: deps.localAiCli },
            ref(input),
          ),
        );
        if (outcome.kind === 'no_sources') throw ApplicationFailure.nonRetryable(RESEARCH_MESSAGES.noSources, 'ResearchFailed');
        return outcome;
      } catch (err) {
        if (err instanceof LocalAiCliUnavailable)
          throw ApplicationFailure.nonRetryable(`The answer could not be synthesized: ${err.message}`, 'ResearchFailed');
        if (permanent(err))
          throw ApplicationFailure.nonRetryable(`The answer could not be synthesized: ${(err as Error).message}`, 'ResearchFailed');
        throw err;
      }
    },

    async failResearchRun(input: ResearchRunRef & { error: string }): Promise<void> {
      await markResearchFailed(deps.orm.em.fork(), ref(input), input.error);
    },

    async cancelResearchRunRow(input: ResearchRunRef): Promise<void> {
      await markResearchCanceled(deps.orm.em.fork(), ref(input));
    },
  };
}
