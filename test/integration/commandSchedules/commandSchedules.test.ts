/**
 * Command schedules: validation, keys (personal and copilot accepted, bearer required), the
 * session twins, and a firing (the Temporal Schedule triggered now) that sends the prompt as a
 * job and counts the run.
 */
import { startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import { addUserWithKey, createWorkspace, http, signInCookie, useTestStack, type ApiError } from '../../kit';
import type { z } from 'zod';
import type { messageListSchema, scheduleCreatedSchema, scheduleListSchema, sessionJobSchema } from '../../../api/schemas/commands';

type ScheduleList = z.infer<typeof scheduleListSchema>;
/** A schedule's create answer, or on a refusal its `error`. */
type ScheduleCreated = z.infer<typeof scheduleCreatedSchema> & { error?: string };
/** The job list and the thread's messages in their `{ ok, data }` envelope. */
type JobList = { data: { jobs: Array<{ id: string }> } };
type MessageList = { data: z.infer<typeof messageListSchema> };
import { agentScript, commandsConfig, isStatus, waitForJob } from '../commands/support';

let llm: FakeLlmServer;
const created: string[] = [];

beforeAll(async () => {
  llm = await startFakeLlm();
  agentScript(llm);
});
const stack = useTestStack(() => ({ config: commandsConfig(llm) }));
stack.beforeClose(async () => {
  // The Temporal server is shared by every test file: leave no schedule behind.
  for (const id of created)
    await stack.app.deps.temporal.client.schedule
      .getHandle(`cmdsched_${id}`)
      .delete()
      .catch(() => undefined);
});
afterAll(async () => {
  await llm?.close();
});

const post = (token: string | undefined, body: unknown) =>
  http<ScheduleCreated>(stack.app, 'POST', '/api/v1/svc-command/schedules', { ...(token ? { token } : {}), body });

test('validation: title, prompt, cron and timezone', async () => {
  const { ws } = stack;
  const cases: Array<[unknown, string | RegExp]> = [
    [{ prompt: 'p', cron: '* * * * *' }, 'Schedule title is required.'],
    [{ title: '  ', prompt: 'p', cron: '* * * * *' }, 'Schedule title is required.'],
    [{ title: 't', prompt: '', cron: '* * * * *' }, 'Schedule prompt is required.'],
    [{ title: 't', prompt: 'p', cron: 'not a cron' }, /cron/i],
    [{ title: 't', prompt: 'p', cron: '* * * * *', timezone: 'Mars/Olympus' }, /timezone/i],
  ];
  for (const [body, message] of cases) {
    const res = await post(ws.token, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(typeof message === 'string' ? message : expect.stringMatching(message));
  }
  expect((await http(stack.app, 'GET', '/api/v1/svc-command/schedules', { token: ws.token })).body).toEqual({ schedules: [] });
  expect((await post(undefined, { title: 't', prompt: 'p', cron: '* * * * *' })).status).toBe(401);
});

test('personal and copilot keys create schedules (default UTC, enabled); session twins list them; other workspaces do not see them', async () => {
  const { app, ws } = stack;
  const personal = await addUserWithKey(app, ws, 'member', 'personal');
  const copilot = await addUserWithKey(app, ws, 'member', 'copilot');
  const a = await post(personal.token, { title: 'Daily', prompt: 'say daily', cron: '0 9 * * *' });
  expect(a.status).toBe(201);
  expect(a.body.schedule).toMatchObject({
    workspaceId: ws.workspaceId,
    createdById: personal.userId,
    title: 'Daily',
    prompt: 'say daily',
    cron: '0 9 * * *',
    timezone: 'UTC',
    enabled: true,
    threadId: null,
    lastRunAt: null,
    runCount: 0,
    nextRunAt: expect.any(String),
  });
  created.push(a.body.schedule.id);
  const b = await post(copilot.token, { title: 'Weekly', prompt: 'say weekly', cron: '0 9 * * 1', timezone: 'Europe/Berlin' });
  expect(b.status).toBe(201);
  created.push(b.body.schedule.id);
  const description = await app.deps.temporal.client.schedule.getHandle(`cmdsched_${b.body.schedule.id}`).describe();
  expect(description.spec.timezone).toBe('Europe/Berlin');

  const cookie = await signInCookie(app, ws.ownerEmail, ws.ownerPassword);
  const sessionList = await http<ScheduleList>(app, 'GET', '/api/svc-command/schedules', { cookie });
  expect(sessionList.body.schedules.map((s) => s.id).sort()).toEqual([a.body.schedule.id, b.body.schedule.id].sort());
  const sessionCreate = await http<ScheduleCreated>(app, 'POST', '/api/svc-command/schedules', {
    cookie,
    body: { title: 'S', prompt: 'say s', cron: '0 0 1 1 *', workspaceId: ws.workspaceId },
  });
  expect(sessionCreate.status).toBe(201);
  created.push(sessionCreate.body.schedule.id);
  expect(
    (await http<ApiError>(app, 'POST', '/api/svc-command/schedules', { cookie, body: { title: '', prompt: 'p', cron: '* * * * *' } })).body
      .error,
  ).toBe('Schedule title is required.');

  const other = await createWorkspace(app, 'Other');
  expect((await http(app, 'GET', '/api/v1/svc-command/schedules', { token: other.token })).body).toEqual({ schedules: [] });
});

test('a firing sends the stored prompt as a job on the schedule thread and updates lastRunAt and runCount', async () => {
  const { app, ws } = stack;
  const res = await post(ws.token, { title: 'Now', prompt: 'say scheduled hello', cron: '0 0 1 1 *' });
  const schedule = res.body.schedule;
  created.push(schedule.id);
  await app.deps.temporal.client.schedule.getHandle(`cmdsched_${schedule.id}`).trigger();

  const deadline = Date.now() + 60_000;
  let fired: ScheduleList['schedules'][number] | undefined;
  while (Date.now() < deadline) {
    const list = await http<ScheduleList>(app, 'GET', '/api/v1/svc-command/schedules', { token: ws.token });
    fired = list.body.schedules.find((s) => s.id === schedule.id);
    if (fired?.runCount === 1) break;
    await new Promise((r) => setTimeout(r, 150));
  }
  expect(fired).toMatchObject({ runCount: 1, lastRunAt: expect.any(String), threadId: expect.any(String), nextRunAt: expect.any(String) });
  const jobs = await http<JobList>(app, 'GET', `/api/v1/svc-command/jobs?threadId=${fired?.threadId}`, { token: ws.token });
  expect(jobs.body.data.jobs).toHaveLength(1);
  const job = await waitForJob(app, ws.token, jobs.body.data.jobs[0].id, isStatus('succeeded'));
  const session = await signInCookie(app, ws.ownerEmail, ws.ownerPassword);
  const detail = await http<z.infer<typeof sessionJobSchema>>(app, 'GET', `/api/svc-command/jobs/${job.id}`, { cookie: session });
  expect(detail.body.result?.content).toBe('reply: scheduled hello');
  // The job the firing queued is filed under the schedule's title.
  const described = await app.deps.temporal.client.workflow.getHandle(job.id).describe();
  expect(described.searchAttributes).toMatchObject({ WorkspaceId: [ws.workspaceId], SvcName: ['Now'] });
  // The prompt was sent as a chat message, and the answer follows it.
  const messages = await http<MessageList>(app, 'GET', `/api/v1/svc-command/threads/${fired?.threadId}/messages`, { token: ws.token });
  expect(messages.body.data.messages).toEqual([
    expect.objectContaining({ role: 'user', content: 'say scheduled hello', jobId: job.id }),
    expect.objectContaining({ role: 'assistant', content: 'reply: scheduled hello', jobId: job.id, jobStatus: 'succeeded' }),
  ]);
});
