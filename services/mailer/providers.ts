/**
 * The mail providers the mailer polls and sends through, each at a configurable base URL:
 * the Gmail API (`mailA` credentials; users.history.list + users.messages.get format=raw,
 * users.messages.send), Microsoft Graph (`mailB`; messages delta queries + `$value`, sendMail)
 * and IMAP (`imap` credentials, with imapflow). Every HTTP call goes through the outbound guard.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ImapFlow } from 'imapflow';
import MailComposer from 'nodemailer/lib/mail-composer';
import { CredentialSchema, MailerGoogleDwdConfigSchema, type Credential } from '../../db/entities';
import type { MailerConfig } from '../config';
import { openCredential } from '../credentials/crud';
import { credentialKeyring, type CredentialKeySettings } from '../credentials/keys';
import type { CredentialValue } from '../credentials/types';
import { httpRequest, resolveGuardedHost, type HttpResponseOutput } from '../outbound';

export interface MailProviderDeps {
  keys: CredentialKeySettings;
  mailer: MailerConfig;
  allowPrivateNetworks: boolean;
}

/** A mailbox the mailer can read or send as. */
export type MailAccount =
  | { kind: 'gmail'; credentialId: string; baseUrl: string; token: string; /** `me`, or the delegated subject */ user: string }
  | { kind: 'graph'; credentialId: string; baseUrl: string; token: string; user: string }
  | { kind: 'imap'; credentialId: string; value: CredentialValue };

export class MailAccountError extends Error {}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/** The account of a workspace credential (`mailA`, `mailB` or `imap`), as the mailbox owner (`me`) or a delegated subject. */
export function accountOf(deps: MailProviderDeps, row: Credential, subject?: string): MailAccount {
  const ring = credentialKeyring(deps.keys);
  if (!ring) throw new MailAccountError('Credentials are unavailable: neither CREDENTIALS_KEY nor SECRET_KEY is configured.');
  let value: CredentialValue;
  try {
    value = openCredential(ring, row);
  } catch {
    throw new MailAccountError('The mail credential cannot be decrypted.');
  }
  const own = typeof value.baseUrl === 'string' ? value.baseUrl : undefined;
  if (row.type === 'mailA') return { kind: 'gmail', credentialId: row.id, baseUrl: trimSlash(own ?? deps.mailer.gmailBaseUrl), token: String(value.token), user: subject ?? 'me' };
  if (row.type === 'mailB') return { kind: 'graph', credentialId: row.id, baseUrl: trimSlash(own ?? deps.mailer.graphBaseUrl), token: String(value.token), user: subject ?? 'me' };
  if (row.type === 'imap') return { kind: 'imap', credentialId: row.id, value };
  throw new MailAccountError(`A ${row.type} credential cannot read or send mail.`);
}

/** The account of a route's domain-wide delegation configuration (Gmail as its subject). */
export async function delegatedAccount(em: EntityManager, deps: MailProviderDeps, workspaceId: string, configId: string): Promise<{ account: MailAccount; routeId: string }> {
  const config = await em.findOne(MailerGoogleDwdConfigSchema, { id: configId, workspaceId });
  if (!config) throw new MailAccountError('The delegation configuration no longer exists.');
  const row = await em.findOne(CredentialSchema, { id: config.credentialId, workspaceId });
  if (!row) throw new MailAccountError('The delegation configuration names a credential that no longer exists.');
  return { account: accountOf(deps, row, config.subject), routeId: config.routeId };
}

const userPath = (account: { kind: 'gmail' | 'graph'; user: string }) =>
  account.kind === 'gmail' ? `users/${encodeURIComponent(account.user)}` : account.user === 'me' ? 'me' : `users/${encodeURIComponent(account.user)}`;

async function call(
  deps: MailProviderDeps,
  account: { token: string },
  req: { method: string; url: string; query?: Record<string, string | undefined>; body?: unknown },
  bytes = false,
): Promise<HttpResponseOutput> {
  return httpRequest(
    { method: req.method, url: req.url, query: req.query, body: req.body, headers: { authorization: `Bearer ${account.token}`, accept: bytes ? '*/*' : 'application/json' }, timeoutMs: deps.mailer.timeoutMs },
    { allowPrivateNetworks: deps.allowPrivateNetworks, responseType: bytes ? 'bytes' : 'text', maxResponseBytes: 40 * 1024 * 1024 },
  );
}

class ProviderHttpError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number,
    what: string,
  ) {
    super(`${provider} answered HTTP ${status} to ${what}.`);
  }
}

function ok(res: HttpResponseOutput, provider: string, what: string): HttpResponseOutput {
  if (res.status < 200 || res.status >= 300) throw new ProviderHttpError(provider, res.status, what);
  return res;
}

/** One message fetched from a mailbox: its raw MIME and the provider's ids. */
export interface FetchedMail {
  /** Unique per mailbox and stable across polls: `mailA:<id>`, `mailB:<id>`, `imap:<uidvalidity>:<uid>`. */
  externalId: string;
  externalThreadId: string | null;
  raw: Buffer;
  metadata: Record<string, unknown>;
}

/**
 * A poll's plan: the cursor it starts from, the message ids to fetch (in order), and the cursor
 * to store once every one of them is durably stored. A baseline (no cursor yet, or one the
 * provider no longer honours) fetches nothing and records where the mailbox is now.
 */
export interface PollPlan {
  next: string;
  baseline: boolean;
  note?: string;
  pending: Array<{ id: string; threadId: string | null }>;
  /** Fetches one planned message; null when it disappeared meanwhile. */
  fetch(item: { id: string; threadId: string | null }): Promise<FetchedMail | null>;
  close(): Promise<void>;
}

const noop = async () => undefined;

// ---------------------------------------------------------------------------------- Gmail

async function gmailBaseline(deps: MailProviderDeps, account: Extract<MailAccount, { kind: 'gmail' }>): Promise<string> {
  const res = ok(await call(deps, account, { method: 'GET', url: `${account.baseUrl}/${userPath(account)}/profile` }), 'Gmail', 'users.getProfile');
  const historyId = (res.body as { historyId?: unknown })?.historyId;
  if (typeof historyId !== 'string' && typeof historyId !== 'number') throw new Error('Gmail users.getProfile gave no historyId.');
  return String(historyId);
}

async function gmailPlan(deps: MailProviderDeps, account: Extract<MailAccount, { kind: 'gmail' }>, cursor: string | null): Promise<PollPlan> {
  const fetchOne = async (item: { id: string; threadId: string | null }): Promise<FetchedMail | null> => {
    const res = await call(deps, account, { method: 'GET', url: `${account.baseUrl}/${userPath(account)}/messages/${encodeURIComponent(item.id)}`, query: { format: 'raw' } });
    if (res.status === 404) return null;
    const body = ok(res, 'Gmail', 'users.messages.get').body as { id?: string; threadId?: string; raw?: string; labelIds?: string[]; historyId?: string };
    if (typeof body.raw !== 'string') throw new Error('Gmail users.messages.get (format=raw) gave no raw message.');
    const threadId = body.threadId ?? item.threadId;
    return {
      externalId: `mailA:${body.id ?? item.id}`,
      externalThreadId: threadId ? `mailA:${threadId}` : null,
      raw: Buffer.from(body.raw, 'base64url'),
      metadata: { provider: 'mailA', gmailMessageId: body.id ?? item.id, gmailThreadId: threadId, labelIds: body.labelIds ?? [] },
    };
  };
  if (!cursor) return { next: await gmailBaseline(deps, account), baseline: true, pending: [], fetch: fetchOne, close: noop };
  const pending: Array<{ id: string; threadId: string | null }> = [];
  const seen = new Set<string>();
  let next = cursor;
  let pageToken: string | undefined;
  do {
    const res = await call(deps, account, {
      method: 'GET',
      url: `${account.baseUrl}/${userPath(account)}/history`,
      query: { startHistoryId: cursor, historyTypes: 'messageAdded', labelId: 'INBOX', pageToken },
    });
    // 404: the start history id is too old; Gmail asks for a full sync. We restart from now.
    if (res.status === 404) return { next: await gmailBaseline(deps, account), baseline: true, note: 'Gmail history expired; polling restarted from the current mailbox state.', pending: [], fetch: fetchOne, close: noop };
    const body = ok(res, 'Gmail', 'users.history.list').body as {
      history?: Array<{ messagesAdded?: Array<{ message?: { id?: string; threadId?: string; labelIds?: string[] } }> }>;
      nextPageToken?: string;
      historyId?: string | number;
    };
    for (const record of body.history ?? []) {
      for (const added of record.messagesAdded ?? []) {
        const id = added.message?.id;
        if (!id || seen.has(id)) continue;
        const labels = added.message?.labelIds;
        if (labels && (labels.includes('SENT') || labels.includes('DRAFT'))) continue;
        seen.add(id);
        pending.push({ id, threadId: added.message?.threadId ?? null });
      }
    }
    if (body.historyId !== undefined) next = String(body.historyId);
    pageToken = body.nextPageToken || undefined;
  } while (pageToken);
  return { next, baseline: false, pending, fetch: fetchOne, close: noop };
}

// ------------------------------------------------------------------------ Microsoft Graph

async function graphPlan(deps: MailProviderDeps, account: Extract<MailAccount, { kind: 'graph' }>, cursor: string | null): Promise<PollPlan> {
  const origin = new URL(account.baseUrl).origin;
  const fetchOne = async (item: { id: string; threadId: string | null }): Promise<FetchedMail | null> => {
    const res = await call(deps, account, { method: 'GET', url: `${account.baseUrl}/${userPath(account)}/messages/${encodeURIComponent(item.id)}/$value` }, true);
    if (res.status === 404) return null;
    const raw = ok(res, 'Microsoft Graph', 'GET message $value').body;
    return {
      externalId: `mailB:${item.id}`,
      externalThreadId: item.threadId ? `mailB:${item.threadId}` : null,
      raw: Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)),
      metadata: { provider: 'mailB', graphMessageId: item.id, conversationId: item.threadId },
    };
  };
  const pending: Array<{ id: string; threadId: string | null }> = [];
  const seen = new Set<string>();
  let url = cursor ?? `${account.baseUrl}/${userPath(account)}/mailFolders/inbox/messages/delta?$select=id,conversationId`;
  for (let page = 0; page < 1000; page++) {
    // deltaLink and nextLink are the provider's own URLs: they must stay on its origin.
    if (new URL(url).origin !== origin) throw new Error('Microsoft Graph returned a delta link on another origin.');
    const res = await call(deps, account, { method: 'GET', url });
    if (cursor && (res.status === 410 || res.status === 404)) {
      const restarted = await graphPlan(deps, account, null);
      return { ...restarted, note: 'Microsoft Graph delta token expired; polling restarted from the current mailbox state.' };
    }
    const body = ok(res, 'Microsoft Graph', 'messages delta').body as {
      value?: Array<{ id?: string; conversationId?: string; '@removed'?: unknown }>;
      '@odata.nextLink'?: string;
      '@odata.deltaLink'?: string;
    };
    if (cursor) {
      for (const m of body.value ?? []) {
        if (!m.id || m['@removed'] !== undefined || seen.has(m.id)) continue;
        seen.add(m.id);
        pending.push({ id: m.id, threadId: m.conversationId ?? null });
      }
    }
    if (body['@odata.deltaLink']) return { next: body['@odata.deltaLink'], baseline: !cursor, pending, fetch: fetchOne, close: noop };
    if (!body['@odata.nextLink']) throw new Error('Microsoft Graph delta answer has neither @odata.nextLink nor @odata.deltaLink.');
    url = body['@odata.nextLink'];
  }
  throw new Error('Microsoft Graph delta query did not end within 1000 pages.');
}

// ------------------------------------------------------------------------------------ IMAP

/** IMAP messages taken per poll; the cursor advances to the last one taken. */
const IMAP_BATCH = 100;

interface ImapCursor {
  uidValidity: string;
  lastUid: number;
}

async function imapPlan(deps: MailProviderDeps, account: Extract<MailAccount, { kind: 'imap' }>, cursor: string | null): Promise<PollPlan> {
  const v = account.value;
  const host = String(v.host);
  const { address } = await resolveGuardedHost(host, { allowPrivateNetworks: deps.allowPrivateNetworks });
  const client = new ImapFlow({
    host: address,
    servername: host,
    port: Number(v.port),
    secure: Boolean(v.secure),
    auth: { user: String(v.username), pass: String(v.password) },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: deps.mailer.timeoutMs,
    greetingTimeout: deps.mailer.timeoutMs,
    socketTimeout: deps.mailer.timeoutMs,
    tls: { servername: host },
  });
  client.on('error', () => undefined);
  const close = async () => {
    await client.logout().catch(() => client.close());
  };
  try {
    await client.connect();
    const mailbox = await client.mailboxOpen('INBOX', { readOnly: true });
    const uidValidity = String(mailbox.uidValidity);
    const state = parseImapCursor(cursor);
    const fetched = new Map<number, Buffer>();
    const fetchOne = async (item: { id: string }): Promise<FetchedMail | null> => {
      const raw = fetched.get(Number(item.id));
      if (!raw) return null;
      return { externalId: `imap:${uidValidity}:${item.id}`, externalThreadId: null, raw, metadata: { provider: 'imap', uidValidity, uid: Number(item.id) } };
    };
    if (!state || state.uidValidity !== uidValidity) {
      const next = JSON.stringify({ uidValidity, lastUid: Math.max(0, mailbox.uidNext - 1) } satisfies ImapCursor);
      return { next, baseline: true, note: state ? 'The IMAP mailbox UIDVALIDITY changed; polling restarted from the current mailbox state.' : undefined, pending: [], fetch: fetchOne, close };
    }
    if (mailbox.uidNext - 1 > state.lastUid) {
      for await (const msg of client.fetch(`${state.lastUid + 1}:*`, { uid: true, source: true }, { uid: true })) {
        // `n:*` also names the newest message when every uid is below n.
        if (msg.uid > state.lastUid && msg.source) fetched.set(msg.uid, msg.source);
      }
    }
    const uids = [...fetched.keys()].sort((a, b) => a - b).slice(0, IMAP_BATCH);
    const next = JSON.stringify({ uidValidity, lastUid: uids.length > 0 ? uids[uids.length - 1] : state.lastUid } satisfies ImapCursor);
    return { next, baseline: false, pending: uids.map((uid) => ({ id: String(uid), threadId: null })), fetch: fetchOne, close };
  } catch (err) {
    await close();
    throw err;
  }
}

function parseImapCursor(cursor: string | null): ImapCursor | null {
  if (!cursor) return null;
  try {
    const parsed = JSON.parse(cursor) as ImapCursor;
    return typeof parsed.uidValidity === 'string' && Number.isInteger(parsed.lastUid) ? parsed : null;
  } catch {
    return null;
  }
}

/** What to poll next from `cursor` (null: set a baseline). */
export function planPoll(deps: MailProviderDeps, account: MailAccount, cursor: string | null): Promise<PollPlan> {
  if (account.kind === 'gmail') return gmailPlan(deps, account, cursor);
  if (account.kind === 'graph') return graphPlan(deps, account, cursor);
  return imapPlan(deps, account, cursor);
}

// ---------------------------------------------------------------------------------- sending

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text?: string;
  html?: string;
  inReplyTo?: string;
  references?: string[];
  attachments: Array<{ filename: string; contentType: string; content: Buffer }>;
  /** Gmail: the thread the reply joins (without the `mailA:` prefix). */
  gmailThreadId?: string;
}

/** Sends through the Gmail API (raw base64url MIME built by nodemailer's MailComposer) or Graph sendMail. Returns the provider's message id when it gives one. */
export async function sendViaApi(deps: MailProviderDeps, account: Extract<MailAccount, { kind: 'gmail' | 'graph' }>, mail: OutgoingMail): Promise<string | null> {
  if (account.kind === 'gmail') {
    const mime = await new MailComposer({
      from: mail.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      inReplyTo: mail.inReplyTo,
      references: mail.references,
      attachments: mail.attachments,
    })
      .compile()
      .build();
    const res = await call(deps, account, {
      method: 'POST',
      url: `${account.baseUrl}/${userPath(account)}/messages/send`,
      body: { raw: mime.toString('base64url'), ...(mail.gmailThreadId ? { threadId: mail.gmailThreadId } : {}) },
    });
    const body = ok(res, 'Gmail', 'users.messages.send').body as { id?: string };
    return typeof body?.id === 'string' ? body.id : null;
  }
  const message = {
    subject: mail.subject,
    body: mail.html !== undefined ? { contentType: 'HTML', content: mail.html } : { contentType: 'Text', content: mail.text ?? '' },
    toRecipients: [{ emailAddress: { address: mail.to } }],
    attachments: mail.attachments.map((a) => ({ '@odata.type': '#microsoft.graph.fileAttachment', name: a.filename, contentType: a.contentType, contentBytes: a.content.toString('base64') })),
  };
  ok(await call(deps, account, { method: 'POST', url: `${account.baseUrl}/${userPath(account)}/sendMail`, body: { message, saveToSentItems: true } }), 'Microsoft Graph', 'sendMail');
  return null;
}
