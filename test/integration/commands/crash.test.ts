/**
 * A worker process SIGKILLed while a job waits for confirmation: the wait (a durable timer and
 * the Update handler) lives in Temporal, so a confirm sent while no worker runs is delivered to
 * the next worker, and the job completes. A worker SIGKILLed while the model hangs: the plan
 * activity stops heartbeating, Temporal times it out on its heartbeatTimeout (not the 5-minute
 * startToCloseTimeout) and the next worker plans the job.
 */
import type { ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import { lastMessage, startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import { useTestStack } from '../../kit';
import { killWorker, spawnWorker } from '../../support/workerProcess';
import {
  agentAnswer,
  awaitingConfirmation,
  commandsConfig,
  confirmV1,
  createJob,
  createThread,
  deployedDoubler,
  isStatus,
  waitForJob,
} from './support';

let llm: FakeLlmServer;
let env: Record<string, string>;
/** Settles when the model receives the request that will hang. */
let hangArrived: () => void;
const hangReceived = new Promise<void>((resolve) => (hangArrived = resolve));

beforeAll(async () => {
  llm = await startFakeLlm();
  // The first `hang` request never gets an answer (its worker is killed); later ones do.
  let hung = false;
  llm.reply((req) => {
    if (!lastMessage(req).startsWith('hang')) return agentAnswer(req);
    if (hung) return { content: 'answered after the retry' };
    hung = true;
    hangArrived();
    return new Promise(() => undefined);
  });
  env = { LLM_BASE_URL: llm.url, LLM_API_KEY: llm.apiKey, LLM_MODEL: llm.model, LLM_MAX_RETRIES: '0' };
});
// The worker is a separate process the test kills: the stack runs none of its own.
const stack = useTestStack(() => ({ worker: false, config: commandsConfig(llm) }));
afterAll(async () => {
  await llm?.close();
});

test('a job waiting for confirmation survives its worker being killed and completes after the restart', async () => {
  let worker: ChildProcess = await spawnWorker(env);
  try {
    const doubler = await deployedDoubler(stack.app, stack.ws.token);
    const threadId = await createThread(stack.app, stack.ws.token);
    const created = await createJob(stack.app, stack.ws.token, { threadId, message: `run ${doubler}` });
    const waiting = awaitingConfirmation(
      await waitForJob(stack.app, stack.ws.token, created.body.data.job.id, isStatus('waiting_confirmation')),
    );

    await killWorker(worker);
    const confirming = confirmV1(stack.app, stack.ws.token, waiting.id, waiting.confirmation.id);
    worker = await spawnWorker(env);
    const res = await confirming;
    expect(res.status).toBe(200);
    expect(res.body.data.job).toMatchObject({ id: waiting.id, status: 'succeeded' });
    expect(res.body.data.job.traces[0]).toMatchObject({ tool: 'run_workflow', status: 'succeeded', output: { n: 42 } });
  } finally {
    await killWorker(worker);
  }
}, 150_000);

test('a worker killed while the model hangs is noticed by the heartbeat timeout; the next worker plans the job', async () => {
  let worker: ChildProcess = await spawnWorker(env);
  try {
    const threadId = await createThread(stack.app, stack.ws.token);
    const created = await createJob(stack.app, stack.ws.token, { threadId, message: 'hang until the worker dies' });
    const jobId = created.body.data.job.id;
    const handle = stack.app.deps.temporal.client.workflow.getHandle(jobId);
    // The plan activity runs on this worker, has sent its model request (which hangs) and
    // heartbeats while it waits. Killing the worker before the request arrives would leave the
    // hang to the retry instead.
    await hangReceived;
    for (let i = 0; i < 300; i++) {
      const described = await handle.describe().catch(() => null);
      if (described?.raw.pendingActivities?.some((a) => a.activityType?.name === 'planCommandJob' && a.lastHeartbeatTime)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await killWorker(worker);
    worker = await spawnWorker(env);
    const job = await waitForJob(stack.app, stack.ws.token, jobId, isStatus('succeeded', 'failed'), 120_000);
    expect(job.status).toBe('succeeded');
    const history = await handle.fetchHistory();
    const retried = history.events!.map((e) => e.activityTaskStartedEventAttributes).find((a) => a && a.attempt === 2);
    expect(retried?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT);
  } finally {
    await killWorker(worker);
  }
}, 150_000);
