/**
 * A loopback Gmail API (v1) for the mailer: users.getProfile, users.history.list (messageAdded
 * records after startHistoryId, two per page with nextPageToken; 404 for an expired start),
 * users.messages.get format=raw (base64url), users.messages.send (raw base64url MIME). The user
 * in the path (`me` or a delegated subject) is recorded. Base URL: `${url}/gmail/v1`.
 *
 * Google's token endpoint is at `tokenUrl` (`POST /token`): the refresh-token grant when
 * `oauth` is given, and the JWT bearer grant of domain-wide delegation for the service accounts
 * `trustServiceAccount` registers: RS256 signature checked with the account's public key, `aud`
 * the token URL, at most one hour between `iat` and `exp`, Gmail scopes only, and `sub` one of
 * the users the account may act as (else 401 `unauthorized_client`, as Google answers). A token
 * issued for a subject reads and sends only as that subject (`me` is the subject; another user
 * in the path is 403).
 */
import { verify, type KeyObject } from 'node:crypto';
import {
  bearer,
  startProviderFake,
  type FakeAnswer,
  type FakeRequest,
  type ProviderFake,
  type TokenEndpointOptions,
} from './providerServer';

interface Stored {
  id: string;
  threadId: string;
  raw: Buffer;
  historyId: number;
  user: string;
}

export interface GmailFake extends ProviderFake {
  baseUrl: string;
  /** Adds a message to `user`'s INBOX (a new history record); returns its id. */
  deliver(raw: string | Buffer, opts?: { threadId?: string; user?: string }): string;
  /** Makes history older than the current point unavailable (404 for earlier start ids). */
  expireHistory(): void;
  /** Raw MIME of messages.send calls, with the user and threadId they named. */
  sent: Array<{ user: string; raw: string; threadId: string | null }>;
  /** Lets a service account (its client_email and public key) act as `subjects` through the JWT bearer grant. */
  trustServiceAccount(clientEmail: string, publicKey: KeyObject, subjects: string[]): void;
  /** Claims of the JWT assertions whose signature verified. */
  assertions: Array<Record<string, unknown>>;
}

const GMAIL_SCOPES = new Set([
  'https://mail.google.com/',
  'https://www.googleapis.com/auth/gmail.readonly',
  'https://www.googleapis.com/auth/gmail.send',
  'https://www.googleapis.com/auth/gmail.modify',
]);

export async function startGmailFake(token: string, opts: Pick<TokenEndpointOptions, 'oauth'> = {}): Promise<GmailFake> {
  const serviceAccounts = new Map<string, { publicKey: KeyObject; subjects: Set<string> }>();
  const assertions: Array<Record<string, unknown>> = [];
  let tokenUrl = '';
  const grantError = (status: number, error: string, description: string) => ({
    refusal: { status, json: { error, error_description: description } } as FakeAnswer,
  });
  const jwtGrant: TokenEndpointOptions['jwtGrant'] = (assertion) => {
    const parts = assertion.split('.');
    if (parts.length !== 3) return grantError(400, 'invalid_grant', 'Invalid JWT: the assertion is not a signed JWT.');
    let header: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return grantError(400, 'invalid_grant', 'Invalid JWT: the header or claims are not JSON.');
    }
    const account = serviceAccounts.get(String(claims.iss));
    if (header.alg !== 'RS256' || !account) return grantError(400, 'invalid_grant', 'Invalid JWT Signature.');
    if (!verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), account.publicKey, Buffer.from(parts[2], 'base64url')))
      return grantError(400, 'invalid_grant', 'Invalid JWT Signature.');
    assertions.push(claims);
    const now = Math.floor(Date.now() / 1000);
    const iat = Number(claims.iat);
    const exp = Number(claims.exp);
    if (!(iat <= now + 300 && exp > now && exp - iat <= 3600))
      return grantError(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
    // Google's own token URL is the audience of every key file; the loopback URL is accepted too.
    if (claims.aud !== tokenUrl && claims.aud !== 'https://oauth2.googleapis.com/token')
      return grantError(400, 'invalid_grant', 'Invalid JWT: the audience is not the token endpoint.');
    const scopes = String(claims.scope ?? '')
      .split(' ')
      .filter(Boolean);
    if (scopes.length === 0 || !scopes.every((x) => GMAIL_SCOPES.has(x)))
      return grantError(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    const subject = typeof claims.sub === 'string' ? claims.sub : '';
    if (!account.subjects.has(subject))
      return grantError(
        401,
        'unauthorized_client',
        'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.',
      );
    return { subject };
  };
  let historyId = 1000;
  let minHistoryId = 0;
  let seq = 0;
  const messages = new Map<string, Stored>();
  const sent: GmailFake['sent'] = [];
  const notFound = { status: 404, json: { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } } };
  const handle = (req: FakeRequest, subjectOf: (headers: FakeRequest['headers']) => string | undefined) => {
    const m = /^\/gmail\/v1\/users\/([^/]+)\/(profile|history|messages\/send|messages\/([^/]+))$/.exec(req.path);
    if (!m) return notFound;
    let user = decodeURIComponent(m[1]);
    const delegated = subjectOf(req.headers);
    if (delegated && delegated !== 'me') {
      if (user === 'me') user = delegated;
      else if (user !== delegated)
        return { status: 403, json: { error: { code: 403, message: 'Delegation denied for this user.', status: 'PERMISSION_DENIED' } } };
    }
    if (m[2] === 'profile' && req.method === 'GET')
      return {
        json: {
          emailAddress: user === 'me' ? 'inbox@example.test' : user,
          messagesTotal: messages.size,
          threadsTotal: messages.size,
          historyId: String(historyId),
        },
      };
    if (m[2] === 'history' && req.method === 'GET') {
      const start = Number(req.query.get('startHistoryId'));
      if (!Number.isFinite(start) || start < minHistoryId) return notFound;
      const records = [...messages.values()]
        .filter((s) => s.user === user && s.historyId > start)
        .sort((a, b) => a.historyId - b.historyId);
      const offset = Number(req.query.get('pageToken') ?? 0);
      const page = records.slice(offset, offset + 2);
      const more = offset + 2 < records.length;
      return {
        json: {
          history: page.map((s) => ({
            id: String(s.historyId),
            messages: [{ id: s.id, threadId: s.threadId }],
            messagesAdded: [{ message: { id: s.id, threadId: s.threadId, labelIds: ['INBOX', 'UNREAD'] } }],
          })),
          ...(more ? { nextPageToken: String(offset + 2) } : {}),
          historyId: String(historyId),
        },
      };
    }
    if (m[2] === 'messages/send' && req.method === 'POST') {
      const body = JSON.parse(req.body.toString('utf8')) as { raw: string; threadId?: string };
      sent.push({ user, raw: Buffer.from(body.raw, 'base64url').toString('utf8'), threadId: body.threadId ?? null });
      return { json: { id: `sent${sent.length}`, threadId: body.threadId ?? `t-sent${sent.length}`, labelIds: ['SENT'] } };
    }
    if (m[3] && req.method === 'GET') {
      const s = messages.get(decodeURIComponent(m[3]));
      if (!s || s.user !== user) return notFound;
      if (req.query.get('format') !== 'raw')
        return { status: 400, json: { error: { code: 400, message: 'this fake serves format=raw only' } } };
      return {
        json: { id: s.id, threadId: s.threadId, labelIds: ['INBOX'], historyId: String(s.historyId), raw: s.raw.toString('base64url') },
      };
    }
    return notFound;
  };
  const fake = await startProviderFake({
    authorized: bearer(token),
    unauthorized: {
      status: 401,
      json: { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } },
    },
    handle,
    oauth: opts.oauth,
    jwtGrant,
  });
  tokenUrl = fake.tokenUrl;
  return {
    ...fake,
    assertions,
    trustServiceAccount(clientEmail, publicKey, subjects) {
      serviceAccounts.set(clientEmail, { publicKey, subjects: new Set(subjects) });
    },
    baseUrl: `${fake.url}/gmail/v1`,
    sent,
    deliver(raw, opts = {}) {
      const id = `msg${(++seq).toString(16).padStart(6, '0')}`;
      historyId += 7;
      messages.set(id, {
        id,
        threadId: opts.threadId ?? `thr${id}`,
        raw: Buffer.isBuffer(raw) ? raw : Buffer.from(raw),
        historyId,
        user: opts.user ?? 'me',
      });
      return id;
    },
    expireHistory() {
      minHistoryId = historyId + 1;
    },
  };
}
