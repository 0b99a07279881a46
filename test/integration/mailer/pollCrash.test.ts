/**
 * A worker SIGKILLed in the middle of a mail poll: the poll had stored some messages but not
 * its cursor. After a new worker starts, the retried poll fetches from the old cursor again;
 * every message ends up stored exactly once with exactly one run, and the cursor advances.
 */
import type { ChildProcess } from 'node:child_process';
import MailComposer from 'nodemailer/lib/mail-composer';
import { WORKFLOW_TYPES, TASK_QUEUE } from '../../../temporal/shared';
import { MailerMessageSchema, MailerPollingGroupSchema } from '../../../db/entities';
import { startGmailFake, type GmailFake } from '../../fakes/gmail';
import type { z } from 'zod';
import type { createdMailerRouteSchema, pollingGroupResponseSchema } from '../../../api/schemas/mailer';
import { useTestStack, type CredentialEnvelope } from '../../kit';
import { runsOfWorkflow } from '../../support/runs';
import { killWorker, spawnWorker } from '../../support/workerProcess';

type CreatedMailerRoute = z.infer<typeof createdMailerRouteSchema>;
type PollingGroupResponse = z.infer<typeof pollingGroupResponseSchema>;

const TOKEN = 'gmail-crash-token-0123456789';
let gmail: GmailFake;
let worker: ChildProcess | undefined;

beforeAll(async () => {
  gmail = await startGmailFake(TOKEN);
});
/** Workers are spawned processes here: no worker in the test process. */
const stack = useTestStack({ config: { outboundAllowPrivateNetworks: true }, temporal: { dispatcher: true }, worker: false });
stack.beforeClose(async () => {
  if (worker) await killWorker(worker);
});
afterAll(async () => {
  await gmail?.close();
});

async function mime(subject: string, to: string): Promise<Buffer> {
  return new MailComposer({
    from: 'sender@sender.test',
    to,
    subject,
    text: subject,
    messageId: `<${subject.replace(/\W/g, '')}-${Date.now()}@sender.test>`,
  })
    .compile()
    .build();
}

test('kill -9 of the worker during a poll loses no message and stores none twice', async () => {
  const wf = await stack.api.workflows.create({});
  const workflowId = wf.body.workflow.id;
  expect((await stack.api.workflows.deploy(workflowId)).status).toBe(200);
  const address = `crash-${Date.now()}@example.test`;
  const route = await stack.api.post<CreatedMailerRoute>(
    '/api/v1/mailer/routes',
    { address, workflowId },
    { headers: { 'idempotency-key': `crash-${Date.now()}` } },
  );
  expect(route.status).toBe(201);
  const cred = await stack.api.post<CredentialEnvelope>('/api/v1/credentials', {
    name: 'gmail',
    type: 'mailA',
    value: { token: TOKEN, baseUrl: gmail.baseUrl },
  });
  const group = await stack.api.post<PollingGroupResponse>('/api/v1/mailer/polling-groups', {
    provider: 'mailA',
    credentialId: cred.body.credential.id,
  });
  const groupId = group.body.pollingGroup.id;
  const { app } = stack;
  const client = app.deps.temporal.client;
  const em = () => app.orm.em.fork();

  worker = await spawnWorker();
  const pollOnce = (id: string) =>
    client.workflow.start(WORKFLOW_TYPES.mailPoll, { taskQueue: TASK_QUEUE, workflowId: id, args: [{ groupId }] });
  await (await pollOnce(`crash-baseline-${groupId}`)).result();
  const baseline = (await em().findOneOrFail(MailerPollingGroupSchema, { id: groupId })).cursor;
  expect(baseline).toMatch(/^\d+$/);

  const ids = [];
  for (let i = 1; i <= 4; i++) ids.push(gmail.deliver(await mime(`crash ${i}`, address)));
  // Let the first two messages through, then hold the third fetch: the poll is in progress.
  let gets = 0;
  const gate = { hold: null as null | ReturnType<GmailFake['hold']> };
  const original = gmail.requests.push.bind(gmail.requests);
  gmail.requests.push = (...items) => {
    for (const r of items) if (/\/messages\/msg/.test(r.path) && ++gets === 3) gate.hold = gmail.hold();
    return original(...items);
  };
  const handle = await pollOnce(`crash-poll-${groupId}`);
  const waitFor = async (done: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + 30_000;
    while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  };
  await waitFor(() => gate.hold !== null);
  await gate.hold!.held;
  expect((await em().find(MailerMessageSchema, { routeId: route.body.route.id })).map((m) => m.subject)).toEqual(['crash 1', 'crash 2']);
  expect((await em().findOneOrFail(MailerPollingGroupSchema, { id: groupId })).cursor).toBe(baseline);

  await killWorker(worker);
  gmail.requests.push = original;
  gate.hold!.release();
  worker = await spawnWorker();
  // The retried attempt (after the heartbeat timeout) polls from the old cursor.
  const result = await handle.result();
  expect(result).toMatchObject({ outcome: 'polled', stored: 2, duplicates: 2 });

  const stored = await em().find(MailerMessageSchema, { routeId: route.body.route.id }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  expect(stored.map((m) => m.externalMessageId)).toEqual(ids.map((id) => `mailA:${id}`));
  expect(Number((await em().findOneOrFail(MailerPollingGroupSchema, { id: groupId })).cursor)).toBeGreaterThan(Number(baseline));
  const runs = await runsOfWorkflow(app, workflowId, 5);
  expect(runs).toHaveLength(4);
  expect(runs.every((r) => r.trigger === 'email')).toBe(true);
}, 120_000);
