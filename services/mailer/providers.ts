/**
 * The mail providers the mailer polls and sends through, each at a configurable base URL:
 * the Gmail API (`mailA` credentials; users.history.list + users.messages.get format=raw,
 * users.messages.send), Microsoft Graph (`mailB`; messages delta queries + `$value`, sendMail)
 * and IMAP (`imap` credentials, with imapflow). Every HTTP call goes through the outbound guard.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { CredentialSchema, MailerGoogleDwdConfigSchema, type Credential } from '../../db/entities';
import type { MailerConfig } from '../kernel/config';
import { openCredential } from '../credentials/crud';
import { delegatedAccessToken, serviceAccountKeySchema, type DelegatedTokenRequest } from '../credentials/googleServiceAccount';
import { refreshOAuth2 } from '../credentials/http';
import { credentialKeyring, type CredentialKeySettings } from '../credentials/keys';
import { storeRefreshedValue } from '../credentials/testing';
import { oauthScopesOf, type CredentialValue } from '../credentials/types';
import type { Keyring } from '../kernel/secrets';
import { httpRequest, resolveGuardedHost, type HttpResponseOutput } from '../kernel/outbound';
import { lazyModule } from '../kernel/lazyModule';

/** imapflow and nodemailer's MailComposer, loaded with the first poll or send that needs them (services/kernel/lazyModule.ts). */
const loadImapFlow = lazyModule(() => import('imapflow'));
const loadMailComposer = lazyModule(async () => (await import('nodemailer/lib/mail-composer')).default);

export interface MailProviderDeps {
  keys: CredentialKeySettings;
  mailer: MailerConfig;
  allowPrivateNetworks: boolean;
}

/**
 * How a Gmail or Graph account authenticates: a bearer token, and one renewal after a 401 (a
 * refresh-token grant for a credential that holds a refresh token, a freshly minted token for a
 * service-account key); `renew` answers false when there is nothing to renew or it was done.
 */
export interface ApiAuth {
  token(): Promise<string>;
  renew(): Promise<boolean>;
}

/** A mailbox the mailer can read or send as. */
export type MailAccount =
  | { kind: 'gmail'; credentialId: string; baseUrl: string; auth: ApiAuth; /** `me`, or the delegated subject */ user: string }
  | { kind: 'graph'; credentialId: string; baseUrl: string; auth: ApiAuth; user: string }
  | { kind: 'imap'; credentialId: string; value: CredentialValue };

export class MailAccountError extends Error {}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/**
 * The account of a workspace credential (`mailA`, `mailB` or `imap`), as the mailbox owner
 * (`me`) or a delegated subject. A `mailA` credential holding a service-account key acts only
 * as a delegated subject, with tokens minted by the JWT bearer grant.
 */
export function accountOf(em: EntityManager, deps: MailProviderDeps, row: Credential, subject?: string): MailAccount {
  const ring = credentialKeyring(deps.keys);
  if (!ring) throw new MailAccountError('Credentials are unavailable: neither CREDENTIALS_KEY nor SECRET_KEY is configured.');
  let value: CredentialValue;
  try {
    value = openCredential(ring, row);
  } catch {
    throw new MailAccountError('The mail credential cannot be decrypted.');
  }
  if (row.type === 'imap') return { kind: 'imap', credentialId: row.id, value };
  if (row.type !== 'mailA' && row.type !== 'mailB') throw new MailAccountError(`A ${row.type} credential cannot read or send mail.`);
  const own = typeof value.baseUrl === 'string' ? value.baseUrl : undefined;
  const common = { credentialId: row.id, user: subject ?? 'me', auth: apiAuth(em, deps, ring, row, value, subject) };
  return row.type === 'mailA'
    ? { kind: 'gmail', baseUrl: trimSlash(own ?? deps.mailer.gmailBaseUrl), ...common }
    : { kind: 'graph', baseUrl: trimSlash(own ?? deps.mailer.graphBaseUrl), ...common };
}

function apiAuth(
  em: EntityManager,
  deps: MailProviderDeps,
  ring: Keyring,
  row: Credential,
  stored: CredentialValue,
  subject: string | undefined,
): ApiAuth {
  let value = stored;
  let renewed = false;
  const parsedKey = value.serviceAccountKey ? serviceAccountKeySchema.safeParse(value.serviceAccountKey) : null;
  if (parsedKey) {
    if (!parsedKey.success)
      throw new MailAccountError('The stored service-account key of the mail credential is not valid; save the key again.');
    if (!subject)
      throw new MailAccountError(
        'A mailA credential with a service-account key acts only for a delegated user: bind it to a route with PATCH /api/v1/mailer/routes/{id}/google-dwd.',
      );
    const request: DelegatedTokenRequest = {
      key: parsedKey.data,
      subject,
      scopes: oauthScopesOf(value),
      tokenUrlOverride: deps.mailer.googleTokenUrl,
      allowPrivateNetworks: deps.allowPrivateNetworks,
      timeoutMs: deps.mailer.timeoutMs,
    };
    return {
      token: () => delegatedAccessToken(request),
      renew: async () => {
        if (renewed) return false;
        renewed = true;
        await delegatedAccessToken(request, true);
        return true;
      },
    };
  }
  return {
    token: async () => String(value.token),
    renew: async () => {
      if (renewed || typeof value.refreshToken !== 'string' || typeof value.tokenUrl !== 'string') return false;
      renewed = true;
      value = await refreshOAuth2(value, { allowPrivateNetworks: deps.allowPrivateNetworks, timeoutMs: deps.mailer.timeoutMs }, row.type);
      await storeRefreshedValue(em, ring, row, value);
      return true;
    },
  };
}

/** The account of a route's domain-wide delegation configuration (Gmail as its subject). */
export async function delegatedAccount(
  em: EntityManager,
  deps: MailProviderDeps,
  workspaceId: string,
  configId: string,
): Promise<{ account: MailAccount; routeId: string }> {
  const config = await em.findOne(MailerGoogleDwdConfigSchema, { id: configId, workspaceId });
  if (!config) throw new MailAccountError('The delegation configuration no longer exists.');
  const row = await em.findOne(CredentialSchema, { id: config.credentialId, workspaceId });
  if (!row) throw new MailAccountError('The delegation configuration names a credential that no longer exists.');
  return { account: accountOf(em, deps, row, config.subject), routeId: config.routeId };
}

const userPath = (account: { kind: 'gmail' | 'graph'; user: string }) =>
  account.kind === 'gmail'
    ? `users/${encodeURIComponent(account.user)}`
    : account.user === 'me'
      ? 'me'
      : `users/${encodeURIComponent(account.user)}`;

/** One provider request with the account's bearer token; a 401 renews the token once and repeats the request once. */
async function call(
  deps: MailProviderDeps,
  account: { auth: ApiAuth },
  req: { method: string; url: string; query?: Record<string, string | undefined>; body?: unknown; headers?: Record<string, string> },
  bytes = false,
): Promise<HttpResponseOutput> {
  const send = async () =>
    httpRequest(
      {
        method: req.method,
        url: req.url,
        query: req.query,
        body: req.body,
        headers: { accept: bytes ? '*/*' : 'application/json', ...req.headers, authorization: `Bearer ${await account.auth.token()}` },
        timeoutMs: deps.mailer.timeoutMs,
      },
      {
        allowPrivateNetworks: deps.allowPrivateNetworks,
        responseType: bytes ? 'bytes' : 'text',
        maxResponseBytes: 40 * 1024 * 1024,
        sensitiveHeaders: ['authorization'],
      },
    );
  const first = await send();
  if (first.status !== 401 || !(await account.auth.renew())) return first;
  return send();
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
  const res = ok(
    await call(deps, account, { method: 'GET', url: `${account.baseUrl}/${userPath(account)}/profile` }),
    'Gmail',
    'users.getProfile',
  );
  const historyId = (res.body as { historyId?: unknown })?.historyId;
  if (typeof historyId !== 'string' && typeof historyId !== 'number') throw new Error('Gmail users.getProfile gave no historyId.');
  return String(historyId);
}

async function gmailPlan(
  deps: MailProviderDeps,
  account: Extract<MailAccount, { kind: 'gmail' }>,
  cursor: string | null,
): Promise<PollPlan> {
  const fetchOne = async (item: { id: string; threadId: string | null }): Promise<FetchedMail | null> => {
    const res = await call(deps, account, {
      method: 'GET',
      url: `${account.baseUrl}/${userPath(account)}/messages/${encodeURIComponent(item.id)}`,
      query: { format: 'raw' },
    });
    if (res.status === 404) return null;
    const body = ok(res, 'Gmail', 'users.messages.get').body as {
      id?: string;
      threadId?: string;
      raw?: string;
      labelIds?: string[];
      historyId?: string;
    };
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
    if (res.status === 404)
      return {
        next: await gmailBaseline(deps, account),
        baseline: true,
        note: 'Gmail history expired; polling restarted from the current mailbox state.',
        pending: [],
        fetch: fetchOne,
        close: noop,
      };
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

async function graphPlan(
  deps: MailProviderDeps,
  account: Extract<MailAccount, { kind: 'graph' }>,
  cursor: string | null,
): Promise<PollPlan> {
  const origin = new URL(account.baseUrl).origin;
  const fetchOne = async (item: { id: string; threadId: string | null }): Promise<FetchedMail | null> => {
    const res = await call(
      deps,
      account,
      { method: 'GET', url: `${account.baseUrl}/${userPath(account)}/messages/${encodeURIComponent(item.id)}/$value` },
      true,
    );
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
  const { ImapFlow } = await loadImapFlow();
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
      return {
        externalId: `imap:${uidValidity}:${item.id}`,
        externalThreadId: null,
        raw,
        metadata: { provider: 'imap', uidValidity, uid: Number(item.id) },
      };
    };
    if (!state || state.uidValidity !== uidValidity) {
      const next = JSON.stringify({ uidValidity, lastUid: Math.max(0, mailbox.uidNext - 1) } satisfies ImapCursor);
      return {
        next,
        baseline: true,
        note: state ? 'The IMAP mailbox UIDVALIDITY changed; polling restarted from the current mailbox state.' : undefined,
        pending: [],
        fetch: fetchOne,
        close,
      };
    }
    if (mailbox.uidNext - 1 > state.lastUid) {
      for await (const msg of client.fetch(`${state.lastUid + 1}:*`, { uid: true, source: true }, { uid: true })) {
        // `n:*` also names the newest message when every uid is below n.
        if (msg.uid > state.lastUid && msg.source) fetched.set(msg.uid, msg.source);
      }
    }
    const uids = [...fetched.keys()].sort((a, b) => a - b).slice(0, IMAP_BATCH);
    const next = JSON.stringify({ uidValidity, lastUid: uids.at(-1) ?? state.lastUid } satisfies ImapCursor);
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

/**
 * Sends through the Gmail API (`users.messages.send` with the raw base64url MIME) or Graph
 * (`sendMail` in its MIME form: `Content-Type: text/plain` and the base64 MIME as the body), the
 * MIME built by nodemailer's MailComposer, so both carry In-Reply-To and References. Returns
 * the provider's message id when it gives one (Gmail); Graph answers 202 without one.
 */
export async function sendViaApi(
  deps: MailProviderDeps,
  account: Extract<MailAccount, { kind: 'gmail' | 'graph' }>,
  mail: OutgoingMail,
): Promise<string | null> {
  const MailComposer = await loadMailComposer();
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
  if (account.kind === 'gmail') {
    const res = await call(deps, account, {
      method: 'POST',
      url: `${account.baseUrl}/${userPath(account)}/messages/send`,
      body: { raw: mime.toString('base64url'), ...(mail.gmailThreadId ? { threadId: mail.gmailThreadId } : {}) },
    });
    const body = ok(res, 'Gmail', 'users.messages.send').body as { id?: string };
    return typeof body?.id === 'string' ? body.id : null;
  }
  const res = await call(deps, account, {
    method: 'POST',
    url: `${account.baseUrl}/${userPath(account)}/sendMail`,
    headers: { 'content-type': 'text/plain' },
    body: mime.toString('base64'),
  });
  ok(res, 'Microsoft Graph', 'sendMail');
  return null;
}
