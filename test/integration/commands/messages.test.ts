/**
 * Chat messages of command threads over real HTTP, PostgreSQL and Temporal: the session send
 * appends the user's message and the job's end the assistant's (with the job id); v1 creates
 * append none; the thread's messages are listed oldest first with a cursor (session and v1);
 * the session job read falls back to the chat message when the id names a message or a job
 * that is gone. Also: the model-call activities heartbeat while the model hangs, with a
 * heartbeatTimeout in their scheduled options (the Temporal history says so).
 */
import { startFakeLlm, lastMessage, type FakeLlmServer } from '../../fakes/llm';
import { addUserWithKey, createWorkspace, http, signInCookie, useTestStack } from '../../kit';
import type { z } from 'zod';
import type { messageListSchema, sessionJobOnlySchema, sessionSendSchema } from '../../../api/schemas/commands';

type MessageList = z.infer<typeof messageListSchema>;
type Message = MessageList['messages'][number];
type SessionSend = z.infer<typeof sessionSendSchema>;
type SessionJob = z.infer<typeof sessionJobOnlySchema>;
/** A v1 answer: `{ ok, data }`, or on a refusal `{ ok: false, error: { code, message } }`. */
type V1<T> = { data: T; error: { code: string; message: string } };
import { commandsConfig, createJob, createThread, isStatus, waitForJob } from './support';

let llm: FakeLlmServer;
let cookie: string;
let release: () => void = () => undefined;

beforeAll(async () => {
  llm = await startFakeLlm();
  // `hang` waits until the test releases it; anything else is answered at once.
  llm.reply(async (req) => {
    const text = lastMessage(req);
    if (text.startsWith('hang')) {
      await new Promise<void>((resolve) => (release = resolve));
      return { content: 'late answer' };
    }
    return { content: `reply: ${text}` };
  });
});
const stack = useTestStack(() => ({ config: commandsConfig(llm) }));
beforeAll(async () => {
  cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword);
}, 120_000);
stack.beforeClose(async () => {
  release();
});
afterAll(async () => {
  await llm?.close();
});

const sessionMessages = (threadId: string, query = '') =>
  http<MessageList>(stack.app, 'GET', `/api/svc-command/threads/${threadId}/messages${query}`, { cookie });
const v1Messages = (threadId: string, token = stack.ws.token, query = '') =>
  http<V1<MessageList>>(stack.app, 'GET', `/api/v1/svc-command/threads/${threadId}/messages${query}`, { token });

async function waitForMessages(threadId: string, count: number): Promise<Message[]> {
  const deadline = Date.now() + 60_000;
  let last: Awaited<ReturnType<typeof sessionMessages>> | undefined;
  while (Date.now() < deadline) {
    last = await sessionMessages(threadId);
    if (last.status === 200 && last.body.messages.length >= count) return last.body.messages;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`thread ${threadId} did not reach ${count} messages: ${JSON.stringify(last?.body)}`);
}

test('a session send appends the user message and the job end the assistant answer; listed oldest first with a cursor', async () => {
  const sent = await http<SessionSend>(stack.app, 'POST', '/api/svc-command', { cookie, body: { message: 'first question' } });
  expect(sent.status).toBe(201);
  const { threadId, job } = sent.body;
  await waitForJob(stack.app, stack.ws.token, job.id, isStatus('succeeded'));
  const second = await http<SessionSend>(stack.app, 'POST', '/api/svc-command', { cookie, body: { message: 'second question', threadId } });
  await waitForJob(stack.app, stack.ws.token, second.body.job.id, isStatus('succeeded'));

  const messages = await waitForMessages(threadId, 4);
  expect(messages).toEqual([
    {
      id: expect.stringMatching(/^cmsg_/),
      threadId,
      role: 'user',
      content: 'first question',
      jobId: job.id,
      jobStatus: null,
      createdById: expect.any(String),
      createdAt: expect.any(String),
    },
    {
      id: expect.stringMatching(/^cmsg_/),
      threadId,
      role: 'assistant',
      content: 'reply: first question',
      jobId: job.id,
      jobStatus: 'succeeded',
      createdById: null,
      createdAt: expect.any(String),
    },
    expect.objectContaining({ role: 'user', content: 'second question', jobId: second.body.job.id }),
    expect.objectContaining({ role: 'assistant', content: 'reply: second question', jobId: second.body.job.id, jobStatus: 'succeeded' }),
  ]);

  // Pages: the cursor is the last message id of the previous page.
  const page1 = await v1Messages(threadId, stack.ws.token, '?limit=3');
  expect(page1.status).toBe(200);
  expect(page1.body.data.messages.map((m) => m.id)).toEqual(messages.slice(0, 3).map((m) => m.id));
  expect(page1.body.data.nextCursor).toBe(messages[2].id);
  const page2 = await v1Messages(threadId, stack.ws.token, `?limit=3&cursor=${page1.body.data.nextCursor}`);
  expect(page2.body.data).toEqual({ messages: [messages[3]], nextCursor: null });
  expect((await v1Messages(threadId, stack.ws.token, '?limit=0')).body.error.code).toBe('request_malformed');
  expect((await v1Messages(threadId, stack.ws.token, '?limit=101')).status).toBe(400);
  const badCursor = await v1Messages(threadId, stack.ws.token, '?cursor=cmsg_nope');
  expect(badCursor.status).toBe(400);
  expect(badCursor.body.error.code).toBe('request_malformed');

  // Viewer keys see the messages without their text.
  const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
  const seen = await v1Messages(threadId, viewer.token);
  expect(seen.body.data.messages[0]).not.toHaveProperty('content');
  expect(seen.body.data.messages[0]).toMatchObject({ redaction: { applied: true, restrictedFields: ['content'] } });

  // Another workspace: the thread is not found.
  const other = await createWorkspace(stack.app, 'Other chat');
  expect((await v1Messages(threadId, other.token)).status).toBe(404);
  const otherCookie = await signInCookie(stack.app, other.ownerEmail, other.ownerPassword);
  expect((await http(stack.app, 'GET', `/api/svc-command/threads/${threadId}/messages`, { cookie: otherCookie })).status).toBe(404);
  expect((await http(stack.app, 'GET', `/api/svc-command/jobs/${messages[0].id}`, { cookie: otherCookie })).status).toBe(404);
});

test('a v1 create appends no chat message', async () => {
  const threadId = await createThread(stack.app, stack.ws.token);
  const res = await createJob(stack.app, stack.ws.token, { threadId, message: 'quiet question' });
  expect(res.status).toBe(202);
  await waitForJob(stack.app, stack.ws.token, res.body.data.job.id, isStatus('succeeded'));
  expect((await v1Messages(threadId)).body.data).toEqual({ messages: [], nextCursor: null });
});

test('GET /api/svc-command/jobs/{id} answers the chat message for a message id, and for a job that is gone', async () => {
  const sent = await http<SessionSend>(stack.app, 'POST', '/api/svc-command', { cookie, body: { message: 'keep this' } });
  const { threadId, job } = sent.body;
  await waitForJob(stack.app, stack.ws.token, job.id, isStatus('succeeded'));
  const [user, assistant] = await waitForMessages(threadId, 2);

  const byMessage = await http(stack.app, 'GET', `/api/svc-command/jobs/${user.id}`, { cookie });
  expect(byMessage.status).toBe(200);
  expect(byMessage.body).toEqual({ threadId, plan: null, job: null, message: user });
  // The job itself still answers as a job.
  expect((await http<SessionJob>(stack.app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie })).body.job.id).toBe(job.id);

  await stack.app.orm.em.fork().execute('delete from command_jobs where id = ?', [job.id]);
  const gone = await http(stack.app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie });
  expect(gone.status).toBe(200);
  expect(gone.body).toEqual({ threadId, plan: null, job: null, message: assistant });
  expect((await http(stack.app, 'GET', '/api/svc-command/jobs/command_unknown', { cookie })).status).toBe(404);
});

test('model calls heartbeat while the model hangs (heartbeatTimeout in the history); a cancel ends the chat with a canceled answer', async () => {
  const sent = await http<SessionSend>(stack.app, 'POST', '/api/svc-command', { cookie, body: { message: 'hang on' } });
  const { threadId, job } = sent.body;
  const handle = stack.app.deps.temporal.client.workflow.getHandle(job.id);
  const deadline = Date.now() + 60_000;
  let pending: { lastHeartbeatTime?: unknown } | null | undefined;
  while (Date.now() < deadline) {
    const described = await handle.describe().catch(() => null);
    pending = described?.raw.pendingActivities?.find((a) => a.activityType?.name === 'planCommandJob');
    if (pending?.lastHeartbeatTime) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(pending?.lastHeartbeatTime).toBeTruthy();
  const history = await handle.fetchHistory();
  const scheduled = history.events!.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'planCommandJob',
  )!.activityTaskScheduledEventAttributes!;
  expect(Number(scheduled.heartbeatTimeout!.seconds)).toBe(20);
  expect(Number(scheduled.startToCloseTimeout!.seconds)).toBe(300);

  const canceled = await http<SessionJob>(stack.app, 'POST', `/api/svc-command/jobs/${job.id}/cancel`, { cookie });
  expect(canceled.body.job.status).toBe('canceled');
  release();
  const messages = await waitForMessages(threadId, 2);
  expect(messages).toEqual([
    expect.objectContaining({ role: 'user', content: 'hang on', jobId: job.id }),
    expect.objectContaining({ role: 'assistant', content: 'The job was canceled.', jobId: job.id, jobStatus: 'canceled' }),
  ]);
});
