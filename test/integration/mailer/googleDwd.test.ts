/**
 * PATCH /api/v1/mailer/routes/{id}/google-dwd: bind a route to a Google Workspace mailbox
 * through domain-wide delegation (service account credential + subject), or clear it; Admin or
 * Owner; validated; workspace-scoped. A bound configuration is what polling groups name as
 * googleDwdConfigId: the group polls the subject's mailbox into that route, and replies on the
 * route are sent through Gmail as the subject. A credential holding a Google service-account key
 * mints the subject's tokens with the JWT bearer grant at the loopback token endpoint, which
 * checks the signature and the subject.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import { WORKFLOW_TYPES, TASK_QUEUE } from '../../../temporal/shared';
import { MailerGoogleDwdConfigSchema, MailerMessageSchema, MailerReplyReservationSchema } from '../../../db/entities';
import { startGmailFake, type GmailFake } from '../../fakes/gmail';
import type { z } from 'zod';
import type { credentialListSchema, credentialTestSchema } from '../../../api/schemas/credentials';
import type {
  createdMailerRouteSchema,
  mailerInboundAcceptedSchema,
  mailerRouteGoogleDwdSchema,
  pollingGroupResponseSchema,
  replySentSchema,
} from '../../../api/schemas/mailer';
import { addUserWithKey, createWorkspace, useTestStack, type CredentialEnvelope, type Refusable, type WorkspaceFixture } from '../../kit';

type CreatedMailerRoute = z.infer<typeof createdMailerRouteSchema>;
type RouteGoogleDwd = z.infer<typeof mailerRouteGoogleDwdSchema> & { error?: string };
type PollingGroupResponse = z.infer<typeof pollingGroupResponseSchema>;
type InboundAccepted = z.infer<typeof mailerInboundAcceptedSchema>;
type ReplyAnswer = z.infer<typeof replySentSchema> & { error?: string; code?: string };
type CredentialList = z.infer<typeof credentialListSchema>;
type CredentialTest = z.infer<typeof credentialTestSchema>;

const TOKEN = 'service-account-token-0123456789';
let other: WorkspaceFixture;
let gmail: GmailFake;
let n = 0;
const uniq = () => `${Date.now().toString(36)}${n++}`;

const stack = useTestStack(async () => {
  gmail = await startGmailFake(TOKEN);
  // Delegated tokens are minted at the loopback token endpoint (GOOGLE_OAUTH_TOKEN_URL), whatever token_uri the key names.
  return {
    config: {
      outboundAllowPrivateNetworks: true,
      mailer: { gmailBaseUrl: gmail.baseUrl, graphBaseUrl: 'http://127.0.0.1:9/unused', timeoutMs: 10_000, googleTokenUrl: gmail.tokenUrl },
    },
  };
});
beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other');
});
afterAll(async () => {
  await gmail?.close();
});

const dwdPath = (routeId: string) => `/api/v1/mailer/routes/${routeId}/google-dwd`;

async function newRoute(token = stack.ws.token): Promise<{ id: string; address: string }> {
  const wf = await stack.as(token).workflows.create({});
  expect((await stack.as(token).workflows.deploy(wf.body.workflow.id)).status).toBe(200);
  const address = `dwd-${uniq()}@example.test`;
  const res = await stack
    .as(token)
    .post<CreatedMailerRoute>(
      '/api/v1/mailer/routes',
      { address, workflowId: wf.body.workflow.id },
      { headers: { 'idempotency-key': `k-${uniq()}` } },
    );
  expect(res.status).toBe(201);
  return { id: res.body.route.id, address };
}

async function credential(type: string, token = stack.ws.token): Promise<string> {
  const res = await stack.as(token).post<CredentialEnvelope>('/api/v1/credentials', {
    name: `${type}-${uniq()}`,
    type,
    value: type === 'smtp' ? { host: '127.0.0.1', username: 'u', password: 'p' } : { token: TOKEN, baseUrl: gmail.baseUrl },
  });
  expect(res.status).toBe(201);
  return res.body.credential.id;
}

test('bind, rebind (same id) and clear; the binding is stored and shown; Admin or Owner only', async () => {
  const route = await newRoute();
  const credentialId = await credential('mailA');
  const bound = await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), {
    serviceAccountCredentialId: credentialId,
    subject: '  Support@Example.TEST ',
  });
  expect(bound.status).toBe(200);
  expect(bound.body.route).toMatchObject({ id: route.id, address: route.address });
  expect(bound.body.googleDwd).toMatchObject({
    id: expect.stringMatching(/^gdwd_/),
    serviceAccountCredentialId: credentialId,
    subject: 'support@example.test',
  });
  expect(bound.body.links.self).toBe(`${stack.app.url}/api/v1/mailer/routes/${route.id}`);

  const second = await credential('mailA');
  const rebound = await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), {
    serviceAccountCredentialId: second,
    subject: 'helpdesk@example.test',
  });
  expect(rebound.status).toBe(200);
  expect(rebound.body.googleDwd).toMatchObject({
    id: bound.body.googleDwd?.id,
    serviceAccountCredentialId: second,
    subject: 'helpdesk@example.test',
  });

  const member = await addUserWithKey(stack.app, stack.ws, 'member');
  const denied = await stack.as(member.token).patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: null });
  expect(denied.status).toBe(403);
  const admin = await addUserWithKey(stack.app, stack.ws, 'admin');
  const cleared = await stack.as(admin.token).patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: null });
  expect(cleared.status).toBe(200);
  expect(cleared.body.googleDwd).toBeNull();
  expect(await stack.app.orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(0);
  // Clearing again is a no-op.
  expect((await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: null })).body.googleDwd).toBeNull();
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
    const res = await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), body);
    expect([res.status, res.body.error]).toEqual([400, expect.stringMatching(message)]);
  }
  expect(await stack.app.orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(0);
  const missing = await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), {
    serviceAccountCredentialId: 'cred_missing',
    subject: 'a@example.test',
  });
  expect(missing.status).toBe(404);
});

test("another workspace's route or credential is 404 and nothing changes; non-workspace keys 403", async () => {
  const route = await newRoute();
  const credentialId = await credential('mailA');
  const foreignCredential = await credential('mailA', other.token);
  expect(
    (
      await stack
        .as(other.token)
        .patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: foreignCredential, subject: 'a@example.test' })
    ).status,
  ).toBe(404);
  expect(
    (await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: foreignCredential, subject: 'a@example.test' }))
      .status,
  ).toBe(404);
  expect(await stack.app.orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(0);

  const bound = await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), {
    serviceAccountCredentialId: credentialId,
    subject: 'a@example.test',
  });
  expect(bound.status).toBe(200);
  expect((await stack.as(other.token).patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: null })).status).toBe(404);
  expect(await stack.app.orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(1);
  // Another workspace cannot name the configuration in its polling groups either.
  expect(
    (
      await stack
        .as(other.token)
        .post<PollingGroupResponse>('/api/v1/mailer/polling-groups', { provider: 'mailA', googleDwdConfigId: bound.body.googleDwd?.id })
    ).status,
  ).toBe(404);
  const org = await addUserWithKey(stack.app, stack.ws, 'admin', 'organization');
  expect((await stack.as(org.token).patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: null })).status).toBe(403);
  expect(await stack.app.orm.em.fork().count(MailerGoogleDwdConfigSchema, { routeId: route.id })).toBe(1);
});

test("a polling group on the delegation polls the subject's mailbox into the route; replies go out as the subject; clearing disables the group", async () => {
  const route = await newRoute();
  const credentialId = await credential('mailA');
  const subject = `agent-${uniq()}@example.test`;
  const bound = await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: credentialId, subject });
  const created = await stack.api.post<PollingGroupResponse>('/api/v1/mailer/polling-groups', {
    provider: 'mailA',
    googleDwdConfigId: bound.body.googleDwd?.id,
  });
  expect(created.status).toBe(201);
  expect(created.body.pollingGroup).toMatchObject({ googleDwdConfigId: bound.body.googleDwd?.id, credentialId: null });
  const groupId = created.body.pollingGroup.id;
  const poll = () =>
    stack.app.deps.temporal.client.workflow.execute(WORKFLOW_TYPES.mailPoll, {
      taskQueue: TASK_QUEUE,
      workflowId: `dwd-poll-${uniq()}`,
      args: [{ groupId }],
    });

  expect(await poll()).toMatchObject({ outcome: 'baseline' });
  // Delivered to the subject's mailbox; addressed elsewhere, it still belongs to the bound route.
  const raw = await new MailComposer({
    from: 'erin@sender.test',
    to: subject,
    subject: 'delegated',
    text: 'hi',
    messageId: '<d1@sender.test>',
  })
    .compile()
    .build();
  gmail.deliver(raw, { user: subject, threadId: 'thread-d' });
  gmail.deliver(raw, { user: 'me' });
  expect(await poll()).toMatchObject({ outcome: 'polled', stored: 1 });
  expect(gmail.requests.some((r) => r.path === `/gmail/v1/users/${encodeURIComponent(subject)}/history`)).toBe(true);
  const [message] = await stack.app.orm.em.fork().find(MailerMessageSchema, { routeId: route.id });
  expect(message).toMatchObject({ subject: 'delegated', fromAddress: 'erin@sender.test' });

  const reply = await stack.api.post<ReplyAnswer>(
    `/api/v1/mailer/messages/${message.id}/reply`,
    { text: 'on it' },
    { headers: { 'idempotency-key': `r-${uniq()}` } },
  );
  expect(reply.status).toBe(201);
  expect(gmail.sent.at(-1)).toMatchObject({ user: subject, threadId: 'thread-d' });
  expect(gmail.sent.at(-1)!.raw).toMatch(new RegExp(`^From: ${subject.replace(/[.]/g, '\\.')}$`, 'm'));

  expect((await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: null })).status).toBe(200);
  const group = await stack.api.get<PollingGroupResponse>(`/api/v1/mailer/polling-groups/${groupId}`);
  expect(group.body.pollingGroup).toMatchObject({ enabled: false, nextPollAt: null, lastError: 'The route delegation was cleared.' });
});

// ------------------------------------------------------------------ service-account keys

const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

/** A Google service-account JSON key file (as the console downloads it) and its public key. */
function serviceAccountKey(clientEmail = `sa-${uniq()}@project.iam.gserviceaccount.com`): {
  file: Record<string, string>;
  publicKey: KeyObject;
} {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const file = {
    type: 'service_account',
    project_id: 'project',
    private_key_id: `kid${uniq()}0123456789abcdef`,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: '1234567890',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: GOOGLE_TOKEN_URI,
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: 'https://www.googleapis.com/robot/v1/metadata/x509/sa',
    universe_domain: 'googleapis.com',
  };
  return { file, publicKey };
}

async function keyCredential(file: Record<string, string>): Promise<string> {
  const res = await stack.api.post<CredentialEnvelope>('/api/v1/credentials', {
    name: `sa-${uniq()}`,
    type: 'mailA',
    value: { serviceAccountKey: file, baseUrl: gmail.baseUrl },
  });
  expect(res.status).toBe(201);
  return res.body.credential.id;
}

async function delegatedGroup(
  credentialId: string,
  subject: string,
): Promise<{ route: { id: string; address: string }; configId: string; groupId: string }> {
  const route = await newRoute();
  const bound = await stack.api.patch<RouteGoogleDwd>(dwdPath(route.id), { serviceAccountCredentialId: credentialId, subject });
  expect(bound.status).toBe(200);
  const config = bound.body.googleDwd;
  if (!config) throw new Error(`the binding answered no googleDwd: ${bound.text}`);
  const created = await stack.api.post<PollingGroupResponse>('/api/v1/mailer/polling-groups', {
    provider: 'mailA',
    googleDwdConfigId: config.id,
  });
  expect(created.status).toBe(201);
  return { route, configId: config.id, groupId: created.body.pollingGroup.id };
}

const pollGroup = (groupId: string) =>
  stack.app.deps.temporal.client.workflow.execute(WORKFLOW_TYPES.mailPoll, {
    taskQueue: TASK_QUEUE,
    workflowId: `dwd-key-poll-${uniq()}`,
    args: [{ groupId }],
  });
const jwtGrants = () => gmail.grants.filter((g) => g.grantType === 'urn:ietf:params:oauth:grant-type:jwt-bearer');

test('a mailA credential holds a service-account key: validated on create and update (400 without echoing the key), listed with a mask of the key id', async () => {
  const { file } = serviceAccountKey();
  const pemBody = file.private_key.split('\n')[5];
  const bad: Array<[unknown, RegExp]> = [
    [
      { serviceAccountKey: { ...file, private_key: `not a key ${pemBody}` } },
      /value\.serviceAccountKey\.private_key: must be a PEM-encoded RSA private key/,
    ],
    [
      { serviceAccountKey: { ...file, private_key: file.private_key.replace(pemBody, pemBody.split('').reverse().join('')) } },
      /value\.serviceAccountKey\.private_key: must be a PEM-encoded RSA private key/,
    ],
    [{ serviceAccountKey: { ...file, type: 'authorized_user' } }, /value\.serviceAccountKey\.type: must be "service_account"/],
    [{ serviceAccountKey: { ...file, client_email: 'nobody' } }, /value\.serviceAccountKey\.client_email/],
    [{ serviceAccountKey: `{"type":"service_account","private_key":"${pemBody}"` }, /must be the service account JSON key file/],
    [{ serviceAccountKey: file, token: 'also-a-token-123' }, /either a token or a serviceAccountKey/],
    [{ ...file, private_key_id: undefined }, /value\.serviceAccountKey\.private_key_id/],
  ];
  for (const [value, message] of bad) {
    const res = await stack.api.post<Refusable<CredentialEnvelope>>('/api/v1/credentials', { name: `bad-${uniq()}`, type: 'mailA', value });
    expect([res.status, res.body.error]).toEqual([400, expect.stringMatching(message)]);
    expect(JSON.stringify(res.body)).not.toContain(pemBody);
  }
  // The key file itself is a valid value (its extra fields are accepted and dropped), as is its JSON text.
  const created = await stack.api.post<CredentialEnvelope>('/api/v1/credentials', { name: `sa-${uniq()}`, type: 'mailA', value: file });
  expect(created.status).toBe(201);
  const asText = await stack.api.post<CredentialEnvelope>('/api/v1/credentials', {
    name: `sa-${uniq()}`,
    type: 'mailA',
    value: { serviceAccountKey: JSON.stringify(file) },
  });
  expect(asText.status).toBe(201);
  const listed = await stack.api.get<CredentialList>('/api/v1/credentials');
  const entry = listed.body.credentials.find((c) => c.id === created.body.credential.id);
  expect(entry).toMatchObject({
    type: 'mailA',
    readable: true,
    maskedValue: `${file.private_key_id.slice(0, 4)}••••••••${file.private_key_id.slice(-2)}`,
  });
  expect(JSON.stringify([created.body, listed.body])).not.toContain('PRIVATE KEY');
  const tested = await stack.api.post<CredentialTest>(`/api/v1/credentials/${created.body.credential.id}/test`);
  expect(tested.body.result).toMatchObject({ ok: false, status: 'not_configured', message: expect.stringMatching(/google-dwd/) });
  const patched = await stack.api.patch<Refusable<CredentialEnvelope>>(`/api/v1/credentials/${created.body.credential.id}`, {
    value: { serviceAccountKey: { ...file, private_key: 'x' } },
  });
  expect([patched.status, patched.body.error]).toEqual([400, expect.stringMatching(/private_key: must be a PEM-encoded RSA private key/)]);
});

test('a delegated polling group and reply mint tokens with the key (JWT bearer grant, signature and subject checked), cached until the API refuses one', async () => {
  const { file, publicKey } = serviceAccountKey();
  const subject = `agent-${uniq()}@example.test`;
  gmail.trustServiceAccount(file.client_email, publicKey, [subject]);
  const { route, groupId } = await delegatedGroup(await keyCredential(file), subject);
  const grantsBefore = jwtGrants().length;

  expect(await pollGroup(groupId)).toMatchObject({ outcome: 'baseline' });
  const raw = await new MailComposer({
    from: 'erin@sender.test',
    to: subject,
    subject: 'with a key',
    text: 'hi',
    messageId: `<k${uniq()}@sender.test>`,
  })
    .compile()
    .build();
  gmail.deliver(raw, { user: subject, threadId: 'thread-key' });
  expect(await pollGroup(groupId)).toMatchObject({ outcome: 'polled', stored: 1 });
  // One grant served both polls; the assertion was signed by the key, for the subject, with Gmail scopes, for at most an hour.
  expect(jwtGrants().slice(grantsBefore)).toEqual([{ grantType: 'urn:ietf:params:oauth:grant-type:jwt-bearer', subject }]);
  const claims = gmail.assertions.filter((a) => a.iss === file.client_email);
  expect(claims).toHaveLength(1);
  expect(claims[0]).toMatchObject({
    sub: subject,
    aud: GOOGLE_TOKEN_URI,
    scope: expect.stringContaining('https://www.googleapis.com/auth/gmail.readonly'),
  });
  expect(Number(claims[0].exp) - Number(claims[0].iat)).toBeLessThanOrEqual(3600);
  const history = gmail.requests.filter((r) => r.path === `/gmail/v1/users/${encodeURIComponent(subject)}/history`).at(-1)!;
  expect(history.headers.authorization).toMatch(/^Bearer issued-/);

  const [message] = await stack.app.orm.em.fork().find(MailerMessageSchema, { routeId: route.id });
  const reply = await stack.api.post<ReplyAnswer>(
    `/api/v1/mailer/messages/${message.id}/reply`,
    { text: 'on it' },
    { headers: { 'idempotency-key': `r-${uniq()}` } },
  );
  expect(reply.status).toBe(201);
  expect(gmail.sent.at(-1)).toMatchObject({ user: subject, threadId: 'thread-key' });
  expect(jwtGrants().length - grantsBefore).toBe(1);

  // The cached token expires early at the provider: the 401 mints a new one once and the call is repeated.
  gmail.revokeIssued();
  gmail.deliver(raw, { user: subject, threadId: 'thread-key' });
  expect(await pollGroup(groupId)).toMatchObject({ outcome: 'polled', stored: 1 });
  expect(jwtGrants().length - grantsBefore).toBe(2);
});

test('a wrong key or a subject the service account may not act as: the poll keeps a clear lastError, the reply is 409 SETUP_REQUIRED and nothing is reserved', async () => {
  const trusted = serviceAccountKey();
  const subject = `agent-${uniq()}@example.test`;
  gmail.trustServiceAccount(trusted.file.client_email, trusted.publicKey, [subject]);

  // Same service account, another private key: the signature does not verify.
  const forged = { ...serviceAccountKey(trusted.file.client_email).file, private_key_id: trusted.file.private_key_id };
  const wrongKey = await delegatedGroup(await keyCredential(forged), subject);
  expect(await pollGroup(wrongKey.groupId)).toMatchObject({ outcome: 'failed' });
  const failed = (await stack.api.get<PollingGroupResponse>(`/api/v1/mailer/polling-groups/${wrongKey.groupId}`)).body.pollingGroup;
  expect(failed.lastError).toBe(
    `The Google token endpoint refused a delegated token for ${subject} to service account ${trusted.file.client_email}: HTTP 400 (invalid_grant: Invalid JWT Signature.).`,
  );
  expect(failed.cursor).toBeNull();

  // The right key, but a user the administrator did not delegate.
  const stranger = `stranger-${uniq()}@example.test`;
  const unauthorized = await delegatedGroup(await keyCredential(trusted.file), stranger);
  expect(await pollGroup(unauthorized.groupId)).toMatchObject({
    outcome: 'failed',
    error: expect.stringMatching(
      new RegExp(`for ${stranger.replace(/[.]/g, '\\.')} .*HTTP 401 \\(unauthorized_client: Client is unauthorized`),
    ),
  });
  expect(gmail.requests.some((r) => r.path.includes(encodeURIComponent(stranger)))).toBe(false);

  // A message on that route (generic inbound) cannot be answered: the delegation is refused before anything is reserved.
  const inbound = await stack.api.post<InboundAccepted>('/api/v1/mailer/inbound', {
    to: unauthorized.route.address,
    from: 'erin@sender.test',
    subject: 'help',
    text: 'hi',
  });
  expect(inbound.status).toBe(202);
  const reply = await stack.api.post<ReplyAnswer>(
    `/api/v1/mailer/messages/${inbound.body.message.id}/reply`,
    { text: 'on it' },
    { headers: { 'idempotency-key': `r-${uniq()}` } },
  );
  expect(reply.status).toBe(409);
  expect(reply.body).toMatchObject({ code: 'SETUP_REQUIRED', error: expect.stringMatching(/unauthorized_client/) });
  expect(JSON.stringify(reply.body)).not.toContain('PRIVATE KEY');
  expect(await stack.app.orm.em.fork().count(MailerReplyReservationSchema, { messageId: inbound.body.message.id })).toBe(0);
});
