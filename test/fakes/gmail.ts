/**
 * A loopback Gmail API (v1) for the mailer: users.getProfile, users.history.list (messageAdded
 * records after startHistoryId, two per page with nextPageToken; 404 for an expired start),
 * users.messages.get format=raw (base64url), users.messages.send (raw base64url MIME). The user
 * in the path (`me` or a delegated subject) is recorded. Base URL: `${url}/gmail/v1`.
 */
import { bearer, startProviderFake, type FakeRequest, type ProviderFake } from './providerServer';

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
}

export async function startGmailFake(token: string): Promise<GmailFake> {
  let historyId = 1000;
  let minHistoryId = 0;
  let seq = 0;
  const messages = new Map<string, Stored>();
  const sent: GmailFake['sent'] = [];
  const notFound = { status: 404, json: { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } } };
  const handle = (req: FakeRequest) => {
    const m = /^\/gmail\/v1\/users\/([^/]+)\/(profile|history|messages\/send|messages\/([^/]+))$/.exec(req.path);
    if (!m) return notFound;
    const user = decodeURIComponent(m[1]);
    if (m[2] === 'profile' && req.method === 'GET') return { json: { emailAddress: user === 'me' ? 'inbox@example.test' : user, messagesTotal: messages.size, threadsTotal: messages.size, historyId: String(historyId) } };
    if (m[2] === 'history' && req.method === 'GET') {
      const start = Number(req.query.get('startHistoryId'));
      if (!Number.isFinite(start) || start < minHistoryId) return notFound;
      const records = [...messages.values()].filter((s) => s.user === user && s.historyId > start).sort((a, b) => a.historyId - b.historyId);
      const offset = Number(req.query.get('pageToken') ?? 0);
      const page = records.slice(offset, offset + 2);
      const more = offset + 2 < records.length;
      return {
        json: {
          history: page.map((s) => ({ id: String(s.historyId), messages: [{ id: s.id, threadId: s.threadId }], messagesAdded: [{ message: { id: s.id, threadId: s.threadId, labelIds: ['INBOX', 'UNREAD'] } }] })),
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
      if (req.query.get('format') !== 'raw') return { status: 400, json: { error: { code: 400, message: 'this fake serves format=raw only' } } };
      return { json: { id: s.id, threadId: s.threadId, labelIds: ['INBOX'], historyId: String(s.historyId), raw: s.raw.toString('base64url') } };
    }
    return notFound;
  };
  const fake = await startProviderFake({ authorized: bearer(token), unauthorized: { status: 401, json: { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } } }, handle });
  return {
    ...fake,
    baseUrl: `${fake.url}/gmail/v1`,
    sent,
    deliver(raw, opts = {}) {
      const id = `msg${(++seq).toString(16).padStart(6, '0')}`;
      historyId += 7;
      messages.set(id, { id, threadId: opts.threadId ?? `thr${id}`, raw: Buffer.isBuffer(raw) ? raw : Buffer.from(raw), historyId, user: opts.user ?? 'me' });
      return id;
    },
    expireHistory() {
      minHistoryId = historyId + 1;
    },
  };
}
