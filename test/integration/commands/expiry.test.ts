/**
 * The confirmation window (COMMAND_CONFIRMATION_TTL_SECONDS, short here): when it closes the job
 * moves to `blocked`, both by the execution's durable timer and, with no worker around, when
 * the job is read; a late confirm is 409 `confirmation_expired` carrying the blocked job.
 */
import { startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import { startTestWorker } from '../../support/harness';
import { signInCookie, useTestStack, type TestWorker } from '../../kit';
import {
  agentScript,
  commandsConfig,
  confirmSession,
  confirmV1,
  createJob,
  createThread,
  deployedDoubler,
  isStatus,
  waitForJob,
} from './support';

let llm: FakeLlmServer;
let doubler: string;
let spare: TestWorker | undefined;

beforeAll(async () => {
  llm = await startFakeLlm();
  agentScript(llm);
});
const stack = useTestStack(() => ({ config: commandsConfig(llm, { ttlSeconds: 2 }) }));
beforeAll(async () => {
  doubler = await deployedDoubler(stack.app, stack.ws.token);
}, 120_000);
stack.beforeClose(async () => {
  await spare?.stop();
});
afterAll(async () => {
  await llm?.close();
});

test('the durable timer moves an unconfirmed job to blocked; confirm then answers confirmation_expired with the job', async () => {
  const { app, ws } = stack;
  const threadId = await createThread(app, ws.token);
  const created = await createJob(app, ws.token, { threadId, message: `run ${doubler}` });
  await waitForJob(app, ws.token, created.body.data.job.id, isStatus('waiting_confirmation', 'blocked'));
  // The execution ends blocked on its own timer.
  const outcome = await app.deps.temporal.client.workflow.getHandle(created.body.data.job.id).result();
  expect(outcome).toEqual({ status: 'blocked' });
  const [row] = await app.orm.em
    .fork()
    .getConnection()
    .execute(`select status, confirmation_id from command_jobs where id = ?`, [created.body.data.job.id]);
  expect(row.status).toBe('blocked');

  const cookie = await signInCookie(app, ws.ownerEmail, ws.ownerPassword);
  const late = await confirmSession(app, { cookie }, created.body.data.job.id, { confirmationId: row.confirmation_id });
  expect(late.status).toBe(409);
  expect(late.body).toMatchObject({
    errorCode: 'confirmation_expired',
    job: { id: created.body.data.job.id, status: 'blocked', confirmation: null },
  });
  const v1 = await confirmV1(app, ws.token, created.body.data.job.id, row.confirmation_id);
  expect(v1.status).toBe(409);
  expect(v1.body.error.code).toBe('conflict');
  // The model was never asked to act: one planning call only.
  expect(llm.chats.filter((c) => JSON.stringify(c.messages).includes(`run ${doubler}`)).length).toBe(1);
});

test('with no worker running, an expired confirmation is settled on read', async () => {
  const { app, ws } = stack;
  const threadId = await createThread(app, ws.token);
  // Plan while the worker runs, then stop it: no timer can fire.
  const created = await createJob(app, ws.token, { threadId, message: `run ${doubler}` });
  const waiting = await waitForJob(app, ws.token, created.body.data.job.id, isStatus('waiting_confirmation'));
  await stack.worker.stop();
  const blocked = await waitForJob(app, ws.token, waiting.id, isStatus('blocked'));
  expect(blocked).toMatchObject({ status: 'blocked', confirmation: null, progress: { state: 'blocked' } });
  const description = await app.deps.temporal.client.workflow.getHandle(waiting.id).describe();
  expect(description.status.name).toBe('RUNNING');
  // A worker comes back: the execution's timer ends it blocked too, without acting.
  spare = await startTestWorker(app);
  expect(await app.deps.temporal.client.workflow.getHandle(waiting.id).result()).toEqual({ status: 'blocked' });
});
