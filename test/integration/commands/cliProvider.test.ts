/**
 * Command jobs with a connected local AI CLI as their model (`aiProvider: "cliA" | "cliB"`),
 * over real HTTP, PostgreSQL and Temporal with fake CLI executables: the job's answer comes from
 * the workspace's own CLI session (its token, its configuration directory), no language-model
 * request is made, and a CLI the workspace has not connected fails the job with the reason.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import { VALID_TOKEN_PREFIX, writeFakeCli } from '../../fakes/localAiCli';
import { createWorkspace, http, signInCookie, startTestStack, type TestStack } from '../../support/harness';
import { commandsConfig, createJob, createThread, isStatus, waitForJob } from './support';

let llm: FakeLlmServer;
let stack: TestStack;
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'cli-provider-test-'));
  const cliA = await writeFakeCli(tmp, 'cliA');
  const cliB = await writeFakeCli(tmp, 'cliB');
  llm = await startFakeLlm();
  stack = await startTestStack({
    config: { ...commandsConfig(llm), localAiCli: { paths: { cliA: cliA.path, cliB: cliB.path }, timeoutMs: 10_000, rootDir: path.join(tmp, 'local-ai-cli') } },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await llm?.close();
  await rm(tmp, { recursive: true, force: true });
});

test("a job with aiProvider cliA is answered by the workspace's connected CLI, not the model endpoint", async () => {
  const { app, ws } = stack;
  const connected = await http(app, 'POST', '/api/v1/workers/local-ai-cli/token', { token: ws.token, body: { kind: 'cliA', token: `${VALID_TOKEN_PREFIX}-agent` } });
  expect(connected.status).toBe(200);
  const chatsBefore = llm.chats.length;

  const res = await createJob(app, ws.token, { threadId: await createThread(app, ws.token), message: 'summarise the week', aiProvider: 'cliA' });
  expect(res.status).toBe(202);
  const job = await waitForJob(app, ws.token, res.body.data.job.id, isStatus('succeeded', 'failed'));
  expect(job).toMatchObject({ status: 'succeeded', costCredits: 0 });
  const cookie = await signInCookie(app, ws.ownerEmail, ws.ownerPassword);
  const session = await http(app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie });
  expect(session.body.result.content).toBe('cliA answers: summarise the week');
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
  const session = await http(app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie });
  expect(JSON.stringify(session.body.error)).toContain('cliB is not connected for this workspace');
});
