import type { EntityManager } from '@mikro-orm/postgresql';
import { toStorable } from '../kernel/storableText';
import { lazyModule } from '../kernel/lazyModule';
import type { AddressObject } from 'mailparser';
import { conflict, invalidInput, notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { WorkspacePrincipal } from '../kernel/principal';
import { decodeCursor, nextCursorOf } from '../kernel/pagination';
import { outboxRunId } from '../webhooks/inbound';
import { sql, type MailerRouteRow } from './routes';
import type { InboundAttachment } from './attachments';

export const MESSAGE_NOT_FOUND = 'Mailer message not found';
export const THREAD_NOT_FOUND = 'Mailer thread not found';
/** A thread is shown with at most this many messages. */
export const THREAD_MESSAGE_LIMIT = 100;

/** An inbound message as the endpoints (or a raw MIME source) describe it. */
export interface InboundMail {
  from: string;
  to: string[];
  subject: string;
  text: string | null;
  html: string | null;
  externalMessageId: string | null;
  externalThreadId: string | null;
  /** RFC 5322 Message-ID, In-Reply-To and References (threading). */
  messageIdHeader: string | null;
  inReplyTo: string | null;
  references: string[];
  providerMetadata: Record<string, unknown>;
}

interface MessageRow {
  id: string;
  workspace_id: string;
  route_id: string;
  thread_id: string;
  external_message_id: string | null;
  message_id_header: string | null;
  direction: 'inbound' | 'outbound';
  from_address: string;
  to_addresses: string[];
  subject: string;
  text: string | null;
  html: string | null;
  attachment_file_ids: string[];
  provider_metadata: Record<string, unknown>;
  outbox_id: string | null;
  created_at: Date;
}

interface ThreadRow {
  id: string;
  route_id: string;
  external_thread_id: string | null;
  subject: string;
  message_count: number;
  last_message_at: Date;
  created_at: Date;
}

/** mailparser and sanitize-html, loaded with the first message (services/kernel/lazyModule.ts). */
const loadMailParser = lazyModule(() => import('mailparser'));
const loadSanitizeHtml = lazyModule(async () => (await import('sanitize-html')).default);

/** Stored HTML: no scripts, styles or event handlers; images only from `cid:` and `data:` (no remote images). */
export async function sanitizeMailHtml(html: string): Promise<string> {
  const sanitizeHtml = await loadSanitizeHtml();
  return sanitizeHtml(html, {
    allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img'],
    allowedAttributes: { ...sanitizeHtml.defaults.allowedAttributes, img: ['src', 'alt', 'width', 'height'] },
    allowedSchemesByTag: { img: ['cid', 'data'] },
  });
}

/** Subject without reply/forward prefixes, case and runs of spaces. */
export function normalizeSubject(subject: string): string {
  return subject
    .replace(/^\s*((re|fw|fwd|aw|wg)\s*(\[\d+\])?\s*:\s*)+/i, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

function bareAddress(value: string): string {
  const match = /<([^>]+)>/.exec(value);
  return (match?.[1] ?? value).trim().toLowerCase();
}

export function participantsKey(from: string, to: string[]): string {
  return [...new Set([from, ...to].map(bareAddress).filter(Boolean))].sort().join(',');
}

function addressesOf(value: AddressObject | AddressObject[] | undefined): string[] {
  const list = Array.isArray(value) ? value : value ? [value] : [];
  return list.flatMap((a) => a.value.map((v) => v.address ?? '')).filter(Boolean);
}

/** Fills a message from raw MIME (mailparser); fields given explicitly win. Attachments come back with their content. */
export async function withRawMime(
  mail: InboundMail,
  raw: string | Buffer,
): Promise<{ mail: InboundMail; attachments: InboundAttachment[] }> {
  const parsed = await (await loadMailParser()).simpleParser(raw, { skipImageLinks: true });
  const refs = Array.isArray(parsed.references) ? parsed.references : parsed.references ? [parsed.references] : [];
  const attachments = parsed.attachments.map((a) => ({ filename: a.filename ?? null, contentType: a.contentType, content: a.content }));
  return {
    mail: {
      ...mail,
      from: mail.from || addressesOf(parsed.from)[0] || '',
      to: mail.to.length > 0 ? mail.to : [...addressesOf(parsed.to), ...addressesOf(parsed.cc)],
      subject: mail.subject || parsed.subject || '',
      text: mail.text ?? parsed.text ?? null,
      html: mail.html ?? (typeof parsed.html === 'string' ? parsed.html : null),
      messageIdHeader: mail.messageIdHeader ?? parsed.messageId ?? null,
      inReplyTo: mail.inReplyTo ?? parsed.inReplyTo ?? null,
      references: mail.references.length > 0 ? mail.references : refs,
      providerMetadata: {
        ...mail.providerMetadata,
        mime: { attachments: attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, size: a.content.length })) },
      },
    },
    attachments,
  };
}

/**
 * The thread of a new message: by `externalThreadId`, else by a stored message its
 * In-Reply-To/References name, else by normalized subject and participants; else a new one.
 * Runs inside the caller's transaction, serialised per route.
 */
async function threadFor(tx: EntityManager, route: MailerRouteRow, mail: InboundMail, now: Date): Promise<string> {
  if (mail.externalThreadId) {
    const [t] = await sql<{ id: string }>(tx, `select id from mailer_threads where route_id = ? and external_thread_id = ?`, [
      route.id,
      mail.externalThreadId,
    ]);
    if (t) return t.id;
  } else {
    const ids = [...(mail.inReplyTo ? [mail.inReplyTo] : []), ...mail.references].slice(0, 100);
    if (ids.length > 0) {
      const [m] = await sql<{ thread_id: string }>(
        tx,
        `select thread_id from mailer_messages where workspace_id = ? and route_id = ? and message_id_header in (${ids.map(() => '?').join(', ')}) order by created_at desc limit 1`,
        [route.workspace_id, route.id, ...ids],
      );
      if (m) return m.thread_id;
    }
    const [t] = await sql<{ id: string }>(
      tx,
      `select id from mailer_threads where route_id = ? and external_thread_id is null and subject_key = ? and participants_key = ? order by created_at desc limit 1`,
      [route.id, normalizeSubject(mail.subject), participantsKey(mail.from, mail.to)],
    );
    if (t) return t.id;
  }
  const id = newId('mth');
  await sql(
    tx,
    `insert into mailer_threads (id, workspace_id, route_id, external_thread_id, subject, subject_key, participants_key, message_count, last_message_at, created_at) values (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
    [
      id,
      route.workspace_id,
      route.id,
      mail.externalThreadId,
      mail.subject,
      normalizeSubject(mail.subject),
      participantsKey(mail.from, mail.to),
      now,
      now,
    ],
  );
  return id;
}

async function insertMessage(
  tx: EntityManager,
  route: MailerRouteRow,
  mail: InboundMail,
  opts: { direction: 'inbound' | 'outbound'; threadId?: string; outboxId?: string | null; attachmentFileIds?: string[] },
): Promise<MessageRow> {
  const now = new Date();
  const html = mail.html === null ? null : await sanitizeMailHtml(mail.html);
  // Two messages of one conversation must not both create its thread: serialize per conversation key, not per route.
  const conversation = mail.externalThreadId
    ? `x:${mail.externalThreadId}`
    : `s:${normalizeSubject(mail.subject)}|${participantsKey(mail.from, mail.to)}`;
  await sql(tx, `select pg_advisory_xact_lock(hashtext(?))`, [`mailer:${route.id}:${conversation}`]);
  const threadId = opts.threadId ?? (await threadFor(tx, route, mail, now));
  const [row] = await sql<MessageRow>(
    tx,
    `insert into mailer_messages (id, workspace_id, route_id, thread_id, external_message_id, message_id_header, direction, from_address, to_addresses, subject, text, html, attachment_file_ids, provider_metadata, outbox_id, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?) returning *`,
    [
      newId('mmsg'),
      route.workspace_id,
      route.id,
      threadId,
      mail.externalMessageId,
      mail.messageIdHeader,
      opts.direction,
      mail.from,
      JSON.stringify(toStorable(mail.to)),
      mail.subject,
      mail.text,
      html,
      JSON.stringify(opts.attachmentFileIds ?? []),
      JSON.stringify(
        toStorable({
          ...mail.providerMetadata,
          ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
          ...(mail.references.length ? { references: mail.references } : {}),
        }),
      ),
      opts.outboxId ?? null,
      now,
    ],
  );
  if (!row) throw new Error('insert into mailer_messages returned no row');
  await sql(tx, `update mailer_threads set message_count = message_count + 1, last_message_at = ? where id = ?`, [now, threadId]);
  return row;
}

export interface AcceptedMail {
  message: MessageView;
  outbox: { id: string; status: 'pending' };
  deduplicated: boolean;
}

/**
 * Stores an inbound message and its outbox entry in one transaction (durable before the 202);
 * the outbox dispatcher starts the route's workflow with trigger `email`. A message whose
 * `externalMessageId` this route already holds is a replay: `onReplay` decides (409 for the
 * signed endpoint, the first message `deduplicated` for the generic one).
 */
export async function acceptInboundMail(
  em: EntityManager,
  route: MailerRouteRow,
  mail: InboundMail,
  onReplay: 'conflict' | 'deduplicate',
  /** Stores the message's attachments as Files (after the replay check, before the message); returns their ids. */
  storeFiles?: () => Promise<string[]>,
): Promise<AcceptedMail> {
  const replay = async (): Promise<AcceptedMail> => {
    if (onReplay === 'conflict') throw conflict('This message was already received.', { code: 'mailer_message_replayed' });
    const [first] = await sql<MessageRow>(em, `select * from mailer_messages where route_id = ? and external_message_id = ?`, [
      route.id,
      mail.externalMessageId,
    ]);
    if (!first) throw notFound(MESSAGE_NOT_FOUND); // deleted since it was seen
    return { message: messageView(first), outbox: { id: first.outbox_id ?? '', status: 'pending' }, deduplicated: true };
  };
  if (mail.externalMessageId) {
    const [seen] = await sql(em, `select id from mailer_messages where route_id = ? and external_message_id = ?`, [
      route.id,
      mail.externalMessageId,
    ]);
    if (seen) return replay();
  }
  const attachmentFileIds = storeFiles ? await storeFiles() : [];
  try {
    return await em.transactional(async (tx) => {
      const outboxId = newId('whe');
      const message = await insertMessage(tx, route, mail, { direction: 'inbound', outboxId, attachmentFileIds });
      const payload = {
        email: {
          messageId: message.id,
          threadId: message.thread_id,
          routeId: route.id,
          from: message.from_address,
          to: message.to_addresses,
          subject: message.subject,
          text: message.text,
          html: message.html,
          externalMessageId: message.external_message_id,
          attachmentFileIds: message.attachment_file_ids,
        },
      };
      await sql(
        tx,
        `insert into webhook_outbox (id, workspace_id, webhook_id, workflow_id, payload, dedupe_key, status, run_id, attempts, created_at)
         values (?, ?, ?, ?, ?::jsonb, ?, 'pending', ?, 0, now())`,
        [
          outboxId,
          route.workspace_id,
          route.webhook_id,
          route.workflow_id,
          JSON.stringify(toStorable(payload)),
          `mail:${message.id}`,
          outboxRunId(outboxId),
        ],
      );
      return { message: messageView(message), outbox: { id: outboxId, status: 'pending' as const }, deduplicated: false };
    });
  } catch (err) {
    // A concurrent delivery of the same message id won the unique index: the in-progress case.
    if ((err as { code?: string }).code === '23505' && mail.externalMessageId) return replay();
    throw err;
  }
}

export interface MessageView {
  id: string;
  threadId: string;
  routeId: string;
  direction: 'inbound' | 'outbound';
  externalMessageId: string | null;
  from: string;
  to: string[];
  subject: string;
  text: string | null;
  html: string | null;
  attachmentFileIds: string[];
  providerMetadata: Record<string, unknown>;
  createdAt: string;
}

function messageView(row: MessageRow): MessageView {
  return {
    id: row.id,
    threadId: row.thread_id,
    routeId: row.route_id,
    direction: row.direction,
    externalMessageId: row.external_message_id,
    from: row.from_address,
    to: row.to_addresses,
    subject: row.subject,
    text: row.text,
    html: row.html,
    attachmentFileIds: row.attachment_file_ids,
    providerMetadata: row.provider_metadata,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

export interface ThreadView {
  id: string;
  routeId: string;
  externalThreadId: string | null;
  subject: string;
  messageCount: number;
  lastMessageAt: string;
  createdAt: string;
}

function threadView(row: ThreadRow): ThreadView {
  return {
    id: row.id,
    routeId: row.route_id,
    externalThreadId: row.external_thread_id,
    subject: row.subject,
    messageCount: row.message_count,
    lastMessageAt: new Date(row.last_message_at).toISOString(),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

const withPositions = <T extends { created_at: Date; id: string }>(rows: T[]) =>
  rows.map((r) => ({ ...r, createdAt: new Date(r.created_at) }));

export async function listThreads(em: EntityManager, principal: WorkspacePrincipal, opts: { cursor?: string; limit: number }) {
  const after = opts.cursor ? decodeCursor(opts.cursor, 'invalid_cursor') : null;
  const rows = await sql<ThreadRow>(
    em,
    `select * from mailer_threads where workspace_id = ? ${after ? 'and (created_at, id) < (?, ?)' : ''} order by created_at desc, id desc limit ?`,
    [principal.workspaceId, ...(after ? [after.createdAt, after.id] : []), opts.limit + 1],
  );
  const { page, nextCursor } = nextCursorOf(withPositions(rows), opts.limit);
  return { threads: page.map(threadView), nextCursor };
}

export async function getThread(em: EntityManager, principal: WorkspacePrincipal, id: string) {
  const [row] = await sql<ThreadRow>(em, `select * from mailer_threads where id = ? and workspace_id = ?`, [id, principal.workspaceId]);
  if (!row) throw notFound(THREAD_NOT_FOUND);
  const messages = await sql<MessageRow>(em, `select * from mailer_messages where thread_id = ? order by created_at asc, id asc limit ?`, [
    id,
    THREAD_MESSAGE_LIMIT,
  ]);
  return { thread: threadView(row), messages: messages.map(messageView) };
}

export async function listMessages(
  em: EntityManager,
  principal: WorkspacePrincipal,
  opts: { threadId?: string; cursor?: string; limit: number },
) {
  const after = opts.cursor ? decodeCursor(opts.cursor, 'invalid_cursor') : null;
  const rows = await sql<MessageRow>(
    em,
    `select * from mailer_messages where workspace_id = ? ${opts.threadId ? 'and thread_id = ?' : ''} ${after ? 'and (created_at, id) < (?, ?)' : ''} order by created_at desc, id desc limit ?`,
    [principal.workspaceId, ...(opts.threadId ? [opts.threadId] : []), ...(after ? [after.createdAt, after.id] : []), opts.limit + 1],
  );
  const { page, nextCursor } = nextCursorOf(withPositions(rows), opts.limit);
  return { messages: page.map(messageView), nextCursor };
}

export async function loadMessage(em: EntityManager, principal: WorkspacePrincipal, id: string): Promise<MessageRow> {
  const [row] = await sql<MessageRow>(em, `select * from mailer_messages where id = ? and workspace_id = ?`, [id, principal.workspaceId]);
  if (!row) throw notFound(MESSAGE_NOT_FOUND);
  return row;
}

export { insertMessage, messageView, type MessageRow };

export function requireBodyField(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalidInput(`${name} is required.`);
  return value;
}
