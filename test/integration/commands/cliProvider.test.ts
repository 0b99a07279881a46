/**
 * Command jobs and research runs with a connected local AI CLI as their model (`aiProvider:
 * "cliA" | "cliB"`), over real HTTP, PostgreSQL and Temporal with fake CLI executables: the
 * answer comes from the workspace's own CLI session (its token, its configuration directory),
 * no language-model request is made, and a CLI the workspace has not connected fails the job
 * (or the run) with the reason.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import { VALID_TOKEN_PREFIX, writeFakeCli } from '../../fakes/localAiCli';
import { htmlPage, startFakeSite, type FakeSite } from '../../fakes/web';
import { createWorkspace, http, signInCookie, useTestStack } from '../../kit';
import type { z } from 'zod';
import type { sessionJobSchema } from '../../../api/schemas/commands';

type SessionJob = z.infer<typeof sessionJobSchema>;
import { createResearch, expectedRunId, key as researchKey, waitForResearch } from '../research/support';
import { commandsConfig, createJob, createThread, isStatus, waitForJob } from './support';

let llm: FakeLlmServer;
let tmp: string;
let site: FakeSite;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'cli-provider-test-'));
  llm = await startFakeLlm();
  site = await startFakeSite();
  site.robots('User-agent: *\nAllow: /\n');
  site.page('/otters', htmlPage('Otters', 'Otters eat fish and crabs.'));
});
const stack = useTestStack(async () => {
  const cliA = await writeFakeCli(tmp, 'cliA');
  const cliB = await writeFakeCli(tmp, 'cliB');
  return {
    config: {
      ...commandsConfig(llm),
      localAiCli: { paths: { cliA: cliA.path, cliB: cliB.path }, timeoutMs: 10_000, rootDir: path.join(tmp, 'local-ai-cli') },
    },
  };
});
afterAll(async () => {
  await llm?.close();
  await site?.close();
  await rm(tmp, { recursive: true, force: true });
});

test("a job with aiProvider cliA is answered by the workspace's connected CLI, not the model endpoint", async () => {
  const { app, ws } = stack;
  const connected = await http(app, 'POST', '/api/v1/workers/local-ai-cli/token', {
    token: ws.token,
    body: { kind: 'cliA', token: `${VALID_TOKEN_PREFIX}-agent` },
  });
  expect(connected.status).toBe(200);
  const chatsBefore = llm.chats.length;

  const res = await createJob(app, ws.token, {
    threadId: await createThread(app, ws.token),
    message: 'summarise the week',
    aiProvider: 'cliA',
  });
  expect(res.status).toBe(202);
  const job = await waitForJob(app, ws.token, res.body.data.job.id, isStatus('succeeded', 'failed'));
  expect(job).toMatchObject({ status: 'succeeded', costCredits: 0 });
  const cookie = await signInCookie(app, ws.ownerEmail, ws.ownerPassword);
  const session = await http<SessionJob>(app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie });
  expect(session.body.result?.content).toBe('cliA answers: summarise the week');
  expect(llm.chats.length).toBe(chatsBefore);
});

test('a CLI the workspace has not connected fails the job with the reason', async () => {
  const { app } = stack;
  const other = await createWorkspace(app);
  const res = await createJob(app, other.token, { threadId: await createThread(app, other.token), message: 'hello', aiProvider: 'cliB' });
  expect(res.status).toBe(202);
  const job = await waitForJob(app, other.token, res.body.data.job.id, isStatus('succeeded', 'failed'));
  expect(job.status).toBe('failed');
  const cookie = await signInCookie(app, other.ownerEmail, other.ownerPassword);
  const session = await http<SessionJob>(app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie });
  expect(JSON.stringify(session.body.error)).toContain('cliB is not connected for this workspace');
});

describe('research runs with aiProvider', () => {
  const sql = (q: string, params: unknown[] = []) => stack.app.orm.em.fork().execute(q, params);

  test("the workspace's connected CLI synthesizes the answer at 0 model cost; the run id stays the key's", async () => {
    const { app, ws } = stack;
    const connected = await http(app, 'POST', '/api/v1/workers/local-ai-cli/token', {
      token: ws.token,
      body: { kind: 'cliA', token: `${VALID_TOKEN_PREFIX}-research` },
    });
    expect(connected.status).toBe(200);
    const chatsBefore = llm.chats.length;
    const k = researchKey();
    const body = { query: 'What do otters eat?', sourceUrls: [`${site.origin}/otters`], aiProvider: 'cliA', aiModel: 'cli-model-1' };
    const res = await createResearch(app, ws.token, body, k);
    expect(res.status).toBe(202);
    expect(res.body.data.run).toMatchObject({ id: expectedRunId(ws.workspaceId, k), aiProvider: 'cliA', aiModel: 'cli-model-1' });
    const run = await waitForResearch(app, ws.token, res.body.data.run.id);
    expect(run).toMatchObject({ status: 'succeeded', error: null, aiProvider: 'cliA' });
    const [doc] = await sql('select content_text from knowledge_documents where id = ?', [run.resultDocumentId]);
    expect(doc.content_text).toContain('cliA answers: Question: What do otters eat?');
    const [row] = await sql('select prompt_tokens, completion_tokens, cost_credits from research_runs where id = ?', [run.id]);
    expect(row).toEqual({ prompt_tokens: 0, completion_tokens: 0, cost_credits: 0 });
    expect(llm.chats.length).toBe(chatsBefore);
    // A replay is the same run; the same key with another provider is another request (409).
    expect((await createResearch(app, ws.token, body, k)).status).toBe(200);
    expect((await createResearch(app, ws.token, { ...body, aiProvider: 'cliB' }, k)).status).toBe(409);
    expect((await createResearch(app, ws.token, { ...body, aiProvider: 'other' })).status).toBe(400);
  });

  test('a CLI the workspace has not connected fails the run with the reason', async () => {
    const { app } = stack;
    const other = await createWorkspace(app);
    const res = await createResearch(app, other.token, { query: 'Otters?', sourceUrls: [`${site.origin}/otters`], aiProvider: 'cliB' });
    expect(res.status).toBe(202);
    const run = await waitForResearch(app, other.token, res.body.data.run.id);
    expect(run).toMatchObject({
      status: 'failed',
      resultDocumentId: null,
      error: 'The answer could not be synthesized: cliB is not connected for this workspace; verify or sign in first.',
    });
  });
});
