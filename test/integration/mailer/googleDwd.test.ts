/**
 * PATCH /api/v1/mailer/routes/{id}/google-dwd: bind a route to a Google Workspace mailbox
 * through domain-wide delegation (service account credential + subject), or clear it; Admin or
 * Owner; validated; workspace-scoped. A bound configuration is what polling groups name as
 * googleDwdConfigId: the group polls the subject's mailbox into that route, and replies on the
 * route are sent through Gmail as the subject.
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import { WORKFLOW_TYPES, TASK_QUEUE } from '../../../temporal/shared';
import { MailerGoogleDwdConfigSchema, MailerMessageSchema } from '../../../db/entities';
import { startGmailFake, type GmailFake } from '../../fakes/gmail';
import { addUserWithKey, createWorkspace, http, startTestStack, type TestStack, type WorkspaceFixture } from '../../support/harness';

const TOKEN = 'service-account-token-0123456789';
let stack: TestStack;
let ws: WorkspaceFixture;
let other: WorkspaceFixture;
let gmail: GmailFake;
let n = 0;
const uniq = () => `${Date.now().toString(36)}${n++}`;

beforeAll(async () => {
  gmail = await startGmailFake(TOKEN);
  stack = await startTestStack({ config: { outboundAllowPrivateNetworks: true } });
  ws = stack.ws;
  other = await createWorkspace(stack.app, 'Other');
});
afterAll(async () => {
  await stack?.close();
  await gmail?.close();
});

const app = () => stack.app;
const dwdPath = (routeId: string) => `/api/v1/mailer/routes/${routeId}/google-dwd`;

async function newRoute(token = ws.token): Promise<{ id: string; address: string }> {
  const wf = await http(app(), 'POST', '/api/v1/workflows', { token, body: {} });
  expect((await http(app(), 'POST', `/api/v1/workflows/${wf.body.workflow.id}/deploy`, { token })).status).toBe(200);
  const address = `dwd-${uniq()}@example.test`;
  const res = await http(app(), 'POST', '/api/v1/mailer/routes', { token, body: { address, workflowId: wf.body.workflow.id }, headers: { 'idempotency-key': `k-${uniq()}` } });
  expect(res.status).toBe(201);
  return { id: res.body.route.id, address };
}

async function credential(type: string, token = ws.token): Promise<string> {
  const res = await http(app(), 'POST', '/api/v1/credentials', { token, body: { name: `${type}-${uniq()}`, type, value: type === 'smtp' ? { host: '127.0.0.1', username: 'u', password: 'p' } : { token: TOKEN, baseUrl: gmail.baseUrl } } });
  expect(res.status).toBe(201);
  return res.body.credential.id;
}

test('bind, rebind (same id) and clear; the binding is stored and shown; Admin or Owner only', async () => {
  const route = await newRoute();
  const credentialId = await credential('mailA');
  const bound = await http(app(), 'PATCH', dwdPath(route.id), { token: ws.token, body: { serviceAccountCredentialId: credentialId, subject: '  Support@Example.TEST ' } });
  expect(bound.status).toBe(200);
  expect(bound.body.route).toMatchObject({ id: route.id, address: route.address });
  expect(bound.body.googleDwd).toMatchObject({ id: expect.stringMatching(/^gdwd_/), serviceAccountCredentialId: credentialId, subject: 'support@example.test' });
  expect(bound.body.links.self).toBe(`${app().url}/api/v1/mailer/routes/${route.id}`);

  const second = await credential('mailA');
  const rebound = await http(app(), 'PATCH', dwdPath(route.id), { token: ws.token, body: { serviceAccountCredentialId: second, subject: 'helpdesk@example.test' } });
  expect(rebound.status).toBe(200);
  expect(rebound.body.googleDwd).toMatchObject({ id: bound.body.googleDwd.id, serviceAccountCredentialId: second, subject: 'helpdesk@example.test' });

  const member = await addUserWithKey(app(), ws, 'member');
  const denied = await http(app(), 'PATCH', dwdPath(route.id), { token: member.token, body: { serviceAccountCredentialId: null } });
  expect(denied.status).toBe(403);
  const admin = await addUserWithKey(app(), ws, 'admin');
  const cleared = await http(app(), 'PATCH', dwdPath(route.id), { token: admin.token, body: { serviceAccountCredentialId: null } });
  expect(cleared.status).toBe(200);
  expect(cleared.body.googleDwd).toBeNull();
  expect(await app().orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(0);
  // Clearing again is a no-op.
  expect((await http(app(), 'PATCH', dwdPath(route.id), { token: ws.token, body: { serviceAccountCredentialId: null } })).body.googleDwd).toBeNull();
});

test('bad input is 400 with its message and changes nothing', async () => {
  const route = await newRoute();
  const credentialId = await credential('mailA');
  const cases: Array<[unknown, RegExp]> = [
    [{ serviceAccountCredentialId: credentialId }, /subject must be an email address/],
    [{ serviceAccountCredentialId: credentialId, subject: 'not-an-address' }, /subject must be an email address/],
    [{ serviceAccountCredentialId: null, subject: 'a@example.test' }, /subject must be omitted when clearing/],
    [{ serviceAccountCredentialId: await credential('smtp'), subject: 'a@example.test' }, /must name a mailA credential; this one is smtp/],
    [{ subject: 'a@example.test' }, /serviceAccountCredentialId/],
    [{ serviceAccountCredentialId: credentialId, subject: 'a@example.test', extra: 1 }, /extra|Unrecognized/i],
    [{ serviceAccountCredentialId: 42, subject: 'a@example.test' }, /serviceAccountCredentialId/],
  ];
  for (const [body, message] of cases) {
    const res = await http(app(), 'PATCH', dwdPath(route.id), { token: ws.token, body });
    expect([res.status, res.body.error]).toEqual([400, expect.stringMatching(message)]);
  }
  expect(await app().orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(0);
  const missing = await http(app(), 'PATCH', dwdPath(route.id), { token: ws.token, body: { serviceAccountCredentialId: 'cred_missing', subject: 'a@example.test' } });
  expect(missing.status).toBe(404);
});

test("another workspace's route or credential is 404 and nothing changes; non-workspace keys 403", async () => {
  const route = await newRoute();
  const credentialId = await credential('mailA');
  const foreignCredential = await credential('mailA', other.token);
  expect((await http(app(), 'PATCH', dwdPath(route.id), { token: other.token, body: { serviceAccountCredentialId: foreignCredential, subject: 'a@example.test' } })).status).toBe(404);
  expect((await http(app(), 'PATCH', dwdPath(route.id), { token: ws.token, body: { serviceAccountCredentialId: foreignCredential, subject: 'a@example.test' } })).status).toBe(404);
  expect(await app().orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(0);

  const bound = await http(app(), 'PATCH', dwdPath(route.id), { token: ws.token, body: { serviceAccountCredentialId: credentialId, subject: 'a@example.test' } });
  expect(bound.status).toBe(200);
  expect((await http(app(), 'PATCH', dwdPath(route.id), { token: other.token, body: { serviceAccountCredentialId: null } })).status).toBe(404);
  expect(await app().orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(1);
  // Another workspace cannot name the configuration in its polling groups either.
  expect((await http(app(), 'POST', '/api/v1/mailer/polling-groups', { token: other.token, body: { provider: 'mailA', googleDwdConfigId: bound.body.googleDwd.id } })).status).toBe(404);
  const org = await addUserWithKey(app(), ws, 'admin', 'organization');
  expect((await http(app(), 'PATCH', dwdPath(route.id), { token: org.token, body: { serviceAccountCredentialId: null } })).status).toBe(403);
  expect(await app().orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(1);
});

test("a polling group on the delegation polls the subject's mailbox into the route; replies go out as the subject; clearing disables the group", async () => {
  const route = await newRoute();
  const credentialId = await credential('mailA');
  const subject = `agent-${uniq()}@example.test`;
  const bound = await http(app(), 'PATCH', dwdPath(route.id), { token: ws.token, body: { serviceAccountCredentialId: credentialId, subject } });
  const created = await http(app(), 'POST', '/api/v1/mailer/polling-groups', { token: ws.token, body: { provider: 'mailA', googleDwdConfigId: bound.body.googleDwd.id } });
  expect(created.status).toBe(201);
  expect(created.body.pollingGroup).toMatchObject({ googleDwdConfigId: bound.body.googleDwd.id, credentialId: null });
  const groupId = created.body.pollingGroup.id;
  const poll = () => app().deps.temporal.client.workflow.execute(WORKFLOW_TYPES.mailPoll, { taskQueue: TASK_QUEUE, workflowId: `dwd-poll-${uniq()}`, args: [{ groupId }] });

  expect(await poll()).toMatchObject({ outcome: 'baseline' });
  // Delivered to the subject's mailbox; addressed elsewhere, it still belongs to the bound route.
  const raw = await new MailComposer({ from: 'erin@sender.test', to: subject, subject: 'delegated', text: 'hi', messageId: '<d1@sender.test>' }).compile().build();
  gmail.deliver(raw, { user: subject, threadId: 'thread-d' });
  gmail.deliver(raw, { user: 'me' });
  expect(await poll()).toMatchObject({ outcome: 'polled', stored: 1 });
  expect(gmail.requests.some((r) => r.path === `/gmail/v1/users/${encodeURIComponent(subject)}/history`)).toBe(true);
  const [message] = await app().orm.em.fork().find(MailerMessageSchema, { routeId: route.id });
  expect(message).toMatchObject({ subject: 'delegated', fromAddress: 'erin@sender.test' });

  const reply = await http(app(), 'POST', `/api/v1/mailer/messages/${message.id}/reply`, { token: ws.token, body: { text: 'on it' }, headers: { 'idempotency-key': `r-${uniq()}` } });
  expect(reply.status).toBe(201);
  expect(gmail.sent.at(-1)).toMatchObject({ user: subject, threadId: 'thread-d' });
  expect(gmail.sent.at(-1)!.raw).toMatch(new RegExp(`^From: ${subject.replace(/[.]/g, '\\.')}$`, 'm'));

  expect((await http(app(), 'PATCH', dwdPath(route.id), { token: ws.token, body: { serviceAccountCredentialId: null } })).status).toBe(200);
  const group = await http(app(), 'GET', `/api/v1/mailer/polling-groups/${groupId}`, { token: ws.token });
  expect(group.body.pollingGroup).toMatchObject({ enabled: false, nextPollAt: null, lastError: 'The route delegation was cleared.' });
});
