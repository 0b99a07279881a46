/**
 * Mail polling: polling groups polled by their Temporal Schedule's workflow against loopback
 * Gmail (history list + messages.get raw), Microsoft Graph (delta query + $value) and IMAP
 * (imapflow: UIDVALIDITY + UID); cursors stored, each message one stored message and one run
 * with trigger `email`, re-polls deduplicated, attachments stored as scanned Files; replies to
 * polled messages sent through the group's provider (Gmail messages.send, Graph sendMail).
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import { WORKFLOW_TYPES, TASK_QUEUE } from '../../../temporal/shared';
import { mailPollScheduleId, syncMailPollSchedules } from '../../../temporal/sourcesClient';
import { MailerMessageSchema, MailerPollingGroupSchema } from '../../../db/entities';
import { startGmailFake, type GmailFake } from '../../fakes/gmail';
import { startGraphFake, type GraphFake } from '../../fakes/graph';
import { startFakeImap, type FakeImap } from '../../fakes/imap';
import { createWorkspace, deployWorkflow, http, useTestStack, type WorkspaceFixture } from '../../kit';
import type { z } from 'zod';
import type {
  createdMailerRouteSchema,
  mailerMessageListSchema,
  pollingGroupResponseSchema,
  replySentSchema,
} from '../../../api/schemas/mailer';
import type { credentialEnvelopeSchema } from '../../../api/schemas/credentials';
import type { fileEnvelopeSchema } from '../../../api/schemas/files';

type CreatedMailerRoute = z.infer<typeof createdMailerRouteSchema>;
type CredentialEnvelope = z.infer<typeof credentialEnvelopeSchema>;
type PollingGroupResponse = z.infer<typeof pollingGroupResponseSchema>;
type MailerMessageList = z.infer<typeof mailerMessageListSchema>;
type ReplySent = z.infer<typeof replySentSchema>;
/** GET /api/v1/files/{id}: the file in the `{ ok, data }` envelope. */
type FileAnswer = { data: z.infer<typeof fileEnvelopeSchema> };
import { runsOfWorkflow } from '../../support/runs';

const GMAIL_TOKEN = 'gmail-access-token-0123456789';
const GRAPH_TOKEN = 'graph-access-token-0123456789';
const OAUTH = { refreshToken: 'refresh-token-0123456789', clientId: 'mail-client', clientSecret: 'mail-client-secret' };
let other: WorkspaceFixture;
let gmail: GmailFake;
let graph: GraphFake;
let imap: FakeImap;
let n = 0;
const uniq = () => `${Date.now().toString(36)}${n++}`;
const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$' + 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*', 'ascii');

const stack = useTestStack(async () => {
  gmail = await startGmailFake(GMAIL_TOKEN, { oauth: OAUTH });
  graph = await startGraphFake(GRAPH_TOKEN, { oauth: OAUTH });
  imap = await startFakeImap({ username: 'inbox-user', password: 'imap-password' });
  // Gmail's base URL comes from the configuration (GMAIL_API_BASE_URL); Graph's from the credential's own baseUrl.
  return {
    config: {
      outboundAllowPrivateNetworks: true,
      mailer: { gmailBaseUrl: gmail.baseUrl, graphBaseUrl: 'http://127.0.0.1:9/unused', timeoutMs: 10_000 },
    },
    temporal: { dispatcher: true },
  };
});
beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other');
});
afterAll(async () => {
  await Promise.all([gmail?.close(), graph?.close(), imap?.close()]);
});

const deployedWorkflow = async (token = stack.ws.token) => (await deployWorkflow(stack, {}, { token })).workflowId;

async function route(address: string, workflowId: string, token = stack.ws.token): Promise<string> {
  const res = await http<CreatedMailerRoute>(stack.app, 'POST', '/api/v1/mailer/routes', {
    token,
    body: { address, workflowId },
    headers: { 'idempotency-key': `k-${uniq()}` },
  });
  expect(res.status).toBe(201);
  return res.body.route.id;
}

async function credential(type: string, value: Record<string, unknown>, token = stack.ws.token): Promise<string> {
  const res = await http<CredentialEnvelope>(stack.app, 'POST', '/api/v1/credentials', {
    token,
    body: { name: `${type}-${uniq()}`, type, value },
  });
  expect(res.status).toBe(201);
  return res.body.credential.id;
}

async function group(provider: 'mailA' | 'mailB', credentialId: string): Promise<string> {
  const res = await http<PollingGroupResponse>(stack.app, 'POST', '/api/v1/mailer/polling-groups', {
    token: stack.ws.token,
    body: { provider, credentialId, intervalSeconds: 3600 },
  });
  expect(res.status).toBe(201);
  return res.body.pollingGroup.id;
}

/** One poll, as the group's schedule starts it: the mailPollWorkflow on the task queue. */
async function poll(groupId: string): Promise<{ outcome: string; stored: number; duplicates: number; unrouted: number }> {
  return stack.app.deps.temporal.client.workflow.execute(WORKFLOW_TYPES.mailPoll, {
    taskQueue: TASK_QUEUE,
    workflowId: `test-mailpoll-${uniq()}`,
    args: [{ groupId }],
  });
}

async function mime(o: {
  from: string;
  to: string;
  subject: string;
  text: string;
  messageId?: string;
  attachments?: Array<{ filename: string; content: Buffer; contentType: string }>;
}): Promise<Buffer> {
  return new MailComposer({ ...o, messageId: o.messageId ?? `<${uniq()}@sender.test>` }).compile().build();
}

const groupView = async (id: string) =>
  (await http<PollingGroupResponse>(stack.app, 'GET', `/api/v1/mailer/polling-groups/${id}`, { token: stack.ws.token })).body.pollingGroup;
const messagesOfRoute = (routeId: string) =>
  stack.app.orm.em.fork().find(MailerMessageSchema, { routeId }, { orderBy: { createdAt: 'asc', id: 'asc' } });

test('Gmail: the first poll sets a baseline (historyId); new messages become one message and one email run each; a re-poll stores nothing twice', async () => {
  const workflowId = await deployedWorkflow();
  const address = `gmail-${uniq()}@example.test`;
  const routeId = await route(address, workflowId);
  gmail.deliver(await mime({ from: 'old@sender.test', to: address, subject: 'before the baseline', text: 'old' }));
  const groupId = await group('mailA', await credential('mailA', { token: GMAIL_TOKEN }));

  expect(await poll(groupId)).toMatchObject({ outcome: 'baseline', stored: 0 });
  const baseline = await groupView(groupId);
  expect(baseline.cursor).toMatch(/^\d+$/);
  expect(baseline.lastPolledAt).toEqual(expect.any(String));
  expect(baseline.lastError).toBeNull();

  const ids = [];
  for (let i = 1; i <= 3; i++)
    ids.push(
      gmail.deliver(await mime({ from: `Ann <ann${i}@sender.test>`, to: address, subject: `hello ${i}`, text: `body ${i}` }), {
        threadId: 'thread-1',
      }),
    );
  expect(await poll(groupId)).toMatchObject({ outcome: 'polled', stored: 3, duplicates: 0 });
  const stored = await messagesOfRoute(routeId);
  expect(stored.map((m) => m.externalMessageId)).toEqual(ids.map((id) => `mailA:${id}`));
  expect(stored.map((m) => m.subject)).toEqual(['hello 1', 'hello 2', 'hello 3']);
  expect(stored[0]).toMatchObject({ fromAddress: 'ann1@sender.test', text: 'body 1\n', direction: 'inbound' });
  expect(stored[0].providerMetadata).toMatchObject({ provider: 'mailA', gmailThreadId: 'thread-1', pollingGroupId: groupId });
  // One Gmail thread is one mailer thread.
  expect(new Set(stored.map((m) => m.threadId)).size).toBe(1);
  const after = await groupView(groupId);
  expect(Number(after.cursor)).toBeGreaterThan(Number(baseline.cursor));
  // The history list was paged (two records a page) and every message fetched as raw.
  expect(gmail.requests.filter((r) => r.path.endsWith('/history')).some((r) => r.query.get('pageToken'))).toBe(true);
  expect(gmail.requests.filter((r) => r.path.includes('/messages/msg')).every((r) => r.query.get('format') === 'raw')).toBe(true);

  const runs = await runsOfWorkflow(stack.app, workflowId, 3);
  expect(runs).toHaveLength(3);
  expect(runs.every((r) => r.trigger === 'email')).toBe(true);

  // The same cursor again (a poll cut short before it stored its cursor) is deduplicated.
  await stack.app.orm.em.fork().nativeUpdate(MailerPollingGroupSchema, { id: groupId }, { cursor: baseline.cursor });
  expect(await poll(groupId)).toMatchObject({ outcome: 'polled', stored: 0, duplicates: 3 });
  expect(await messagesOfRoute(routeId)).toHaveLength(3);
  expect(await runsOfWorkflow(stack.app, workflowId, 4)).toHaveLength(3);
  expect(await poll(groupId)).toMatchObject({ outcome: 'polled', stored: 0, duplicates: 0 });

  // Mail for an address no route of the workspace has is not stored.
  gmail.deliver(await mime({ from: 'x@sender.test', to: `nobody-${uniq()}@example.test`, subject: 'lost', text: 'x' }));
  expect(await poll(groupId)).toMatchObject({ stored: 0, unrouted: 1 });
});

test('Gmail: expired history restarts from the current mailbox and records it; a bad token is lastError and the cursor stays', async () => {
  const address = `gmail-exp-${uniq()}@example.test`;
  await route(address, await deployedWorkflow());
  const groupId = await group('mailA', await credential('mailA', { token: GMAIL_TOKEN }));
  await poll(groupId);
  gmail.expireHistory();
  gmail.deliver(await mime({ from: 'a@sender.test', to: address, subject: 'x', text: 'x' }));
  expect(await poll(groupId)).toMatchObject({ outcome: 'baseline', stored: 0 });
  expect((await groupView(groupId)).lastError).toMatch(/history expired/);

  const badGroup = await group('mailA', await credential('mailA', { token: 'wrong-token-0123456789' }));
  expect(await poll(badGroup)).toMatchObject({ outcome: 'failed' });
  const view = await groupView(badGroup);
  expect(view).toMatchObject({ cursor: null, lastError: 'Gmail answered HTTP 401 to users.getProfile.' });
  expect(view.nextPollAt).toEqual(expect.any(String));
});

test('Gmail: attachments are stored as scanned Files (ready, or quarantined) and referenced by id', async () => {
  const workflowId = await deployedWorkflow();
  const address = `gmail-att-${uniq()}@example.test`;
  const routeId = await route(address, workflowId);
  const groupId = await group('mailA', await credential('mailA', { token: GMAIL_TOKEN }));
  await poll(groupId);
  gmail.deliver(
    await mime({
      from: 'files@sender.test',
      to: address,
      subject: 'two files',
      text: 'see attached',
      attachments: [
        { filename: 'report.txt', content: Buffer.from('quarterly numbers\n'), contentType: 'text/plain' },
        { filename: 'eicar.com', content: EICAR, contentType: 'application/octet-stream' },
      ],
    }),
  );
  expect(await poll(groupId)).toMatchObject({ stored: 1 });
  const [message] = await messagesOfRoute(routeId);
  expect(message.attachmentFileIds).toHaveLength(2);
  const listed = await http<MailerMessageList>(stack.app, 'GET', `/api/v1/mailer/messages?threadId=${message.threadId}`, {
    token: stack.ws.token,
  });
  expect(listed.body.messages[0].attachmentFileIds).toEqual(message.attachmentFileIds);

  const report = await http<FileAnswer>(stack.app, 'GET', `/api/v1/files/${message.attachmentFileIds[0]}`, { token: stack.ws.token });
  expect(report.status).toBe(200);
  expect(report.body.data.file).toMatchObject({ name: 'report.txt', mimeType: 'text/plain', sizeBytes: 18, status: 'ready' });
  const content = await fetch(`${stack.app.url}/api/v1/files/${message.attachmentFileIds[0]}/content`, {
    headers: { authorization: `Bearer ${stack.ws.token}` },
  });
  expect(await content.text()).toBe('quarterly numbers\n');
  const eicar = await http<FileAnswer>(stack.app, 'GET', `/api/v1/files/${message.attachmentFileIds[1]}`, { token: stack.ws.token });
  expect(eicar.body.data.file).toMatchObject({ name: 'eicar.com', status: 'quarantined' });
  // The files are the workspace's: another workspace does not see them.
  expect((await http(stack.app, 'GET', `/api/v1/files/${message.attachmentFileIds[0]}`, { token: other.token })).status).toBe(404);
});

test('Graph: the delta query (paged by nextLink) sets a baseline deltaLink; new messages are fetched as $value; replies go through sendMail', async () => {
  const workflowId = await deployedWorkflow();
  const address = `graph-${uniq()}@example.test`;
  const routeId = await route(address, workflowId);
  for (let i = 0; i < 3; i++) graph.deliver(await mime({ from: 'old@sender.test', to: address, subject: `old ${i}`, text: 'old' }));
  const groupId = await group('mailB', await credential('mailB', { token: GRAPH_TOKEN, baseUrl: graph.baseUrl }));

  expect(await poll(groupId)).toMatchObject({ outcome: 'baseline', stored: 0 });
  const baseline = await groupView(groupId);
  expect(baseline.cursor).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\.0\/me\/mailFolders\/inbox\/messages\/delta\?\$deltatoken=\d+$/);

  const first = graph.deliver(await mime({ from: 'Bob <bob@sender.test>', to: address, subject: 'graph one', text: 'one' }), {
    conversationId: 'conv-A',
  });
  graph.deliver(await mime({ from: 'bob@sender.test', to: address, subject: 'graph two', text: 'two' }), { conversationId: 'conv-B' });
  graph.deliver(await mime({ from: 'bob@sender.test', to: address, subject: 'graph three', text: 'three' }), { conversationId: 'conv-B' });
  expect(await poll(groupId)).toMatchObject({ outcome: 'polled', stored: 3 });
  const stored = await messagesOfRoute(routeId);
  expect(stored.map((m) => m.subject)).toEqual(['graph one', 'graph two', 'graph three']);
  expect(stored[0].externalMessageId).toBe(`mailB:${first}`);
  expect(new Set(stored.map((m) => m.threadId)).size).toBe(2);
  expect((await groupView(groupId)).cursor).not.toBe(baseline.cursor);
  expect(graph.requests.some((r) => r.path.endsWith('/$value'))).toBe(true);
  expect(await runsOfWorkflow(stack.app, workflowId, 3)).toHaveLength(3);
  expect(await poll(groupId)).toMatchObject({ stored: 0, duplicates: 0 });

  // Reply through the group's provider: Graph sendMail as the mailbox.
  const reply = await http<ReplySent>(stack.app, 'POST', `/api/v1/mailer/messages/${stored[0].id}/reply`, {
    token: stack.ws.token,
    body: { text: 'Thanks, Bob' },
    headers: { 'idempotency-key': `r-${uniq()}` },
  });
  expect(reply.status).toBe(201);
  expect(reply.body.reservation).toMatchObject({ status: 'sent', provider: 'mailB' });
  expect(graph.sent).toHaveLength(1);
  // Graph's MIME form of sendMail, so the reply carries the threading headers.
  const sentMime = graph.sent[0].mime!;
  expect(graph.sent[0]).toMatchObject({ user: 'me', mime: expect.any(String) });
  expect(sentMime).toMatch(/^Subject: Re: graph one\r?$/m);
  expect(sentMime).toMatch(/^To: bob@sender\.test\r?$/m);
  expect(sentMime).toContain('Thanks, Bob');
  expect(stored[0].messageIdHeader).toMatch(/^<.+@sender\.test>$/);
  expect(sentMime).toContain(`In-Reply-To: ${stored[0].messageIdHeader}`);
  expect(sentMime).toContain(`References: ${stored[0].messageIdHeader}`);
});

test('Gmail replies go through users.messages.send with raw MIME in the original thread', async () => {
  const address = `gmail-reply-${uniq()}@example.test`;
  const routeId = await route(address, await deployedWorkflow());
  const groupId = await group('mailA', await credential('mailA', { token: GMAIL_TOKEN }));
  await poll(groupId);
  gmail.deliver(await mime({ from: 'carol@sender.test', to: address, subject: 'question', text: 'q?', messageId: '<q1@sender.test>' }), {
    threadId: 'thread-q',
  });
  await poll(groupId);
  const [message] = await messagesOfRoute(routeId);
  const before = gmail.sent.length;
  const headers = { 'idempotency-key': `r-${uniq()}` };
  const reply = await http<ReplySent>(stack.app, 'POST', `/api/v1/mailer/messages/${message.id}/reply`, {
    token: stack.ws.token,
    body: { text: 'Answer.' },
    headers,
  });
  expect(reply.status).toBe(201);
  expect(reply.body.reservation).toMatchObject({ status: 'sent', provider: 'mailA' });
  expect(gmail.sent).toHaveLength(before + 1);
  const sent = gmail.sent[before];
  expect(sent).toMatchObject({ user: 'me', threadId: 'thread-q' });
  expect(sent.raw).toMatch(/^To: carol@sender\.test$/m);
  expect(sent.raw).toMatch(/^Subject: Re: question$/m);
  expect(sent.raw).toMatch(/^In-Reply-To: <q1@sender\.test>$/m);
  expect(sent.raw).toContain('Answer.');
  // The replay is deduplicated: nothing sent again.
  const replay = await http<ReplySent>(stack.app, 'POST', `/api/v1/mailer/messages/${message.id}/reply`, {
    token: stack.ws.token,
    body: { text: 'Answer.' },
    headers,
  });
  expect(replay.status).toBe(200);
  expect(replay.body.deduplicated).toBe(true);
  expect(gmail.sent).toHaveLength(before + 1);
});

test('an expired mailA/mailB access token with a refresh token is refreshed once on a 401 (stored for later calls) and the call repeated; a refused refresh is lastError', async () => {
  const refreshable = (baseUrl: string, tokenUrl: string, refreshToken = OAUTH.refreshToken) => ({
    token: `expired-${uniq()}-0123456789`,
    refreshToken,
    tokenUrl,
    clientId: OAUTH.clientId,
    clientSecret: OAUTH.clientSecret,
    baseUrl,
  });
  const refreshes = (fake: GraphFake | GmailFake) => fake.grants.filter((g) => g.grantType === 'refresh_token' && g.subject).length;

  // Graph: the baseline's delta query gets a 401, the token is refreshed, the query repeated.
  const graphAddress = `graph-refresh-${uniq()}@example.test`;
  const graphRoute = await route(graphAddress, await deployedWorkflow());
  const graphGroup = await group('mailB', await credential('mailB', refreshable(graph.baseUrl, graph.tokenUrl)));
  const graphBefore = refreshes(graph);
  expect(await poll(graphGroup)).toMatchObject({ outcome: 'baseline' });
  expect(refreshes(graph)).toBe(graphBefore + 1);
  graph.deliver(await mime({ from: 'bob@sender.test', to: graphAddress, subject: 'after refresh', text: 'x' }));
  // The refreshed token was stored: the next poll uses it without refreshing again.
  expect(await poll(graphGroup)).toMatchObject({ outcome: 'polled', stored: 1 });
  expect(refreshes(graph)).toBe(graphBefore + 1);
  expect((await messagesOfRoute(graphRoute)).map((m) => m.subject)).toEqual(['after refresh']);

  // Gmail: a reply whose send gets a 401 (the stored token expired meanwhile) is refreshed and sent once.
  const gmailAddress = `gmail-refresh-${uniq()}@example.test`;
  const gmailRoute = await route(gmailAddress, await deployedWorkflow());
  const gmailGroup = await group('mailA', await credential('mailA', refreshable(gmail.baseUrl, gmail.tokenUrl)));
  const gmailBefore = refreshes(gmail);
  expect(await poll(gmailGroup)).toMatchObject({ outcome: 'baseline' });
  expect(refreshes(gmail)).toBe(gmailBefore + 1);
  gmail.deliver(await mime({ from: 'carol@sender.test', to: gmailAddress, subject: 'refresh me', text: 'q' }), { threadId: 'thread-r' });
  expect(await poll(gmailGroup)).toMatchObject({ outcome: 'polled', stored: 1 });
  const [message] = await messagesOfRoute(gmailRoute);
  gmail.revokeIssued();
  const sentBefore = gmail.sent.length;
  const reply = await http<ReplySent>(stack.app, 'POST', `/api/v1/mailer/messages/${message.id}/reply`, {
    token: stack.ws.token,
    body: { text: 'Refreshed.' },
    headers: { 'idempotency-key': `r-${uniq()}` },
  });
  expect(reply.status).toBe(201);
  expect(gmail.sent.length).toBe(sentBefore + 1);
  expect(refreshes(gmail)).toBe(gmailBefore + 2);

  // A refused refresh: the poll fails with the token endpoint's answer and the cursor stays.
  const refused = await group('mailB', await credential('mailB', refreshable(graph.baseUrl, graph.tokenUrl, 'revoked-refresh-token-0123')));
  expect(await poll(refused)).toMatchObject({ outcome: 'failed' });
  expect(await groupView(refused)).toMatchObject({
    cursor: null,
    lastError: 'The OAuth2 token endpoint refused the refresh: HTTP 400 (invalid_grant).',
  });
});

test('IMAP: the cursor is UIDVALIDITY + last UID; new UIDs are stored once; a new UIDVALIDITY restarts from the mailbox state', async () => {
  const workflowId = await deployedWorkflow();
  const address = `imap-${uniq()}@example.test`;
  const routeId = await route(address, workflowId);
  imap.deliver(await mime({ from: 'old@sender.test', to: address, subject: 'old', text: 'old' }));
  const credentialId = await credential('imap', {
    host: '127.0.0.1',
    port: imap.port,
    secure: false,
    username: 'inbox-user',
    password: 'imap-password',
  });
  // Gmail and Outlook mailboxes are also read over IMAP: an imap credential serves either provider.
  const groupId = await group('mailB', credentialId);
  expect(await poll(groupId)).toMatchObject({ outcome: 'baseline' });
  const baseline = JSON.parse((await groupView(groupId)).cursor ?? 'null');
  expect(baseline).toEqual({ uidValidity: expect.stringMatching(/^\d+$/), lastUid: 1 });

  const u2 = imap.deliver(await mime({ from: 'dan@sender.test', to: address, subject: 'imap one', text: 'one' }));
  const u3 = imap.deliver(await mime({ from: 'dan@sender.test', to: address, subject: 'imap two', text: 'two' }));
  expect(await poll(groupId)).toMatchObject({ outcome: 'polled', stored: 2 });
  expect((await messagesOfRoute(routeId)).map((m) => m.externalMessageId)).toEqual([
    `imap:${baseline.uidValidity}:${u2}`,
    `imap:${baseline.uidValidity}:${u3}`,
  ]);
  expect(JSON.parse((await groupView(groupId)).cursor ?? 'null')).toEqual({ uidValidity: baseline.uidValidity, lastUid: u3 });
  expect(imap.commands.some((c) => /UID FETCH 2:\* \(UID BODY\.PEEK\[\]\)/.test(c))).toBe(true);
  expect(imap.commands.some((c) => / EXAMINE INBOX$/.test(c))).toBe(true);
  expect(await poll(groupId)).toMatchObject({ stored: 0, duplicates: 0 });
  expect(await runsOfWorkflow(stack.app, workflowId, 2)).toHaveLength(2);

  imap.resetUidValidity();
  expect(await poll(groupId)).toMatchObject({ outcome: 'baseline', stored: 0 });
  const view = await groupView(groupId);
  expect(JSON.parse(view.cursor ?? 'null').uidValidity).not.toBe(baseline.uidValidity);
  expect(view.lastError).toMatch(/UIDVALIDITY changed/);
  expect(await messagesOfRoute(routeId)).toHaveLength(2);
});

test('each enabled group has a Temporal Schedule at its interval that polls it; disabling removes it', async () => {
  const address = `sched-${uniq()}@example.test`;
  const routeId = await route(address, await deployedWorkflow());
  const groupId = await group('mailA', await credential('mailA', { token: GMAIL_TOKEN }));
  const client = stack.app.deps.temporal.client;
  const synced = await syncMailPollSchedules(client, stack.app.orm.em.fork(), [groupId]);
  expect(synced.kept).toEqual([mailPollScheduleId(groupId)]);
  const handle = client.schedule.getHandle(mailPollScheduleId(groupId));
  try {
    const described = await handle.describe();
    expect(described.spec.intervals?.[0]?.every).toBe(3_600_000);
    // The Schedule and the polls it starts are found by the workspace's filter (docs/operations.md).
    expect(described.searchAttributes).toMatchObject({ WorkspaceId: [stack.ws.workspaceId] });
    expect((described.action as { searchAttributes?: Record<string, unknown> }).searchAttributes).toMatchObject({
      WorkspaceId: [stack.ws.workspaceId],
    });
    const waitFor = async (done: () => Promise<boolean>) => {
      const deadline = Date.now() + 30_000;
      while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    };
    await handle.trigger();
    await waitFor(async () => (await groupView(groupId)).cursor !== null);
    expect((await groupView(groupId)).cursor).toMatch(/^\d+$/);
    gmail.deliver(await mime({ from: 'sched@sender.test', to: address, subject: 'scheduled', text: 's' }));
    await handle.trigger();
    await waitFor(async () => (await messagesOfRoute(routeId)).length > 0);
    expect((await messagesOfRoute(routeId)).map((m) => m.subject)).toEqual(['scheduled']);

    expect(
      (await http(stack.app, 'PATCH', `/api/v1/mailer/polling-groups/${groupId}`, { token: stack.ws.token, body: { enabled: false } }))
        .status,
    ).toBe(200);
    const after = await syncMailPollSchedules(client, stack.app.orm.em.fork(), [groupId]);
    expect(after.removed).toEqual([mailPollScheduleId(groupId)]);
    await expect(handle.describe()).rejects.toThrow();
  } finally {
    await handle.delete().catch(() => undefined);
  }
});
