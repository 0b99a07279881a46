/**
 * The agent's steps, run by the job workflow's activities (model calls happen only here, never
 * in workflow code or request handlers): plan with the model and the offered tools, act one
 * action at a time (each leaves a trace), and answer with the model from the traces. Every step
 * is idempotent: a retried activity finds its work already recorded.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkflowGraph } from '../../engine/types';
import type { CommandCitation, CommandJobRow, CommandPlan, CommandTrace } from '../../db/entities';
import type { LlmConfig, LocalAiCliConfig } from '../kernel/config';
import { askLocalAiCli } from '../workers/localAiCli';
import type { CredentialKeySettings } from '../credentials';
import { workspaceChatClient, type ChatMessage, type ChatResult } from '../models/chat';
import { COMMAND_TOOLS, jobPrincipal, offeredTools, prepareWorkflowRun, type CommandToolDeps } from './tools';
import { addJobCost, appendTrace, findJob, markConfirmationResumed, moveJob, updateJob } from './store';

export interface AgentDeps extends CommandToolDeps {
  llm: LlmConfig;
  keys: CredentialKeySettings;
  allowPrivateNetworks: boolean;
  confirmationTtlSeconds: number;
  /** Local AI CLIs, for jobs whose `aiProvider` is `cliA` or `cliB`. */
  localAiCli?: LocalAiCliConfig;
}

const CLI_PROVIDERS = new Set(['cliA', 'cliB']);

const SYSTEM_PROMPT =
  'You are the workspace assistant. Use the tools to answer or to act. Tools that change things (running workflows, starting research) are confirmed by a person before they run.';

async function requireJob(em: EntityManager, jobId: string): Promise<CommandJobRow> {
  const job = await findJob(em, jobId);
  if (!job) throw new Error(`Command job ${jobId} does not exist.`);
  return job;
}

async function chat(
  em: EntityManager,
  deps: AgentDeps,
  job: CommandJobRow,
  messages: ChatMessage[],
  withTools: boolean,
): Promise<ChatResult> {
  if (job.ai_provider && CLI_PROVIDERS.has(job.ai_provider)) {
    // A connected local AI CLI answers in text: no tool calls, so the plan has no actions; its
    // usage is the CLI account's, not ours (0 credits).
    return askLocalAiCli(
      em,
      { config: deps.localAiCli, keys: deps.keys },
      job.workspace_id,
      job.ai_provider as 'cliA' | 'cliB',
      messages,
      job.ai_model,
    );
  }
  const client = await workspaceChatClient(em, deps, job.workspace_id, job.ai_model);
  const tools = withTools ? offeredTools(deps).map((t) => t.definition) : undefined;
  const result = await client.chat({ messages, ...(tools ? { tools } : {}) });
  await addJobCost(em, job.id, result.costCredits);
  return result;
}

function userMessages(job: CommandJobRow): ChatMessage[] {
  const context =
    job.assistant_context === null || job.assistant_context === undefined
      ? []
      : [{ role: 'system' as const, content: `Context: ${JSON.stringify(job.assistant_context)}` }];
  const attachments = job.attachments.length
    ? `\n\nAttached files: ${job.attachments.map((a) => `${a.name} (fileId ${a.id})`).join(', ')}`
    : '';
  return [{ role: 'system', content: SYSTEM_PROMPT }, ...context, { role: 'user', content: `${job.message}${attachments}` }];
}

/** queued → running; false when the job was canceled (or moved) before it started. */
export async function startJob(em: EntityManager, jobId: string): Promise<boolean> {
  if (await moveJob(em, jobId, ['queued'], { status: 'running', progress_message: 'Planning.' })) return true;
  const job = await findJob(em, jobId);
  // A retried start finds the job already running (or further): go on.
  return Boolean(job && job.status !== 'canceled' && job.status !== 'failed' && job.status !== 'blocked' && job.status !== 'succeeded');
}

export interface PlannedJob {
  actions: Array<{ id: string; tool: string; kind: 'activity' | 'run' }>;
  confirmation: { id: string; expiresAtMs: number } | null;
}

/** Plans the job with the model; a plan with side effects gets a `cnf_` confirmation and waits. */
export async function planJob(em: EntityManager, deps: AgentDeps, jobId: string): Promise<PlannedJob> {
  let job = await requireJob(em, jobId);
  if (!job.plan) {
    const answer = await chat(em, deps, job, userMessages(job), true);
    const actions = answer.toolCalls.map((call) => ({
      id: call.id,
      tool: call.name,
      arguments: call.arguments ?? {},
      sideEffects: COMMAND_TOOLS[call.name]?.sideEffects ?? false,
    }));
    const plan: CommandPlan = {
      id: `plan_${randomUUID()}`,
      summary: answer.content,
      actions,
      requiresConfirmation: actions.some((a) => a.sideEffects),
    };
    const confirm = plan.requiresConfirmation
      ? {
          confirmation_id: `cnf_${randomUUID()}`,
          confirmation_expires_at: new Date(Date.now() + deps.confirmationTtlSeconds * 1000),
          confirmation_state: 'pending' as const,
        }
      : {};
    const moved = await moveJob(em, jobId, ['running'], {
      plan,
      plan_id: plan.id,
      ...confirm,
      ...(plan.requiresConfirmation
        ? { status: 'waiting_confirmation', progress_message: 'Waiting for confirmation of the plan.' }
        : { progress_message: 'Acting.' }),
    });
    job = moved ?? (await requireJob(em, jobId));
  }
  const plan = job.plan!;
  return {
    actions: plan.actions.map((a) => ({ id: a.id, tool: a.tool, kind: COMMAND_TOOLS[a.tool]?.kind ?? 'activity' })),
    confirmation:
      plan.requiresConfirmation && job.confirmation_id && job.confirmation_expires_at
        ? { id: job.confirmation_id, expiresAtMs: new Date(job.confirmation_expires_at).getTime() }
        : null,
  };
}

/** The confirmation resumed the job: waiting_confirmation → running. */
export async function resumeJob(em: EntityManager, jobId: string): Promise<void> {
  await moveJob(em, jobId, ['waiting_confirmation'], {
    status: 'running',
    confirmation_state: 'resumed',
    progress_message: 'Confirmed; acting.',
  });
  await markConfirmationResumed(em, jobId);
}

/** The confirmation window closed: waiting_confirmation → blocked. */
export async function blockJob(em: EntityManager, jobId: string): Promise<void> {
  await moveJob(em, jobId, ['waiting_confirmation'], {
    status: 'blocked',
    confirmation_state: 'expired',
    progress_message: 'The confirmation expired; the plan was not executed.',
  });
}

/** Runs one read-only (or pluggable) action and records its trace; a failing tool leaves a failed trace. */
export async function runAction(em: EntityManager, deps: AgentDeps, jobId: string, actionId: string): Promise<void> {
  const job = await requireJob(em, jobId);
  if (job.traces.some((t) => t.actionId === actionId)) return;
  const action = job.plan?.actions.find((a) => a.id === actionId);
  if (!action) return;
  const startedAt = new Date().toISOString();
  const tool = COMMAND_TOOLS[action.tool];
  let trace: CommandTrace;
  try {
    if (!tool?.execute || (tool.available && !tool.available(deps))) throw new Error(`Tool "${action.tool}" is not available.`);
    const principal = await jobPrincipal(em, job);
    const outcome = await tool.execute({ em, job, principal, deps }, action.arguments);
    trace = {
      actionId,
      tool: action.tool,
      arguments: action.arguments,
      status: 'succeeded',
      output: outcome.output,
      error: null,
      runId: null,
      citations: outcome.citations ?? [],
      startedAt,
      finishedAt: new Date().toISOString(),
      ...(outcome.ragMode ? { ragMode: outcome.ragMode } : {}),
    };
  } catch (err) {
    trace = {
      actionId,
      tool: action.tool,
      arguments: action.arguments,
      status: 'failed',
      output: null,
      error: (err as Error).message,
      runId: null,
      citations: [],
      startedAt,
      finishedAt: new Date().toISOString(),
    };
  }
  await appendTrace(em, jobId, trace);
}

/** Prepares a `run_workflow` action's run; null (with a failed trace) when it is refused. */
export async function prepareRunAction(
  em: EntityManager,
  jobId: string,
  actionId: string,
): Promise<{ runId: string; workflowId: string; name: string; graph: WorkflowGraph; input: unknown } | null> {
  const job = await requireJob(em, jobId);
  const action = job.plan?.actions.find((a) => a.id === actionId);
  if (!action || job.traces.some((t) => t.actionId === actionId)) return null;
  const prepared = await prepareWorkflowRun(em, job, actionId, action.arguments);
  if ('refused' in prepared) {
    const now = new Date().toISOString();
    await appendTrace(em, jobId, {
      actionId,
      tool: action.tool,
      arguments: action.arguments,
      status: 'failed',
      output: null,
      error: prepared.refused,
      runId: null,
      citations: [],
      startedAt: now,
      finishedAt: now,
    });
    return null;
  }
  await updateJob(em, jobId, { progress_run_id: prepared.runId, progress_message: `Running workflow ${prepared.workflowId}.` });
  return prepared;
}

/** Records how a `run_workflow` action's run ended, citing the run. */
export async function recordRunAction(
  em: EntityManager,
  jobId: string,
  actionId: string,
  runId: string,
  outcome: { status: 'succeeded' | 'failed'; output?: unknown; error?: string },
): Promise<void> {
  const job = await requireJob(em, jobId);
  const action = job.plan?.actions.find((a) => a.id === actionId);
  if (!action) return;
  const now = new Date().toISOString();
  await appendTrace(em, jobId, {
    actionId,
    tool: action.tool,
    arguments: action.arguments,
    status: outcome.status,
    output: outcome.output ?? null,
    error: outcome.error ?? null,
    runId,
    citations: [{ runId }],
    startedAt: now,
    finishedAt: now,
  });
}

/**
 * Ends the job: a side-effect action that failed fails the job (the confirmed plan failed);
 * otherwise the model writes the answer from the traces and the job succeeds with `result`.
 */
export async function finishJob(em: EntityManager, deps: AgentDeps, jobId: string): Promise<{ status: string }> {
  const job = await requireJob(em, jobId);
  if (job.status !== 'running') return { status: job.status };
  const plan = job.plan!;
  const failedSideEffect = job.traces.find((t) => t.status === 'failed' && plan.actions.find((a) => a.id === t.actionId)?.sideEffects);
  if (failedSideEffect) {
    await moveJob(em, jobId, ['running'], {
      status: 'failed',
      error: `Action ${failedSideEffect.tool} failed: ${failedSideEffect.error ?? 'unknown error'}`,
      progress_message: 'The plan failed.',
    });
    return { status: 'failed' };
  }
  let content = plan.summary ?? '';
  if (plan.actions.length) {
    const messages: ChatMessage[] = [
      ...userMessages(job),
      {
        role: 'assistant',
        content: plan.summary,
        tool_calls: plan.actions.map((a) => ({
          id: a.id,
          type: 'function' as const,
          function: { name: a.tool, arguments: JSON.stringify(a.arguments) },
        })),
      },
      ...plan.actions.map((a) => {
        const trace = job.traces.find((t) => t.actionId === a.id);
        return {
          role: 'tool' as const,
          tool_call_id: a.id,
          content: JSON.stringify(
            trace ? { status: trace.status, output: trace.output, error: trace.error, runId: trace.runId } : { status: 'skipped' },
          ),
        };
      }),
    ];
    const answer = await chat(em, deps, job, messages, false);
    content = answer.content ?? '';
  }
  const citations: CommandCitation[] = job.traces.flatMap((t) => t.citations);
  const ragModes = job.traces.map((t) => (t as { ragMode?: string }).ragMode).filter(Boolean);
  await moveJob(em, jobId, ['running'], {
    status: 'succeeded',
    progress_message: 'Done.',
    result: {
      content,
      actions: job.traces.map((t) => ({ tool: t.tool, status: t.status, ...(t.runId ? { runId: t.runId } : {}) })),
      citations,
      ragMode: ragModes.includes('hybrid') ? 'hybrid' : ragModes.length ? 'keyword' : 'none',
    },
  });
  return { status: 'succeeded' };
}

/** Fails the job when it is in one of `from`. */
export async function failJob(
  em: EntityManager,
  jobId: string,
  message: string,
  from: Array<'queued' | 'running' | 'waiting_confirmation'>,
): Promise<void> {
  await moveJob(em, jobId, from, { status: 'failed', error: message, progress_message: 'The job failed.' });
}

/** The execution was canceled: any non-terminal job ends `canceled` (a no-op when the API got there first). */
export async function cancelJobRow(em: EntityManager, jobId: string): Promise<void> {
  await moveJob(em, jobId, ['queued', 'running', 'waiting_confirmation'], {
    status: 'canceled',
    progress_message: 'The job was canceled.',
  });
}
