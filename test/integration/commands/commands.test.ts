/**
 * Command jobs over real HTTP, PostgreSQL and Temporal, with the loopback model scripting the
 * plans and tool calls: the state table, the confirmation error codes (session and v1), FIFO on
 * a thread, tools (workflow run with runId citation, read-only tools without confirmation,
 * attachments), viewer projection and other workspaces' ids.
 */
import { startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import {
  addUserWithKey,
  createWorkspace,
  http,
  signInCookie,
  useTestStack,
  type CreatedTable,
  type Enveloped,
  type Refusable,
  type RowPage,
  type RunWithLinks,
} from '../../kit';
import { loadConfig } from '../../../services/kernel/config';
import { WorkflowUpdateStage } from '@temporalio/client';
import { commandConfirmUpdate, commandThreadWorkflowId } from '../../../temporal/shared';
import { createFile, filesConfig, uploadFile } from '../files/support';
import { createBase, uploadDocument, waitForDocument } from '../knowledge/support';
import {
  agentScript,
  awaitingConfirmation,
  cancelV1,
  commandsConfig,
  confirmSession,
  confirmV1,
  createJob,
  createThread,
  deployedDoubler,
  getJob,
  isStatus,
  key,
  waitForJob,
  type CommandThread,
  type JobAnswer,
  type JobListAnswer,
  type SessionJob,
  type SessionRetry,
  type SessionSend,
  type WaitingJob,
} from './support';

let llm: FakeLlmServer;
let cookie: string;
let doubler: string;

beforeAll(async () => {
  llm = await startFakeLlm();
  agentScript(llm);
});
const stack = useTestStack(async () => ({
  config: { ...commandsConfig(llm), ...(await filesConfig(loadConfig({ SECRET_KEY: 'x'.repeat(40) }))) },
}));
beforeAll(async () => {
  cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
  doubler = await deployedDoubler(stack.app, stack.ws.token);
}, 120_000);
afterAll(async () => {
  await llm?.close();
});

async function waitingJob(threadId?: string, workflowId = doubler): Promise<WaitingJob> {
  const tid = threadId ?? (await createThread(stack.app, stack.ws.token));
  const res = await createJob(stack.app, stack.ws.token, { threadId: tid, message: `run ${workflowId}` });
  expect(res.status).toBe(202);
  return awaitingConfirmation(await waitForJob(stack.app, stack.ws.token, res.body.data.job.id, isStatus('waiting_confirmation')));
}

test('a job without tools succeeds with the model answer; the session GET carries plan and result', async () => {
  const threadId = await createThread(stack.app, stack.ws.token, 'Greetings');
  const res = await createJob(stack.app, stack.ws.token, { threadId, message: 'say hello there', assistantContext: { page: 'home' } });
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ ok: true, meta: { contractVersion: 'api-contracts.v1' } });
  expect(res.body.data.job).toMatchObject({ threadId, status: 'queued', confirmation: null, attachments: [], artifacts: [] });
  const job = await waitForJob(stack.app, stack.ws.token, res.body.data.job.id, isStatus('succeeded'));
  expect(job.planId).toMatch(/^plan_/);
  const session = await http<Refusable<SessionJob>>(stack.app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie });
  expect(session.status).toBe(200);
  expect(session.body).toMatchObject({
    threadId,
    plan: { id: job.planId, actions: [], requiresConfirmation: false },
    job: { id: job.id, status: 'succeeded' },
    result: { content: 'reply: hello there', actions: [], citations: [], ragMode: 'none' },
    attempt: 1,
  });
  expect(job.costCredits).toBeGreaterThan(0);
  // The thread's owner and the job it ran are filed under the thread's title (search attributes).
  const attributes = { WorkspaceId: [stack.ws.workspaceId], SvcTrigger: ['command'], SvcName: ['Greetings'] };
  const { client } = stack.app.deps.temporal;
  expect((await client.workflow.getHandle(commandThreadWorkflowId(threadId)).describe()).searchAttributes).toMatchObject(attributes);
  expect((await client.workflow.getHandle(job.id).describe()).searchAttributes).toMatchObject(attributes);
});

test('waiting_confirmation → confirm resumes the job: the workflow run is cited by runId; a replay answers 200 with the current job', async () => {
  const job = await waitingJob();
  expect(job.confirmation).toEqual({ id: expect.stringMatching(/^cnf_/), expiresAt: expect.any(String) });
  const ttl = new Date(job.confirmation.expiresAt).getTime() - Date.parse(job.updatedAt);
  // The 5-minute window (expiry = now + 300 s, written with the row); the lower bound leaves a loaded
  // machine a minute between the two clocks' readings, so only a wrong window fails it.
  expect(ttl).toBeGreaterThan(240_000);
  expect(ttl).toBeLessThanOrEqual(301_000);
  // The live buffer is served while the execution waits.
  expect(job.progress.state).toBe('waiting_confirmation');
  expect(job.progress.events.map((e) => e.state)).toContain('waiting_confirmation');

  const confirmed = await confirmV1(stack.app, stack.ws.token, job.id, job.confirmation.id);
  expect(confirmed.status).toBe(200);
  expect(confirmed.body.data.job.status).toBe('succeeded');
  const [trace] = confirmed.body.data.job.traces;
  expect(trace).toMatchObject({
    tool: 'run_workflow',
    status: 'succeeded',
    output: { n: 42 },
    runId: expect.stringMatching(/^run_/),
    citations: [{ runId: trace.runId }],
  });
  expect(confirmed.body.data.job.progress.runId).toBe(trace.runId);
  const run = await http<RunWithLinks>(stack.app, 'GET', `/api/v1/runs/${trace.runId}`, { token: stack.ws.token });
  expect(run.body.run).toMatchObject({ status: 'succeeded', trigger: 'copilot', workflowId: doubler });
  // An operator finds the copilot's child execution by workspace, kind and the workflow's name.
  const described = await stack.app.deps.temporal.client.workflow.getHandle(trace.runId!).describe();
  expect(described.searchAttributes).toMatchObject({ WorkspaceId: [stack.ws.workspaceId], SvcTrigger: ['copilot'], SvcName: ['Doubler'] });

  const session = await http<Refusable<SessionJob>>(stack.app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie });
  expect(session.body.result).toMatchObject({
    actions: [{ tool: 'run_workflow', status: 'succeeded', runId: trace.runId }],
    citations: [{ runId: trace.runId }],
  });
  expect(session.body.result?.content).toMatch(/^done: /);

  const replay = await confirmV1(stack.app, stack.ws.token, job.id, job.confirmation.id);
  expect(replay.status).toBe(200);
  expect(replay.body.data.job).toMatchObject({ id: job.id, status: 'succeeded' });
  const sessionReplay = await confirmSession(stack.app, { cookie }, job.id, { confirmationId: job.confirmation.id });
  expect(sessionReplay.status).toBe(200);
});

test("a confirmation that reaches the execution before its plan is known waits for the plan (and is refused when its id is not the plan's)", async () => {
  const threadId = await createThread(stack.app, stack.ws.token);
  const gate = llm.hold();
  const created = (await createJob(stack.app, stack.ws.token, { threadId, message: `run ${doubler}` })).body.data.job;
  await gate.held;
  const handle = stack.app.deps.temporal.client.workflow.getHandle(created.id);
  const early = await handle.startUpdate(commandConfirmUpdate, {
    args: [{ confirmationId: 'cnf_early' }],
    waitForStage: WorkflowUpdateStage.ACCEPTED,
  });
  gate.release();
  await expect(early.result()).rejects.toThrow();
  const job = awaitingConfirmation(await waitForJob(stack.app, stack.ws.token, created.id, isStatus('waiting_confirmation')));
  const confirmed = await confirmV1(stack.app, stack.ws.token, job.id, job.confirmation.id);
  expect(confirmed.status).toBe(200);
  expect(confirmed.body.data.job.status).toBe('succeeded');
});

test('read-only tools run without confirmation', async () => {
  const threadId = await createThread(stack.app, stack.ws.token);
  const res = await createJob(stack.app, stack.ws.token, { threadId, message: 'list' });
  const job = await waitForJob(stack.app, stack.ws.token, res.body.data.job.id, isStatus('succeeded', 'waiting_confirmation', 'failed'));
  expect(job.status).toBe('succeeded');
  expect(job.traces[0]).toMatchObject({ tool: 'list_workflows', status: 'succeeded' });
  expect(job.traces[0].output).toEqual(expect.arrayContaining([expect.objectContaining({ id: doubler })]));
});

test('knowledge search is read-only and cites the documents it used', async () => {
  const kb = await createBase(stack.app, stack.ws.token, { name: 'Finance' });
  const doc = await uploadDocument(stack.app, stack.ws.token, kb.id, {
    name: 'q3.txt',
    type: 'text/plain',
    content: 'Quarterly revenue grew by twelve percent in the third quarter.',
  });
  expect((await waitForDocument(stack.app, stack.ws.token, kb.id, doc.id)).indexingStatus).toBe('ready');
  const threadId = await createThread(stack.app, stack.ws.token);
  const res = await createJob(stack.app, stack.ws.token, { threadId, message: 'search quarterly revenue' });
  const job = await waitForJob(stack.app, stack.ws.token, res.body.data.job.id, isStatus('succeeded', 'waiting_confirmation', 'failed'));
  expect(job.status).toBe('succeeded');
  expect(job.traces[0]).toMatchObject({
    tool: 'search_knowledge',
    status: 'succeeded',
    citations: [{ documentId: doc.id, title: 'q3.txt', knowledgeBaseName: 'Finance' }],
  });
  const session = await http<Refusable<SessionJob>>(stack.app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie });
  expect(session.body.result).toMatchObject({ ragMode: 'keyword', citations: [{ documentId: doc.id }] });
});

test('user databases are queried read-only, only in the job workspace', async () => {
  const db = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: stack.ws.token,
    body: {
      databaseName: 'shop',
      tableName: 'customers',
      columns: [{ name: 'name', type: 'text' }],
      rows: [{ name: 'Ada' }, { name: 'Alan' }],
    },
  });
  expect(db.status).toBe(201);
  const databaseId = db.body.database.id;
  const threadId = await createThread(stack.app, stack.ws.token);
  const run = async (message: string) =>
    waitForJob(
      stack.app,
      stack.ws.token,
      (await createJob(stack.app, stack.ws.token, { threadId, message })).body.data.job.id,
      isStatus('succeeded', 'failed', 'waiting_confirmation'),
    );
  const read = await run(`sql ${databaseId} select name from customers order by name`);
  expect(read.status).toBe('succeeded');
  expect(read.traces[0]).toMatchObject({
    tool: 'query_database',
    status: 'succeeded',
    output: { rows: [{ name: 'Ada' }, { name: 'Alan' }] },
  });
  const write = await run(`sql ${databaseId} delete from customers`);
  expect(write.traces[0]).toMatchObject({ tool: 'query_database', status: 'failed', error: expect.any(String) });
  const other = await createWorkspace(stack.app, 'Other db');
  const theirs = await http<CreatedTable>(stack.app, 'POST', '/api/v1/databases', {
    token: other.token,
    body: { databaseName: 'vault', tableName: 'secrets', columns: [{ name: 's', type: 'text' }], rows: [{ s: 'theirs' }] },
  });
  const foreign = await run(`sql ${theirs.body.database.id} select s from secrets`);
  expect(foreign.traces[0]).toMatchObject({ status: 'failed', output: null });
  const rows = await http<RowPage>(stack.app, 'GET', `/api/v1/databases/${db.body.table.id}/rows`, { token: stack.ws.token });
  expect(rows.body.rows).toHaveLength(2);
});

test('attachments: ready files are attached and readable by the agent; a file not ready is 423', async () => {
  const threadId = await createThread(stack.app, stack.ws.token);
  const file = await uploadFile(stack.app, { token: stack.ws.token }, Buffer.from('the secret word is pineapple'), {
    name: 'note.txt',
    mimeType: 'text/plain',
  });
  expect(file.status).toBe('ready');
  const res = await createJob(stack.app, stack.ws.token, { threadId, message: `read ${file.id}`, attachmentFileIds: [file.id] });
  expect(res.status).toBe(202);
  expect(res.body.data.job.attachments).toEqual([
    { id: file.id, name: 'note.txt', mimeType: 'text/plain', sizeBytes: file.sizeBytes, sha256: file.sha256, status: 'ready' },
  ]);
  const job = await waitForJob(stack.app, stack.ws.token, res.body.data.job.id, isStatus('succeeded', 'failed'));
  expect(job.traces[0]).toMatchObject({ tool: 'read_attachment', status: 'succeeded', output: { text: 'the secret word is pineapple' } });

  const pending = await createFile(stack.app, { token: stack.ws.token }, { name: 'p.txt', mimeType: 'text/plain', sizeBytes: 3 });
  const before = await http<JobListAnswer>(stack.app, 'GET', `/api/v1/svc-command/jobs?threadId=${threadId}`, { token: stack.ws.token });
  const refused = await createJob(stack.app, stack.ws.token, {
    threadId,
    message: 'say x',
    attachmentFileIds: [pending.body.data.file.id],
  });
  expect(refused.status).toBe(423);
  expect(refused.body).toMatchObject({ ok: false, error: { code: 'conflict' } });
  const after = await http<JobListAnswer>(stack.app, 'GET', `/api/v1/svc-command/jobs?threadId=${threadId}`, { token: stack.ws.token });
  expect(after.body.data.jobs.length).toBe(before.body.data.jobs.length);
});

test('FIFO on a thread: a new job stays queued behind an active one; cancelling a queued job releases its slot', async () => {
  const threadId = await createThread(stack.app, stack.ws.token);
  const first = await waitingJob(threadId);
  const second = (await createJob(stack.app, stack.ws.token, { threadId, message: 'say second' })).body.data.job;
  const third = (await createJob(stack.app, stack.ws.token, { threadId, message: 'say third' })).body.data.job;
  expect(second.status).toBe('queued');
  expect((await getJob(stack.app, stack.ws.token, second.id)).body.data.job.status).toBe('queued');

  // queued → cancel → canceled (its slot is released: the third job runs after the first).
  const canceled = await cancelV1(stack.app, stack.ws.token, second.id);
  expect(canceled.status).toBe(200);
  expect(canceled.body.data.job.status).toBe('canceled');
  expect((await getJob(stack.app, stack.ws.token, third.id)).body.data.job.status).toBe('queued');

  // non-terminal (waiting) → cancel → canceled; the thread moves on to the third job.
  const stopped = await cancelV1(stack.app, stack.ws.token, first.id);
  expect(stopped.body.data.job.status).toBe('canceled');
  const done = await waitForJob(stack.app, stack.ws.token, third.id, isStatus('succeeded'));
  expect(done.status).toBe('succeeded');
  expect((await getJob(stack.app, stack.ws.token, second.id)).body.data.job.traces).toEqual([]);
  expect(llm.chats.some((c) => JSON.stringify(c.messages).includes('say second'))).toBe(false);

  // Terminal cancel is 409, unknown 404; the list is in thread order, newest first, with a cursor.
  expect((await cancelV1(stack.app, stack.ws.token, first.id)).status).toBe(409);
  expect((await cancelV1(stack.app, stack.ws.token, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
  const page1 = await http<JobListAnswer>(stack.app, 'GET', `/api/v1/svc-command/jobs?threadId=${threadId}&limit=2`, {
    token: stack.ws.token,
  });
  expect(page1.body.data.jobs.map((j) => j.id)).toEqual([third.id, second.id]);
  expect(page1.body.data.nextCursor).toBe(second.id);
  const page2 = await http<JobListAnswer>(stack.app, 'GET', `/api/v1/svc-command/jobs?threadId=${threadId}&limit=2&cursor=${second.id}`, {
    token: stack.ws.token,
  });
  expect(page2.body.data).toEqual({ jobs: [expect.objectContaining({ id: first.id })], nextCursor: null });
});

test('list and create validation: bad limit or cursor, bad bodies and missing Idempotency-Key', async () => {
  for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=nope']) {
    const res = await http<JobListAnswer>(stack.app, 'GET', `/api/v1/svc-command/jobs?${q}`, { token: stack.ws.token });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('request_malformed');
  }
  const threadId = await createThread(stack.app, stack.ws.token);
  for (const body of [
    { threadId, message: '' },
    { message: 'x' },
    { threadId: '', message: 'x' },
    { threadId, message: 'x', attachmentFileIds: ['a', 'a'] },
    { threadId, message: 'x', extra: 1 },
  ]) {
    const res = await createJob(stack.app, stack.ws.token, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('request_malformed');
  }
  const noKey = await createJob(stack.app, stack.ws.token, { threadId, message: 'say x' }, null);
  expect(noKey.status).toBe(400);
  expect(noKey.body.error.code).toBe('idempotency_key_invalid');
  // Same key, same body: the stored answer; another body: 409.
  const k = key();
  const a = await createJob(stack.app, stack.ws.token, { threadId, message: 'say once' }, k);
  const b = await createJob(stack.app, stack.ws.token, { threadId, message: 'say once' }, k);
  expect(b.status).toBe(202);
  expect(b.headers.get('idempotency-replayed')).toBe('true');
  expect(b.body.data.job.id).toBe(a.body.data.job.id);
  const c = await createJob(stack.app, stack.ws.token, { threadId, message: 'say twice' }, k);
  expect(c.status).toBe(409);
  expect(c.body.error.code).toBe('idempotency_replay_mismatch');
});

test('session confirm errors: request_malformed, confirmation_not_found, confirmation_mismatch', async () => {
  const job = await waitingJob();
  for (const body of [{}, { confirmationId: 7 }, { confirmationId: '  ' }]) {
    const res = await confirmSession(stack.app, { cookie }, job.id, body);
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe('request_malformed');
  }
  const unknown = await confirmSession(stack.app, { cookie }, job.id, { confirmationId: 'cnf_unknown' });
  expect(unknown.status).toBe(404);
  expect(unknown.body).toMatchObject({ errorCode: 'confirmation_not_found', error: expect.any(String) });

  // A job without a plan (queued behind the waiting one).
  const queued = (await createJob(stack.app, stack.ws.token, { threadId: job.threadId, message: 'say later' })).body.data.job;
  const noPlan = await confirmSession(stack.app, { cookie }, queued.id, { confirmationId: job.confirmation.id });
  expect(noPlan.status).toBe(404);
  expect(noPlan.body.errorCode).toBe('confirmation_not_found');

  // The id of a different confirmation.
  const other = await waitingJob();
  const mismatch = await confirmSession(stack.app, { cookie }, job.id, { confirmationId: other.confirmation.id });
  expect(mismatch.status).toBe(409);
  expect(mismatch.body.errorCode).toBe('confirmation_mismatch');

  // Another user's job.
  const admin = await addUserWithKey(stack.app, stack.ws, 'admin');
  const adminThread = await createThread(stack.app, admin.token);
  const adminJob = (await createJob(stack.app, admin.token, { threadId: adminThread, message: `run ${doubler}` })).body.data.job;
  const waiting = awaitingConfirmation(await waitForJob(stack.app, admin.token, adminJob.id, isStatus('waiting_confirmation')));
  const foreign = await confirmSession(stack.app, { cookie }, adminJob.id, { confirmationId: waiting.confirmation.id });
  expect(foreign.status).toBe(409);
  expect(foreign.body.errorCode).toBe('confirmation_mismatch');
  expect((await getJob(stack.app, admin.token, adminJob.id)).body.data.job.status).toBe('waiting_confirmation');

  // Missing job: 404 with the job-not-found message; cross-origin writes are refused.
  const missing = await confirmSession(stack.app, { cookie }, 'command_missing', { confirmationId: 'cnf_x' });
  expect(missing.status).toBe(404);
  expect(missing.body.error).toBe('Command job not found');
  const crossOrigin = await http(stack.app, 'POST', `/api/svc-command/jobs/${job.id}/confirm`, {
    cookie,
    body: { confirmationId: job.confirmation.id },
    headers: { origin: 'https://evil.example' },
  });
  expect(crossOrigin.status).toBe(403);
  for (const id of [job.id, other.id, queued.id, adminJob.id])
    await cancelV1(stack.app, id === adminJob.id ? admin.token : stack.ws.token, id);
});

test('confirmation_consumed: a consumed confirmation whose job never resumed fails the job; retry queues a new job', async () => {
  const job = await waitingJob();
  // The confirmation was claimed but the Update never reached the execution (a lost response).
  await stack.app.orm.em.fork().getConnection().execute(`update command_jobs set confirmation_state = 'consumed' where id = ?`, [job.id]);
  const res = await confirmSession(stack.app, { cookie }, job.id, { confirmationId: job.confirmation.id });
  expect(res.status).toBe(409);
  expect(res.body).toMatchObject({ errorCode: 'confirmation_consumed', job: { id: job.id, status: 'failed' } });
  await stack.app.deps.temporal.client.workflow.getHandle(job.id).cancel();

  // failed → session retry → a new queued job on the same thread, which gets a new confirmation.
  const retry = await http<SessionRetry>(stack.app, 'POST', `/api/svc-command/jobs/${job.id}/retry`, { cookie });
  expect(retry.status).toBe(202);
  expect(retry.body).toMatchObject({ queued: true, job: { threadId: job.threadId } });
  const session = await http<SessionJob>(stack.app, 'GET', `/api/svc-command/jobs/${retry.body.job.id}`, { cookie });
  expect(session.body).toMatchObject({ attempt: 2, retryOfJobId: job.id });
  const again = awaitingConfirmation(await waitForJob(stack.app, stack.ws.token, retry.body.job.id, isStatus('waiting_confirmation')));
  expect(again.confirmation.id).not.toBe(job.confirmation.id);
  expect((await http(stack.app, 'POST', `/api/svc-command/jobs/${again.id}/retry`, { cookie })).status).toBe(409);
  await cancelV1(stack.app, stack.ws.token, again.id);
  // canceled → retry works too.
  expect((await http(stack.app, 'POST', `/api/svc-command/jobs/${again.id}/retry`, { cookie })).status).toBe(202);
});

test('execution_failed: the confirmed plan fails and the response carries the failed job', async () => {
  const job = await waitingJob(undefined, 'wf_does_not_exist');
  const res = await confirmSession(stack.app, { cookie }, job.id, { confirmationId: job.confirmation.id });
  expect(res.status).toBe(409);
  expect(res.body).toMatchObject({ errorCode: 'execution_failed', job: { id: job.id, status: 'failed' } });
  expect(res.body.job?.traces[0]).toMatchObject({ tool: 'run_workflow', status: 'failed' });
  const session = await http<Refusable<SessionJob>>(stack.app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie });
  expect(session.body.error).toMatch(/run_workflow failed/);
});

test('internal_error: the execution is gone; v1 confirm failures are envelope 409 conflict', async () => {
  const job = await waitingJob();
  await stack.app.deps.temporal.client.workflow.getHandle(job.id).terminate('test');
  const res = await confirmSession(stack.app, { cookie }, job.id, { confirmationId: job.confirmation.id });
  expect(res.status).toBe(500);
  expect(res.body.errorCode).toBe('internal_error');
  const v1 = await confirmV1(stack.app, stack.ws.token, job.id, job.confirmation.id);
  expect(v1.status).toBe(409);
  expect(v1.body).toMatchObject({ ok: false, error: { code: 'conflict' } });
  expect((await confirmV1(stack.app, stack.ws.token, job.id, 'not-cnf')).status).toBe(400);
});

test('session send: 201, empty message 400; cancel and schedules need a session', async () => {
  const empty = await http<Refusable<SessionSend>>(stack.app, 'POST', '/api/svc-command', { cookie, body: { message: '  ' } });
  expect(empty.status).toBe(400);
  expect(empty.body.error).toBe('Message is required.');
  const sent = await http<SessionSend>(stack.app, 'POST', '/api/svc-command', { cookie, body: { message: 'say from the session' } });
  expect(sent.status).toBe(201);
  expect(sent.body.job.id).toMatch(/^command_[0-9a-f-]{36}$/);
  expect(sent.body.threadId).toBe(sent.body.job.threadId);
  const noSession = await http(stack.app, 'POST', '/api/svc-command', { body: { message: 'x' } });
  expect(noSession.status).toBe(401);
  const job = await waitForJob(stack.app, stack.ws.token, sent.body.job.id, isStatus('succeeded'));
  // Threads: the session twins of the v1 thread routes.
  const thread = await http<{ thread: CommandThread }>(stack.app, 'POST', '/api/svc-command/threads', {
    cookie,
    body: { title: 'Planning' },
  });
  expect(thread.status).toBe(201);
  expect(thread.body.thread).toMatchObject({ title: 'Planning', workspaceId: stack.ws.workspaceId });
  const inThread = await http<SessionSend>(stack.app, 'POST', '/api/svc-command', {
    cookie,
    body: { message: 'say in thread', threadId: thread.body.thread.id },
  });
  expect(inThread.body.threadId).toBe(thread.body.thread.id);
  const threads = await http<{ threads: CommandThread[] }>(stack.app, 'GET', '/api/svc-command/threads', { cookie });
  expect(threads.body.threads.map((t) => t.id)).toEqual(expect.arrayContaining([thread.body.thread.id, sent.body.threadId]));
  const v1Threads = await http<Enveloped<{ threads: CommandThread[] }>>(stack.app, 'GET', '/api/v1/svc-command/threads', {
    token: stack.ws.token,
  });
  expect(v1Threads.body.data.threads.length).toBe(threads.body.threads.length);
  expect((await http(stack.app, 'POST', '/api/svc-command', { cookie, body: { message: 'x', workspaceId: 'ws_other' } })).status).toBe(403);
  const cancel = await http(stack.app, 'POST', `/api/svc-command/jobs/${job.id}/cancel`, { cookie });
  expect(cancel.status).toBe(409);
});

test('viewer keys get the workspace-safe.v1 projection and cannot write; other workspaces get 404 and change nothing', async () => {
  const job = await waitingJob();
  const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
  const seen = await getJob(stack.app, viewer.token, job.id);
  expect(seen.status).toBe(200);
  expect(seen.body.data.job).toEqual({
    id: job.id,
    threadId: job.threadId,
    planId: job.planId,
    status: 'waiting_confirmation',
    costCredits: expect.any(Number),
    createdAt: expect.any(String),
    updatedAt: expect.any(String),
    redaction: {
      applied: true,
      projection: 'safe-content',
      contractVersion: 'workspace-safe.v1',
      restrictedFields: ['traces', 'confirmation', 'progress', 'attachments', 'artifacts'],
    },
  });
  expect((await createJob(stack.app, viewer.token, { threadId: job.threadId, message: 'say x' })).status).toBe(403);
  expect((await confirmV1(stack.app, viewer.token, job.id, job.confirmation.id)).status).toBe(403);

  const other = await createWorkspace(stack.app, 'Other');
  expect((await getJob(stack.app, other.token, job.id)).status).toBe(404);
  expect((await confirmV1(stack.app, other.token, job.id, job.confirmation.id)).status).toBe(404);
  expect((await cancelV1(stack.app, other.token, job.id)).status).toBe(404);
  expect((await createJob(stack.app, other.token, { threadId: job.threadId, message: 'say x' })).status).toBe(404);
  expect(
    (
      await http(stack.app, 'POST', `/api/v1/svc-command/jobs/${job.id}/artifacts`, {
        token: other.token,
        body: { fileId: 'f' },
        headers: { 'idempotency-key': key() },
      })
    ).status,
  ).toBe(404);
  const list = await http<JobListAnswer>(stack.app, 'GET', '/api/v1/svc-command/jobs', { token: other.token });
  expect(list.body.data).toEqual({ jobs: [], nextCursor: null });
  expect((await getJob(stack.app, stack.ws.token, job.id)).body.data.job.status).toBe('waiting_confirmation');
  const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
  expect((await getJob(stack.app, personal.token, job.id)).status).toBe(403);
  expect((await http(stack.app, 'GET', '/api/v1/svc-command/jobs')).status).toBe(401);
  await cancelV1(stack.app, stack.ws.token, job.id);
});

test('artifacts: register a file as an output and complete it', async () => {
  const threadId = await createThread(stack.app, stack.ws.token);
  const job = await waitForJob(
    stack.app,
    stack.ws.token,
    (await createJob(stack.app, stack.ws.token, { threadId, message: 'say art' })).body.data.job.id,
    isStatus('succeeded'),
  );
  const pending = (await createFile(stack.app, { token: stack.ws.token }, { name: 'out.txt', mimeType: 'text/plain', sizeBytes: 3 })).body
    .data.file;
  const registered = await http<JobAnswer>(stack.app, 'POST', `/api/v1/svc-command/jobs/${job.id}/artifacts`, {
    token: stack.ws.token,
    body: { fileId: pending.id },
    headers: { 'idempotency-key': key() },
  });
  expect(registered.status).toBe(201);
  expect(registered.body.data.job.artifacts).toEqual([
    expect.objectContaining({ fileId: pending.id, status: 'registered', completedAt: null }),
  ]);
  const notReady = await http(stack.app, 'POST', `/api/v1/svc-command/jobs/${job.id}/artifacts/${pending.id}/complete`, {
    token: stack.ws.token,
    headers: { 'idempotency-key': key() },
  });
  expect(notReady.status).toBe(423);
  const ready = await uploadFile(stack.app, { token: stack.ws.token }, Buffer.from('out'), { name: 'ready.txt', mimeType: 'text/plain' });
  await http(stack.app, 'POST', `/api/v1/svc-command/jobs/${job.id}/artifacts`, {
    token: stack.ws.token,
    body: { fileId: ready.id },
    headers: { 'idempotency-key': key() },
  });
  const completed = await http<JobAnswer>(stack.app, 'POST', `/api/v1/svc-command/jobs/${job.id}/artifacts/${ready.id}/complete`, {
    token: stack.ws.token,
    headers: { 'idempotency-key': key() },
  });
  expect(completed.status).toBe(200);
  expect(completed.body.data.job.artifacts.find((a) => a.fileId === ready.id)).toMatchObject({
    status: 'completed',
    completedAt: expect.any(String),
  });
  const unknown = await http(stack.app, 'POST', `/api/v1/svc-command/jobs/${job.id}/artifacts/nope/complete`, {
    token: stack.ws.token,
    headers: { 'idempotency-key': key() },
  });
  expect(unknown.status).toBe(404);
});
