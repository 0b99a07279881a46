/** Shared steps of the command jobs tests: a scripted model, real HTTP calls, polling a job. */
import { randomBytes } from 'node:crypto';
import { lastMessage, toolResults, type ChatRequestSeen, type FakeChatAnswer, type FakeLlmServer } from '../../fakes/llm';
import type { z } from 'zod';
import type {
  commandJobSchema,
  safeCommandJobSchema,
  sessionJobSchema,
  sessionRetrySchema,
  sessionSendSchema,
  threadSchema,
} from '../../../api/schemas/commands';
import type { AppConfig } from '../../../services/kernel/config';
import { loadConfig } from '../../../services/kernel/config';
import { chain, deployWorkflow, http, node, type Enveloped, type HttpResult } from '../../kit';

/** A command job as its owner and write keys read it (viewers get `SafeCommandJob`). */
export type CommandJob = z.infer<typeof commandJobSchema>;
export type SafeCommandJob = z.infer<typeof safeCommandJobSchema>;
/** The v1 job routes' answer (`{ ok, data: { job }, meta }`, or `{ ok: false, error }`). */
export type JobAnswer = Enveloped<{ job: CommandJob }>;
export type JobListAnswer = Enveloped<{ jobs: CommandJob[]; nextCursor: string | null }>;
export type CommandThread = z.infer<typeof threadSchema>;
/** The session routes' job read: the job, its plan and outcome (`error` when it failed). */
export type SessionJob = z.infer<typeof sessionJobSchema>;
export type SessionSend = z.infer<typeof sessionSendSchema>;
export type SessionRetry = z.infer<typeof sessionRetrySchema>;
/** A session route's refusal: `{ error, errorCode }`, with the job when the refusal concerns it. */
export interface SessionRefusal {
  error: string;
  errorCode: string;
  job?: CommandJob;
}
/** The session confirm's answer: the job, or a refusal. */
export type SessionConfirmAnswer = Partial<SessionRefusal> & { job: CommandJob };

export const key = () => `k-${randomBytes(8).toString('hex')}`;

/** Config of a command test app: the loopback model and a confirmation window. */
export function commandsConfig(llm: FakeLlmServer, over: { ttlSeconds?: number } = {}): Partial<AppConfig> {
  const base = loadConfig({ SECRET_KEY: 'x'.repeat(40) });
  return {
    llm: { ...base.llm, baseUrl: llm.url, apiKey: llm.apiKey, model: llm.model, maxRetries: 0 },
    commands: { confirmationTtlSeconds: over.ttlSeconds ?? 300, confirmWaitMs: 30_000 },
  };
}

/**
 * The model's script: `say <text>` answers without tools; `run <workflowId>` plans a workflow
 * run (side effects: confirmation); `list`, `search <q>` and `sql <databaseId> <query>` plan read-only tools; `read <fileId>`
 * reads an attachment. Once tool results are in the conversation it answers with them.
 */
export function agentScript(llm: FakeLlmServer): void {
  llm.reply(agentAnswer);
}

/** One answer of the agent script (agentScript), for scripts that add cases of their own. */
export function agentAnswer(req: ChatRequestSeen): FakeChatAnswer {
  const results = toolResults(req);
  if (results.length) return { content: `done: ${results.map((r) => r.content).join(' | ')}` };
  const text = lastMessage(req).split('\n')[0];
  const [verb, ...rest] = text.split(' ');
  const arg = rest.join(' ');
  switch (verb) {
    case 'run':
      return {
        content: 'I will run the workflow.',
        toolCalls: [{ name: 'run_workflow', arguments: { workflowId: arg, input: { n: 21 } } }],
      };
    case 'list':
      return { toolCalls: [{ name: 'list_workflows', arguments: {} }] };
    case 'search':
      return { toolCalls: [{ name: 'search_knowledge', arguments: { query: arg } }] };
    case 'sql': {
      const [databaseId, ...sql] = rest;
      return { toolCalls: [{ name: 'query_database', arguments: { databaseId, sql: sql.join(' ') } }] };
    }
    case 'read':
      return { toolCalls: [{ name: 'read_attachment', arguments: { fileId: arg } }] };
    default:
      return { content: `reply: ${arg || text}` };
  }
}

export interface Caller {
  token?: string;
  cookie?: string;
}
const auth = (c: Caller) => ({ ...(c.token ? { token: c.token } : {}), ...(c.cookie ? { cookie: c.cookie } : {}) });

export async function createThread(app: { url: string }, token: string, title = 'Thread'): Promise<string> {
  const res = await http<Enveloped<{ thread: CommandThread }>>(app, 'POST', '/api/v1/svc-command/threads', {
    token,
    body: { title },
    headers: { 'idempotency-key': key() },
  });
  if (res.status !== 201) throw new Error(`thread create failed: ${res.status} ${res.text}`);
  return res.body.data.thread.id;
}

export function createJob(
  app: { url: string },
  token: string,
  body: Record<string, unknown>,
  idemKey: string | null = key(),
): Promise<HttpResult<JobAnswer>> {
  return http<JobAnswer>(app, 'POST', '/api/v1/svc-command/jobs', { token, body, headers: idemKey ? { 'idempotency-key': idemKey } : {} });
}

export function getJob(app: { url: string }, token: string, id: string): Promise<HttpResult<JobAnswer>> {
  return http<JobAnswer>(app, 'GET', `/api/v1/svc-command/jobs/${id}`, { token });
}

export function confirmV1(
  app: { url: string },
  token: string,
  id: string,
  confirmationId: unknown,
  idemKey = key(),
): Promise<HttpResult<JobAnswer>> {
  return http<JobAnswer>(app, 'POST', `/api/v1/svc-command/jobs/${id}/confirm`, {
    token,
    body: { confirmationId },
    headers: { 'idempotency-key': idemKey },
  });
}

export function cancelV1(app: { url: string }, token: string, id: string, idemKey = key()): Promise<HttpResult<JobAnswer>> {
  return http<JobAnswer>(app, 'POST', `/api/v1/svc-command/jobs/${id}/cancel`, { token, headers: { 'idempotency-key': idemKey } });
}

export function confirmSession(app: { url: string }, c: Caller, id: string, body: unknown): Promise<HttpResult<SessionConfirmAnswer>> {
  return http<SessionConfirmAnswer>(app, 'POST', `/api/svc-command/jobs/${id}/confirm`, { ...auth(c), body });
}

/** Polls the v1 job until `done(job)`; fails with the last state after `timeoutMs`. */
export async function waitForJob(
  app: { url: string },
  token: string,
  id: string,
  done: (job: CommandJob) => boolean,
  timeoutMs = 60_000,
): Promise<CommandJob> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const res = await getJob(app, token, id);
    last = res.body;
    if (res.status === 200 && done(res.body.data.job)) return res.body.data.job;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`job ${id} did not reach the expected state: ${JSON.stringify(last)}`);
}

/** A job waiting for confirmation: its `confirmation` is set. */
export type WaitingJob = CommandJob & { confirmation: NonNullable<CommandJob['confirmation']> };

/** `job`, narrowed to a job waiting for confirmation; fails the test when it has no confirmation. */
export function awaitingConfirmation(job: CommandJob): WaitingJob {
  const { confirmation } = job;
  if (!confirmation) throw new Error(`job ${job.id} has no confirmation: ${JSON.stringify(job)}`);
  return { ...job, confirmation };
}

export const isStatus =
  (...statuses: string[]) =>
  (job: { status: string }) =>
    statuses.includes(job.status);

/** A workflow that doubles `n`, deployed; returns its id. */
export async function deployedDoubler(app: { url: string }, token: string): Promise<string> {
  const doubler = { name: 'Doubler', ...chain(node.transform('double', '{ "n": n * 2 }')) };
  return (await deployWorkflow({ app, ws: { token } }, doubler)).workflowId;
}
