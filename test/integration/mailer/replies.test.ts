/** Replies: Idempotency-Key, SETUP_REQUIRED, reservations written before the SMTP call, crashes mid-send and Admin authorize_retry. */
import { startFakeSmtp } from '../../fakes/smtp';
import { loadConfig } from '../../../services/kernel/config';
import { createFile, filesConfig, uploadFile } from '../files/support';
import type { z } from 'zod';
import type {
  createdMailerRouteSchema,
  mailerInboundAcceptedSchema,
  mailerThreadWithMessagesSchema,
  replyReservationSchema,
  replySentSchema,
} from '../../../api/schemas/mailer';
import { startTestApp } from '../../support/harness';
import {
  addUserWithKey,
  client,
  createWorkspace,
  useTestStack,
  type AppTarget,
  type CredentialEnvelope,
  type TestApp,
  type WorkspaceFixture,
} from '../../kit';

type CreatedMailerRoute = z.infer<typeof createdMailerRouteSchema>;
type InboundAccepted = z.infer<typeof mailerInboundAcceptedSchema>;
type ThreadWithMessages = z.infer<typeof mailerThreadWithMessagesSchema>;
type Reservation = { reservation: z.infer<typeof replyReservationSchema> };
/** A reply's answer: sent (201/200), or refused with a code (and the reservation when one stays). */
type ReplyAnswer = z.infer<typeof replySentSchema> & { error?: string; code?: string; reconciliable?: boolean; reservationId?: string };

let other: WorkspaceFixture;
let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
let drop = false;
let n = 0;
const uniq = () => `${Date.now().toString(36)}${n++}`;
const password = 'smtp-password-0123456789';

const stack = useTestStack(async () => {
  smtp = await startFakeSmtp({ username: 'mailer', password, dropData: () => drop });
  return { config: { outboundAllowPrivateNetworks: true, ...(await filesConfig(loadConfig({}))) }, worker: false };
});
beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other');
});
afterAll(async () => {
  await smtp?.close();
});

async function inboundMessage(token = stack.ws.token, on: AppTarget = stack.app): Promise<{ id: string; threadId: string }> {
  const wf = await client(on, token).workflows.create({});
  await client(on, token).workflows.deploy(wf.body.workflow.id);
  const address = `desk-${uniq()}@example.test`;
  const route = await client(on, token).post<CreatedMailerRoute>(
    '/api/v1/mailer/routes',
    { address, workflowId: wf.body.workflow.id },
    { headers: { 'idempotency-key': `k-${uniq()}` } },
  );
  expect(route.status).toBe(201);
  const res = await client(on, token).post<InboundAccepted>('/api/v1/mailer/inbound', {
    to: address,
    from: 'customer@example.test',
    subject: 'Where is my order?',
    text: 'Order 7',
  });
  expect(res.status).toBe(202);
  return res.body.message;
}
const reply = (
  messageId: string,
  key: string | undefined,
  body: Record<string, unknown> = { text: 'On its way.' },
  token = stack.ws.token,
  to: AppTarget = stack.app,
) =>
  client(to, token).post<ReplyAnswer>(`/api/v1/mailer/messages/${messageId}/reply`, body, {
    headers: key ? { 'idempotency-key': key } : {},
  });

test('without a mail credential: 409 SETUP_REQUIRED; without Idempotency-Key: 400; nothing is sent', async () => {
  const message = await inboundMessage(other.token);
  const before = smtp.messages.length;
  expect((await reply(message.id, undefined, undefined, other.token)).status).toBe(400);
  const res = await reply(message.id, `r-${uniq()}`, undefined, other.token);
  expect(res.status).toBe(409);
  expect(res.body.code).toBe('SETUP_REQUIRED');
  expect(smtp.messages.length).toBe(before);
  // Another workspace's message is not found.
  expect((await reply(message.id, `r-${uniq()}`)).status).toBe(404);
});

describe('with an smtp credential', () => {
  beforeAll(async () => {
    const cred = await stack.api.post<CredentialEnvelope>('/api/v1/credentials', {
      name: 'Outbound mail',
      type: 'smtp',
      value: { host: '127.0.0.1', port: smtp.port, username: 'mailer', password, secure: false, from: 'support@example.test' },
    });
    expect(cred.status).toBe(201);
  });

  test('201 on the first send, 200 deduplicated on replay (sent once); another body with the key is 409; the reply joins the thread', async () => {
    const message = await inboundMessage();
    const key = `r-${uniq()}`;
    const before = smtp.messages.length;
    const first = await reply(message.id, key);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      deduplicated: false,
      reservation: { status: 'sent', reconciliable: false },
      reply: { direction: 'outbound', threadId: message.threadId, to: ['customer@example.test'] },
    });
    expect(smtp.messages.length).toBe(before + 1);
    const sent = smtp.messages[smtp.messages.length - 1];
    expect(sent).toContain('Subject: Re: Where is my order?');
    expect(sent).toContain('On its way.');

    const again = await reply(message.id, key);
    expect(again.status).toBe(200);
    expect(again.body.deduplicated).toBe(true);
    expect(again.body.reply.id).toBe(first.body.reply.id);
    expect(smtp.messages.length).toBe(before + 1);

    expect((await reply(message.id, key, { text: 'Something else' })).status).toBe(409);
    const thread = await stack.api.get<ThreadWithMessages>(`/api/v1/mailer/threads/${message.threadId}`);
    expect(thread.body.messages.map((m) => m.direction)).toEqual(['inbound', 'outbound']);
  });

  test('attachments are ready files of the workspace, sent with the reply; unknown 404 and not-ready 423 reserve nothing', async () => {
    const message = await inboundMessage();
    const file = await uploadFile(stack.app, { token: stack.ws.token }, Buffer.from('invoice body 12345'), {
      name: 'invoice.txt',
      mimeType: 'text/plain',
    });
    const before = smtp.messages.length;
    const missing = await reply(message.id, `r-${uniq()}`, { text: 'See attached.', attachmentFileIds: ['file_missing'] });
    expect(missing.status).toBe(404);
    const pending = await createFile(stack.app, { token: stack.ws.token }, { name: 'later.txt', mimeType: 'text/plain', sizeBytes: 3 });
    const notReady = await reply(message.id, `r-${uniq()}`, { text: 'See attached.', attachmentFileIds: [pending.body.data.file.id] });
    expect(notReady.status).toBe(423);
    const foreign = await uploadFile(stack.app, { token: other.token }, Buffer.from('theirs'), {
      name: 'theirs.txt',
      mimeType: 'text/plain',
    });
    expect((await reply(message.id, `r-${uniq()}`, { text: 'x', attachmentFileIds: [foreign.id] })).status).toBe(404);
    expect(smtp.messages.length).toBe(before);
    const rows = await stack.app.orm.em
      .fork()
      .getConnection()
      .execute('select count(*)::int as n from mailer_reply_reservations where message_id = ?', [message.id]);
    expect(rows[0].n).toBe(0);

    const sent = await reply(message.id, `r-${uniq()}`, { text: 'See attached.', attachmentFileIds: [file.id] });
    expect(sent.status).toBe(201);
    expect(sent.body.reply.attachmentFileIds).toEqual([file.id]);
    const raw = smtp.messages[smtp.messages.length - 1];
    expect(raw).toContain('filename=invoice.txt');
    expect(raw).toContain(Buffer.from('invoice body 12345').toString('base64'));
  });

  test('a connection lost mid-send leaves the reservation reconciliable until an Admin authorizes a retry', async () => {
    const message = await inboundMessage();
    const key = `r-${uniq()}`;
    drop = true;
    const lost = await reply(message.id, key);
    drop = false;
    expect(lost.status).toBe(503);
    expect(lost.body).toMatchObject({ code: 'reply_outcome_unknown', reconciliable: true, reservationId: expect.any(String) });
    const reservationId = lost.body.reservationId;

    const blocked = await reply(message.id, key);
    expect(blocked.status).toBe(409);
    expect(blocked.body).toMatchObject({ code: 'reply_reservation_conflict', reservationId, reconciliable: true });

    const member = await addUserWithKey(stack.app, stack.ws, 'member');
    expect((await stack.as(member.token).get(`/api/v1/mailer/reply-reservations/${reservationId}`)).status).toBe(403);
    expect(
      (await stack.as(member.token).patch(`/api/v1/mailer/reply-reservations/${reservationId}`, { action: 'authorize_retry' })).status,
    ).toBe(403);
    expect((await stack.as(other.token).get(`/api/v1/mailer/reply-reservations/${reservationId}`)).status).toBe(404);
    expect(
      (await stack.as(other.token).patch(`/api/v1/mailer/reply-reservations/${reservationId}`, { action: 'authorize_retry' })).status,
    ).toBe(404);
    expect((await stack.api.patch(`/api/v1/mailer/reply-reservations/${reservationId}`, { action: 'cancel' })).status).toBe(400);

    const read = await stack.api.get<Reservation>(`/api/v1/mailer/reply-reservations/${reservationId}`);
    expect(read.status).toBe(200);
    expect(read.body.reservation).toMatchObject({ status: 'unknown', reconciliable: true, attempts: 1 });

    const authorized = await stack.api.patch<Reservation>(`/api/v1/mailer/reply-reservations/${reservationId}`, {
      action: 'authorize_retry',
    });
    expect(authorized.status).toBe(200);
    expect(authorized.body.reservation.status).toBe('retry_authorized');
    const before = smtp.messages.length;
    const retried = await reply(message.id, key);
    expect(retried.status).toBe(201);
    expect(retried.body.reservation).toMatchObject({ id: reservationId, status: 'sent', attempts: 2 });
    expect(smtp.messages.length).toBe(before + 1);
    expect((await stack.api.patch(`/api/v1/mailer/reply-reservations/${reservationId}`, { action: 'authorize_retry' })).status).toBe(409);
  });

  test('a process that died between the reservation and the send leaves a reconciliable reservation: 409, nothing sent', async () => {
    const message = await inboundMessage();
    const key = `r-${uniq()}`;
    // The row a crashed process leaves: reserved (status sending), provider never called.
    const fingerprint = (await import('../../../services/kernel/ids')).sha256Hex(JSON.stringify(['On its way.', null, []]));
    await stack.app.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into mailer_reply_reservations (id, workspace_id, message_id, idempotency_key, fingerprint, status, attempts, created_at, updated_at) values (?, ?, ?, ?, ?, 'sending', 1, now(), now())`,
        [`mrr_crash_${uniq()}`, stack.ws.workspaceId, message.id, key, fingerprint],
      );
    const before = smtp.messages.length;
    const res = await reply(message.id, key);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'reply_reservation_conflict', reconciliable: true });
    expect(smtp.messages.length).toBe(before);
  });
});

describe('in a deployment whose outbound guard refuses private networks', () => {
  let guardedApp: TestApp;
  let guardedWs: WorkspaceFixture;
  const reservations = async (messageId: string) =>
    (
      await stack.app.orm.em
        .fork()
        .getConnection()
        .execute('select status from mailer_reply_reservations where message_id = ?', [messageId])
    ).map((r) => String(r.status));

  beforeAll(async () => {
    // Same database, guard on (OUTBOUND_ALLOW_PRIVATE_NETWORKS unset): the smtp and API hosts below are loopback.
    guardedApp = await startTestApp(await filesConfig(loadConfig({})));
    guardedWs = await createWorkspace(guardedApp, 'Guarded');
  });
  afterAll(async () => {
    await guardedApp?.close();
  });

  test('a reply to a refused SMTP host is 409 SETUP_REQUIRED, reserves nothing, and the same key sends once the address is allowed', async () => {
    const cred = await client(guardedApp, guardedWs.token).post<CredentialEnvelope>('/api/v1/credentials', {
      name: 'Loopback mail',
      type: 'smtp',
      value: { host: '127.0.0.1', port: smtp.port, username: 'mailer', password, secure: false, from: 'support@example.test' },
    });
    expect(cred.status).toBe(201);
    const message = await inboundMessage(guardedWs.token, guardedApp);
    const key = `r-${uniq()}`;
    const before = smtp.messages.length;
    for (let i = 0; i < 3; i++) {
      const refused = await reply(message.id, key, undefined, guardedWs.token, guardedApp);
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        error: expect.stringMatching(
          /^The SMTP host "127\.0\.0\.1" of the mail credential is refused by the outbound guard, so nothing was sent: .*loopback/,
        ),
        code: 'SETUP_REQUIRED',
      });
    }
    expect(smtp.messages.length).toBe(before);
    expect(await reservations(message.id)).toEqual([]);

    // The same request where the address is allowed (another deployment on the same data): not blocked by a stale reservation.
    const sent = await reply(message.id, key, undefined, guardedWs.token, stack.app);
    expect(sent.status).toBe(201);
    expect(sent.body.reservation).toMatchObject({ status: 'sent', attempts: 1 });
    expect(smtp.messages.length).toBe(before + 1);
  });

  test('a reply through a mail API credential whose base URL is refused is 409 SETUP_REQUIRED and reserves nothing', async () => {
    const ws2 = await createWorkspace(guardedApp, 'Guarded API');
    const cred = await client(guardedApp, ws2.token).post<CredentialEnvelope>('/api/v1/credentials', {
      name: 'Loopback Graph',
      type: 'mailB',
      value: { token: 'graph-token-0123456789', baseUrl: `http://127.0.0.1:${smtp.port}/v1.0` },
    });
    expect(cred.status).toBe(201);
    const message = await inboundMessage(ws2.token, guardedApp);
    const refused = await reply(message.id, `r-${uniq()}`, undefined, ws2.token, guardedApp);
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: expect.stringMatching(
        /^The mail API address http:\/\/127\.0\.0\.1:\d+\/v1\.0 is refused by the outbound guard, so nothing was sent: .*loopback/,
      ),
      code: 'SETUP_REQUIRED',
    });
    expect(await reservations(message.id)).toEqual([]);
  });
});
