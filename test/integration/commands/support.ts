/** Shared steps of the command jobs tests: a scripted model, real HTTP calls, polling a job. */
import { randomBytes } from 'node:crypto';
import { lastMessage, toolResults, type ChatRequestSeen, type FakeChatAnswer, type FakeLlmServer } from '../../fakes/llm';
import type { AppConfig } from '../../../services/kernel/config';
import { loadConfig } from '../../../services/kernel/config';
import { http, type HttpResult } from '../../support/harness';

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
  const res = await http(app, 'POST', '/api/v1/svc-command/threads', { token, body: { title }, headers: { 'idempotency-key': key() } });
  if (res.status !== 201) throw new Error(`thread create failed: ${res.status} ${res.text}`);
  return res.body.data.thread.id;
}

export function createJob(
  app: { url: string },
  token: string,
  body: Record<string, unknown>,
  idemKey: string | null = key(),
): Promise<HttpResult> {
  return http(app, 'POST', '/api/v1/svc-command/jobs', { token, body, headers: idemKey ? { 'idempotency-key': idemKey } : {} });
}

export function getJob(app: { url: string }, token: string, id: string): Promise<HttpResult> {
  return http(app, 'GET', `/api/v1/svc-command/jobs/${id}`, { token });
}

export function confirmV1(app: { url: string }, token: string, id: string, confirmationId: unknown, idemKey = key()): Promise<HttpResult> {
  return http(app, 'POST', `/api/v1/svc-command/jobs/${id}/confirm`, {
    token,
    body: { confirmationId },
    headers: { 'idempotency-key': idemKey },
  });
}

export function cancelV1(app: { url: string }, token: string, id: string, idemKey = key()): Promise<HttpResult> {
  return http(app, 'POST', `/api/v1/svc-command/jobs/${id}/cancel`, { token, headers: { 'idempotency-key': idemKey } });
}

export function confirmSession(app: { url: string }, c: Caller, id: string, body: unknown): Promise<HttpResult> {
  return http(app, 'POST', `/api/svc-command/jobs/${id}/confirm`, { ...auth(c), body });
}

/** Polls the v1 job until `done(job)`; fails with the last state after `timeoutMs`. */
export async function waitForJob(
  app: { url: string },
  token: string,
  id: string,
  done: (job: any) => boolean,
  timeoutMs = 60_000,
): Promise<any> {
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

export const isStatus =
  (...statuses: string[]) =>
  (job: any) =>
    statuses.includes(job.status);

/** A workflow that doubles `n`, deployed. */
export async function deployedDoubler(app: { url: string }, token: string): Promise<string> {
  const created = await http(app, 'POST', '/api/v1/workflows', {
    token,
    body: {
      name: 'Doubler',
      nodes: [
        { id: 'start', type: 'start', config: {} },
        { id: 'double', type: 'transform', config: { expression: '{ "n": n * 2 }' } },
      ],
      edges: [{ source: 'start', target: 'double' }],
    },
  });
  if (created.status !== 201) throw new Error(`workflow create failed: ${created.status} ${created.text}`);
  const id = created.body.workflow.id;
  const deployed = await http(app, 'POST', `/api/v1/workflows/${id}/deploy`, { token });
  if (deployed.status !== 200) throw new Error(`deploy failed: ${deployed.status} ${deployed.text}`);
  return id;
}
