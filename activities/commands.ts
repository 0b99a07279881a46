import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { LocalAiCliUnavailable } from '../services/workers/localAiCli';
import {
  blockJob,
  cancelJobRow,
  failJob,
  finishJob,
  fireSchedule,
  nextQueuedJob,
  planJob,
  prepareRunAction,
  recordRunAction,
  resumeJob,
  runAction,
  startJob,
  type AgentDeps,
  type CommandPluggableTools,
} from '../services/commands';
import { invalidInput } from '../services/kernel/errors';
import { sha256Hex } from '../services/kernel/ids';
import type { ResearchLauncher } from '../services/kernel/ports';
import { createResearchRun } from '../services/research';
import { loadSkills } from '../services/skills';
import type { QuerySettings } from '../services/databases';
import type { LlmConfig, LocalAiCliConfig } from '../services/kernel/config';
import type { CommandJobEngine } from '../services/kernel/ports';
import { heartbeating } from './heartbeat';
import type { ActivityDeps } from './index';

/** What command job activities need besides the database (same configuration as the API). */
export interface CommandActivityConfig {
  llm: LlmConfig;
  confirmationTtlSeconds: number;
  databaseQuery: QuerySettings;
  /** Research and skills tools; by default the research and skills areas (builtInTools below). */
  pluggable?: CommandPluggableTools;
  /** Local AI CLIs, for jobs whose `aiProvider` is `cliA` or `cliB`. */
  localAiCli?: LocalAiCliConfig;
}

/** Activities of command jobs: thin adapters over services/commands. */
export function createCommandActivities(deps: ActivityDeps) {
  const em = () => deps.orm.em.fork();
  const agentDeps = (): AgentDeps => {
    if (!deps.commands) throw new Error('The worker has no command job configuration.');
    if (!deps.credentials) throw new Error('The worker has no credential keys.');
    return {
      llm: deps.commands.llm,
      keys: deps.credentials,
      allowPrivateNetworks: deps.allowPrivateNetworks,
      confirmationTtlSeconds: deps.commands.confirmationTtlSeconds,
      databaseQuery: deps.commands.databaseQuery,
      blobs: deps.blobs,
      pluggable: deps.commands.pluggable ?? builtInTools(),
      localAiCli: deps.commands.localAiCli,
    };
  };
  // The research and skills areas, as agent tools with the job creator's permissions.
  const builtInTools = (): CommandPluggableTools => ({
    skills: {
      load: async (ctx, args) =>
        (await loadSkills(ctx.em, ctx.principal, { skillIds: args.skillIds })).skills.map((s) => ({
          id: s.id,
          name: s.name,
          instructions: s.instructions,
        })),
    },
    research: deps.researchLauncherFor
      ? {
          start: async (ctx, args) => {
            const sourceUrls = researchSources(args.sourceUrls);
            // One run per job and question: a retried activity finds the run it started.
            const key = `command-${ctx.job.id}-${sha256Hex(JSON.stringify([args.query, sourceUrls])).slice(0, 32)}`;
            const launcher: ResearchLauncher = deps.researchLauncherFor!(Context.current().client);
            const { run } = await createResearchRun(ctx.em, { launcher, webSearch: Boolean(deps.webSearch) }, ctx.principal, key, {
              query: args.query,
              sourceUrls,
              limits: {},
            });
            return { runId: run.id, status: run.status };
          },
        }
      : undefined,
  });
  const engine = (): CommandJobEngine => {
    if (!deps.commandEngineFor) throw new Error('The worker cannot reach command threads.');
    return deps.commandEngineFor(Context.current().client);
  };
  return {
    nextQueuedCommandJob: (threadId: string) => nextQueuedJob(em(), threadId),
    startCommandJob: async (jobId: string) => ({ started: await startJob(em(), jobId) }),
    // Model calls and tools heartbeat while they wait (the workflow gives them a heartbeatTimeout).
    planCommandJob: (jobId: string) => heartbeating(() => planJob(em(), agentDeps(), jobId)).catch(finalWhenCliUnavailable),
    resumeCommandJob: (jobId: string) => resumeJob(em(), jobId),
    blockCommandJob: (jobId: string) => blockJob(em(), jobId),
    runCommandAction: (jobId: string, actionId: string) => heartbeating(() => runAction(em(), agentDeps(), jobId, actionId)),
    prepareCommandRun: (jobId: string, actionId: string) => prepareRunAction(em(), jobId, actionId),
    recordCommandRun: (
      jobId: string,
      actionId: string,
      runId: string,
      outcome: { status: 'succeeded' | 'failed'; output?: unknown; error?: string },
    ) => recordRunAction(em(), jobId, actionId, runId, outcome),
    finishCommandJob: (jobId: string) => heartbeating(() => finishJob(em(), agentDeps(), jobId)).catch(finalWhenCliUnavailable),
    failCommandJob: (jobId: string, message: string, from: Array<'queued' | 'running' | 'waiting_confirmation'>) =>
      failJob(em(), jobId, message, from),
    cancelCommandJobRow: (jobId: string) => cancelJobRow(em(), jobId),
    fireCommandSchedule: (scheduleId: string, firingId: string) => fireSchedule(em(), scheduleId, firingId),
    enqueueCommandThread: (thread: { workspaceId: string; threadId: string; title?: string }) => engine().enqueue(thread),
  };
}

/** A job's CLI that is not configured or not connected will not be by the next attempt: the job fails at once with the reason. */
function finalWhenCliUnavailable(err: unknown): never {
  if (err instanceof LocalAiCliUnavailable) throw ApplicationFailure.nonRetryable(err.message, 'LocalAiCliUnavailable');
  throw err;
}

/**
 * The agent's source URLs: up to 20 http(s) URLs without credentials, deduplicated. None: the run
 * searches the web for its question, which `createResearchRun` refuses when no provider is configured.
 */
function researchSources(urls: string[]): string[] {
  const out = new Set<string>();
  for (const raw of urls) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw invalidInput(`sourceUrls: "${String(raw).slice(0, 200)}" is not a URL.`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password)
      throw invalidInput('sourceUrls must be http(s) URLs without credentials.');
    url.hash = '';
    out.add(url.toString());
  }
  if (out.size > 20) throw invalidInput('sourceUrls must name at most 20 URLs.');
  return [...out];
}
