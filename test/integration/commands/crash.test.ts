/**
 * A worker process SIGKILLed while a job waits for confirmation: the wait (a durable timer and
 * the Update handler) lives in Temporal, so a confirm sent while no worker runs is delivered to
 * the next worker, and the job completes.
 */
import type { ChildProcess } from 'node:child_process';
import { startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import { createWorkspace, startTestApp, type TestApp, type WorkspaceFixture } from '../../support/harness';
import { killWorker, spawnWorker } from '../../support/workerProcess';
import { agentScript, commandsConfig, confirmV1, createJob, createThread, deployedDoubler, isStatus, waitForJob } from './support';

let llm: FakeLlmServer;
let app: TestApp;
let ws: WorkspaceFixture;
let env: Record<string, string>;

beforeAll(async () => {
  llm = await startFakeLlm();
  agentScript(llm);
  app = await startTestApp(commandsConfig(llm));
  ws = await createWorkspace(app);
  env = { LLM_BASE_URL: llm.url, LLM_API_KEY: llm.apiKey, LLM_MODEL: llm.model, LLM_MAX_RETRIES: '0' };
}, 120_000);
afterAll(async () => {
  await app?.close();
  await llm?.close();
});

test('a job waiting for confirmation survives its worker being killed and completes after the restart', async () => {
  let worker: ChildProcess = await spawnWorker(env);
  try {
    const doubler = await deployedDoubler(app, ws.token);
    const threadId = await createThread(app, ws.token);
    const created = await createJob(app, ws.token, { threadId, message: `run ${doubler}` });
    const waiting = await waitForJob(app, ws.token, created.body.data.job.id, isStatus('waiting_confirmation'));

    await killWorker(worker);
    const confirming = confirmV1(app, ws.token, waiting.id, waiting.confirmation.id);
    worker = await spawnWorker(env);
    const res = await confirming;
    expect(res.status).toBe(200);
    expect(res.body.data.job).toMatchObject({ id: waiting.id, status: 'succeeded' });
    expect(res.body.data.job.traces[0]).toMatchObject({ tool: 'run_workflow', status: 'succeeded', output: { n: 42 } });
  } finally {
    await killWorker(worker);
  }
}, 150_000);
