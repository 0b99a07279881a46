import type { Readable } from 'node:stream';
import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  CredentialSchema,
  MailerGoogleDwdConfigSchema,
  MailerPollingGroupSchema,
  MailerReplyReservationSchema,
  type MailerReplyReservation,
} from '../../db/entities';
import type { MailerConfig } from '../kernel/config';
import { accountOf, delegatedAccount, MailAccountError, sendViaApi, type MailAccount, type OutgoingMail } from './providers';
import { conflict, notFound, unavailable } from '../kernel/errors';
import { newId, sha256Hex } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { assertOutboundUrlAllowed, OutboundError, resolveGuardedHost } from '../kernel/outbound';
import { credentialKeyring, type CredentialKeySettings } from '../credentials/keys';
import { openCredential } from '../credentials/crud';
import { TokenGrantError } from '../credentials/googleServiceAccount';
import { smtpTransport } from '../credentials/checks';
import { openDownload, type Download } from '../files/files';
import type { BlobStore } from '../kernel/blobs';
import type { CredentialValue } from '../credentials/types';
import { insertMessage, loadMessage, MESSAGE_NOT_FOUND, messageView, type MessageRow, type MessageView } from './messages';
import { ROUTE_NOT_FOUND, sql, type MailerRouteRow } from './routes';

export const RESERVATION_NOT_FOUND = 'Reply reservation not found';

export type ReservationStatus = 'sending' | 'sent' | 'unknown' | 'retry_authorized';

type ReservationRow = MailerReplyReservation;

export interface ReservationView {
  id: string;
  messageId: string;
  status: ReservationStatus;
  reconciliable: boolean;
  provider: string | null;
  attempts: number;
  replyMessageId: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

const isReconciliable = (s: ReservationStatus) => s === 'sending' || s === 'unknown';

function reservationView(row: ReservationRow): ReservationView {
  return {
    id: row.id,
    messageId: row.messageId,
    status: row.status,
    reconciliable: isReconciliable(row.status),
    provider: row.provider,
    attempts: row.attempts,
    replyMessageId: row.replyMessageId,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A reservation as stored now (a fresh context, so no identity map hides a concurrent change). */
const findReservation = (em: EntityManager, where: FilterQuery<ReservationRow>) => em.fork().findOne(MailerReplyReservationSchema, where);

export interface ReplyInput {
  text?: string;
  html?: string;
  attachmentFileIds?: string[];
}

export interface ReplyDeps {
  keys: CredentialKeySettings;
  /** Where attachment files are read (the files area's blob store). */
  blobs: BlobStore;
  allowPrivateNetworks: boolean;
  /** Gmail and Graph base URLs and request timeout. */
  mailer: MailerConfig;
  timeoutMs?: number;
}

export interface ReplyOutcome {
  status: 201 | 200;
  reply: MessageView;
  reservation: ReservationView;
  deduplicated: boolean;
}

const reservationConflict = (row: ReservationRow) =>
  conflict('A reply with this Idempotency-Key was reserved but its outcome is unknown; an Admin must authorize a retry.', {
    code: 'reply_reservation_conflict',
    details: { reservationId: row.id, reconciliable: isReconciliable(row.status) },
  });

interface ReplySender {
  credential: { id: string; type: string };
  /** The mailbox address the provider sends as, when known. */
  from: string | null;
  send(mail: OutgoingMail): Promise<string | null>;
}

/**
 * The outbound guard's verdict on where a reply would go, checked before anything is reserved:
 * a refused address (loopback, private, metadata…) is a setup problem of the credential (409
 * SETUP_REQUIRED) and an unresolvable host a dependency that is down (503); either way nothing
 * was sent, so no reservation may say its outcome is unknown.
 */
async function guarded<T>(what: string, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (!(err instanceof OutboundError)) throw err;
    if (err.code === 'refused')
      throw conflict(`${what} is refused by the outbound guard, so nothing was sent: ${err.message}`, { code: 'SETUP_REQUIRED' });
    throw unavailable(`${what} could not be reached, so nothing was sent: ${err.message}`, { code: 'mail_server_unreachable' });
  }
}

/**
 * Who sends a reply, by the route's provider: a message a polling group fetched is answered
 * through that group's mailbox (Gmail API for mailA, Graph for mailB, the delegated subject for
 * a delegation group; an IMAP group's through SMTP); otherwise a route bound to domain-wide
 * delegation sends through Gmail as its subject; otherwise the workspace's newest smtp
 * credential, else its newest mailA or mailB credential. None: 409 SETUP_REQUIRED.
 */
async function replySender(
  em: EntityManager,
  deps: ReplyDeps,
  original: MessageRow,
  route: MailerRouteRow | undefined,
): Promise<ReplySender> {
  const providerDeps = { keys: deps.keys, mailer: deps.mailer, allowPrivateNetworks: deps.allowPrivateNetworks };
  // The token is fetched before anything is reserved: a refused delegation (a bad key, a subject
  // the service account may not act as) is a setup problem, and no mail was sent.
  const api = async (account: MailAccount, type: string): Promise<ReplySender> => {
    if (account.kind === 'imap') throw new MailAccountError('IMAP cannot send.');
    await guarded(`The mail API address ${account.baseUrl}`, () =>
      assertOutboundUrlAllowed(account.baseUrl, { allowPrivateNetworks: deps.allowPrivateNetworks }),
    );
    try {
      await guarded('The token endpoint of the mail credential', () => account.auth.token());
    } catch (err) {
      if (err instanceof TokenGrantError) throw new MailAccountError(err.message);
      throw err;
    }
    return {
      credential: { id: account.credentialId, type },
      from: account.user === 'me' ? null : account.user,
      send: (mail) => sendViaApi(providerDeps, account, mail),
    };
  };
  const asSetup = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof MailAccountError) throw conflict(err.message, { code: 'SETUP_REQUIRED' });
      throw err;
    }
  };
  return asSetup(async () => {
    const groupId = original.provider_metadata.pollingGroupId;
    const group =
      typeof groupId === 'string' ? await em.findOne(MailerPollingGroupSchema, { id: groupId, workspaceId: original.workspace_id }) : null;
    if (group?.googleDwdConfigId)
      return api((await delegatedAccount(em, providerDeps, group.workspaceId, group.googleDwdConfigId)).account, 'mailA');
    const groupCredential = group?.credentialId
      ? await em.findOne(CredentialSchema, { id: group.credentialId, workspaceId: original.workspace_id })
      : null;
    if (groupCredential && (groupCredential.type === 'mailA' || groupCredential.type === 'mailB'))
      return api(accountOf(em, providerDeps, groupCredential), groupCredential.type);
    const dwd = route ? await em.findOne(MailerGoogleDwdConfigSchema, { routeId: route.id, workspaceId: original.workspace_id }) : null;
    if (dwd) return api((await delegatedAccount(em, providerDeps, dwd.workspaceId, dwd.id)).account, 'mailA');
    const order = ['smtp', 'mailA', 'mailB'];
    const candidates = await em.find(
      CredentialSchema,
      { workspaceId: original.workspace_id, type: { $in: order } },
      { orderBy: { createdAt: 'desc' } },
    );
    const credential = candidates.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type))[0];
    if (!credential)
      throw conflict('No mail credential is configured: add an smtp, mailA or mailB credential to send replies.', {
        code: 'SETUP_REQUIRED',
      });
    if (credential.type !== 'smtp') return api(accountOf(em, providerDeps, credential), credential.type);
    const ring = credentialKeyring(deps.keys);
    if (!ring)
      throw conflict('Credentials are unavailable: neither CREDENTIALS_KEY nor SECRET_KEY is configured.', { code: 'SETUP_REQUIRED' });
    let value: CredentialValue;
    try {
      value = openCredential(ring, credential);
    } catch {
      throw conflict('The mail credential cannot be decrypted.', { code: 'SETUP_REQUIRED' });
    }
    // Resolved once, here, and connected to as resolved: the send cannot meet a refusal of its own.
    const { address } = await guarded(`The SMTP host "${String(value.host).slice(0, 200)}" of the mail credential`, () =>
      resolveGuardedHost(String(value.host), { allowPrivateNetworks: deps.allowPrivateNetworks }),
    );
    return {
      credential,
      from: typeof value.from === 'string' && value.from ? value.from : null,
      send: (mail) => sendSmtp(value, address, deps, mail),
    };
  });
}

async function buffer(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

/**
 * Sends a reply exactly once per (message, Idempotency-Key), or reports it unknown. The
 * reservation row is committed before the provider is called; a crash or failure mid-send
 * leaves it `sending`/`unknown` (reconciliable), and every new attempt with that key is a 409
 * until an Admin authorizes a retry. A sent reservation answers 200 `deduplicated`. Whatever
 * can fail without sending (the sender's credential, the outbound guard on its host, attachment
 * files) is checked before the reservation, so such a failure leaves no reservation behind.
 */
export async function sendReply(
  em: EntityManager,
  deps: ReplyDeps,
  principal: WorkspacePrincipal,
  messageId: string,
  key: string,
  input: ReplyInput,
): Promise<ReplyOutcome> {
  const original = await loadMessage(em, principal, messageId);
  const fingerprint = sha256Hex(JSON.stringify([input.text ?? null, input.html ?? null, input.attachmentFileIds ?? []]));
  const existing = await findReservation(em, { messageId: original.id, idempotencyKey: key });
  if (existing) {
    if (existing.fingerprint !== fingerprint)
      throw conflict('Idempotency-Key was already used with a different body.', { code: 'idempotency_replay_mismatch' });
    if (existing.status === 'sent') return sentOutcome(em, existing, 200, true);
    if (existing.status !== 'retry_authorized') throw reservationConflict(existing);
  }
  const [route] = await sql<MailerRouteRow>(em, `select * from mailer_routes where id = ?`, [original.route_id]);
  const sender = await replySender(em, deps, original, route);
  const { credential } = sender;
  // Attachments are ready files of the workspace (404 unknown, 423 not ready), checked before anything is reserved.
  const attachments: Download[] = [];
  for (const fileId of [...new Set(input.attachmentFileIds ?? [])]) attachments.push(await openDownload(em, deps.blobs, principal, fileId));
  // Read now, so a file that fails to read fails the request before a reservation says "sending".
  const files = await Promise.all(
    attachments.map(async (a) => ({ filename: a.file.name, contentType: a.file.mimeType, content: await buffer(await a.open(null)) })),
  );

  // Reserve (committed on its own, before the provider call) or take over an authorized retry.
  let reservationId: string | undefined;
  if (existing) {
    // Only one attempt takes over an authorized retry: the update matches while the status is still retry_authorized.
    const taken = await em.nativeUpdate(
      MailerReplyReservationSchema,
      { id: existing.id, status: 'retry_authorized' },
      { status: 'sending', attempts: existing.attempts + 1, credentialId: credential.id, provider: credential.type, updatedAt: new Date() },
    );
    if (taken === 1) reservationId = existing.id;
  } else {
    const [inserted] = await sql<{ id: string }>(
      em,
      `insert into mailer_reply_reservations (id, workspace_id, message_id, idempotency_key, fingerprint, status, credential_id, provider, attempts, created_at, updated_at)
       values (?, ?, ?, ?, ?, 'sending', ?, ?, 1, now(), now()) on conflict (message_id, idempotency_key) do nothing returning id`,
      [newId('mrr'), principal.workspaceId, original.id, key, fingerprint, credential.id, credential.type],
    );
    reservationId = inserted?.id;
  }
  if (!reservationId) {
    // A concurrent request with the same key reserved first.
    const other = (await findReservation(em, { messageId: original.id, idempotencyKey: key }))!;
    if (other.status === 'sent') return sentOutcome(em, other, 200, true);
    throw reservationConflict(other);
  }
  const reservation = { id: reservationId };

  const from = sender.from ?? route?.address ?? '';
  const subject = /^re:/i.test(original.subject) ? original.subject : `Re: ${original.subject}`;
  let providerMessageId: string | null;
  try {
    providerMessageId = await sender.send({
      from,
      to: original.from_address,
      subject,
      text: input.text,
      html: input.html,
      inReplyTo: original.message_id_header ?? undefined,
      references: original.message_id_header ? [original.message_id_header] : undefined,
      attachments: files,
      gmailThreadId: typeof original.provider_metadata.gmailThreadId === 'string' ? original.provider_metadata.gmailThreadId : undefined,
    });
  } catch (err) {
    const message = (err as Error).message.slice(0, 1000);
    await em.nativeUpdate(
      MailerReplyReservationSchema,
      { id: reservation.id },
      { status: 'unknown', lastError: message, updatedAt: new Date() },
    );
    throw unavailable('The mail provider did not confirm the reply; its outcome is unknown.', {
      code: 'reply_outcome_unknown',
      details: { reservationId: reservation.id, reconciliable: true },
    });
  }
  const reply = await em.transactional(async (tx) => {
    if (!route) throw notFound(ROUTE_NOT_FOUND); // deleted while the reply was sent
    const row = await insertMessage(
      tx,
      route,
      {
        from,
        to: [original.from_address],
        subject,
        text: input.text ?? null,
        html: input.html ?? null,
        externalMessageId: null,
        externalThreadId: null,
        messageIdHeader: providerMessageId,
        inReplyTo: original.message_id_header,
        references: [],
        providerMetadata: { provider: credential.type, reservationId: reservation.id },
      },
      { direction: 'outbound', threadId: original.thread_id, attachmentFileIds: input.attachmentFileIds ?? [] },
    );
    await tx.nativeUpdate(
      MailerReplyReservationSchema,
      { id: reservation.id },
      { status: 'sent', replyMessageId: row.id, providerMessageId, lastError: null, updatedAt: new Date() },
    );
    return row;
  });
  const sent = (await findReservation(em, { id: reservation.id }))!;
  return { status: 201, reply: messageView(reply), reservation: reservationView(sent), deduplicated: false };
}

async function sentOutcome(em: EntityManager, row: ReservationRow, status: 200 | 201, deduplicated: boolean): Promise<ReplyOutcome> {
  const [reply] = await sql<MessageRow>(em, `select * from mailer_messages where id = ?`, [row.replyMessageId]);
  if (!reply) throw notFound(MESSAGE_NOT_FOUND);
  return { status, reply: messageView(reply), reservation: reservationView(row), deduplicated };
}

async function sendSmtp(value: CredentialValue, address: string, deps: ReplyDeps, outgoing: OutgoingMail): Promise<string | null> {
  const { gmailThreadId: _thread, ...mail } = outgoing;
  const transport = await smtpTransport(value, address, deps.timeoutMs ?? 15_000);
  try {
    const info = await transport.sendMail(mail);
    return info.messageId ?? null;
  } finally {
    transport.close();
  }
}

export async function getReservation(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<ReservationView> {
  const row = await findReservation(em, { id, workspaceId: principal.workspaceId });
  if (!row) throw notFound(RESERVATION_NOT_FOUND);
  return reservationView(row);
}

/** `authorize_retry`: a reconciliable reservation may be attempted once more with the same key. */
export async function authorizeRetry(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<ReservationView> {
  const current = await getReservation(em, principal, id);
  const changed = await em.nativeUpdate(
    MailerReplyReservationSchema,
    { id, workspaceId: principal.workspaceId, status: { $in: ['sending', 'unknown'] } },
    { status: 'retry_authorized', updatedAt: new Date() },
  );
  if (changed !== 1)
    throw conflict(`Only a reconciliable reservation can be retried; this one is ${current.status}.`, {
      code: 'reply_reservation_not_reconciliable',
    });
  return getReservation(em, principal, id);
}
