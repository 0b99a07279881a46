/**
 * `chat`: Slack Web API `conversations.history` (GET, `Authorization: Bearer`, answers
 * `{ ok, messages, has_more, response_metadata.next_cursor }` or `{ ok: false, error }`; 429 with
 * Retry-After when rate limited). One record per message, newest first as Slack returns them.
 *
 * Cursor per channel: `oldest` (messages up to it are synced), `latest` (set while a pass over
 * newer messages is unfinished: resume below it), `page` (Slack's next_cursor when the run
 * stopped between pages) and `passMax` (newest ts seen in the unfinished pass). A message larger
 * than maxBytes becomes a compact record with `contentTruncated` when it is the first of its run.
 */
import { storable, SyncError, stringList, providerFailure, type ConnectorProvider, type SyncItem } from './types';

interface ChannelState {
  oldest: string | null;
  latest: string | null;
  page: string | null;
  passMax: string | null;
}

interface SlackMessage {
  type?: string;
  subtype?: string;
  ts: string;
  text?: string;
  user?: string;
  thread_ts?: string;
}

const SKIPPED_SUBTYPES = new Set(['channel_join', 'channel_leave', 'channel_topic', 'channel_purpose', 'channel_name']);
const PAGE_LIMIT = 200;
const tsGreater = (a: string, b: string | null) => b === null || Number(a) > Number(b);

export const chatProvider: ConnectorProvider = {
  id: 'chat',
  label: 'Chat (Slack Web API)',
  scopes: ['channels:history', 'groups:history'],
  filters: (config) => ({
    channelIds: stringList(config, 'channelIds', { required: true, max: 100, pattern: /^[A-Z0-9]{2,40}$/i, what: 'channel ids' }),
  }),
  authHeaders: (credential) => ({ authorization: `Bearer ${credential.token}` }),

  async fetch(ctx) {
    const { channelIds } = this.filters(ctx.config) as { channelIds: string[] };
    const previous = (ctx.state ?? {}) as Record<string, ChannelState>;
    const state: Record<string, ChannelState> = {};
    const upserts: SyncItem[] = [];
    let stopped = false;
    for (const channel of channelIds) {
      const s: ChannelState = Object.assign({ oldest: null, latest: null, page: null, passMax: null }, previous[channel] ?? {});
      state[channel] = s;
      if (stopped) continue;
      for (;;) {
        if (ctx.budget.pagesLeft <= 0 || ctx.budget.itemsLeft <= 0) {
          stopped = true;
          break;
        }
        ctx.budget.page();
        const res = await ctx.request({
          method: 'GET',
          url: `${ctx.baseUrl}/conversations.history`,
          query: {
            channel,
            limit: Math.min(PAGE_LIMIT, ctx.budget.itemsLeft),
            cursor: s.page,
            oldest: s.oldest,
            latest: s.latest,
            inclusive: false,
          },
        });
        const body = res.body as {
          ok?: boolean;
          error?: string;
          messages?: SlackMessage[];
          has_more?: boolean;
          response_metadata?: { next_cursor?: string };
        };
        if (res.status === 429)
          throw new SyncError('internal', `Provider chat is rate limiting (retry after ${res.headers['retry-after'] ?? '?'} s).`);
        if (res.status !== 200 || !body || typeof body !== 'object')
          throw providerFailure('chat', res, `conversations.history for ${channel}`);
        if (!body.ok) {
          if (body.error === 'channel_not_found')
            throw new SyncError('invalid', `Provider chat does not know channel ${channel} (channel_not_found); check config.channelIds.`);
          throw new SyncError('internal', `Provider chat answered ${body.error ?? 'an error'} to conversations.history for ${channel}.`);
        }
        const messages = body.messages ?? [];
        let stoppedAt: string | null = null;
        for (const m of messages) {
          if (tsGreater(m.ts, s.passMax)) s.passMax = m.ts;
          if (m.subtype && SKIPPED_SUBTYPES.has(m.subtype)) continue;
          const text = storable(m.text ?? '');
          const bytes = Buffer.byteLength(text);
          if (ctx.budget.itemsLeft <= 0 || bytes > ctx.budget.bytesLeft) {
            if (upserts.length === 0 && ctx.budget.itemsLeft > 0) {
              // One message larger than the whole budget: a compact record, so the run still moves on.
              const compact = Buffer.from(text)
                .subarray(0, Math.max(0, ctx.budget.bytesLeft - 3))
                .toString('utf8')
                .replace(/\uFFFD$/, '');
              upserts.push(record(channel, m, compact, { contentTruncated: true, originalBytes: bytes }));
              ctx.budget.take(Buffer.byteLength(compact));
              stoppedAt = m.ts;
            }
            stopped = true;
            break;
          }
          upserts.push(record(channel, m, text, {}));
          ctx.budget.take(bytes);
          stoppedAt = m.ts;
        }
        if (stopped) {
          // Resume below the last message taken (Slack pages cannot resume mid-page).
          if (stoppedAt) s.latest = stoppedAt;
          s.page = null;
          break;
        }
        const next = body.response_metadata?.next_cursor;
        if (body.has_more && next) {
          s.page = next;
          continue;
        }
        // The pass reached `oldest`: everything up to the newest message seen is synced.
        s.oldest = s.passMax ?? s.oldest;
        s.latest = null;
        s.page = null;
        s.passMax = null;
        break;
      }
    }
    return { upserts, tombstones: [], cursor: state, fullSnapshot: false };
  },
};

function record(channel: string, m: SlackMessage, text: string, extra: Record<string, unknown>): SyncItem {
  return {
    externalId: `chat:${channel}:${m.ts}`,
    title: `#${channel} ${m.user ?? 'message'} ${m.ts}`,
    mimeType: 'text/plain',
    content: text,
    url: null,
    version: m.ts,
    metadata: { channel, ts: m.ts, ...(m.user ? { user: m.user } : {}), ...(m.thread_ts ? { threadTs: m.thread_ts } : {}), ...extra },
  };
}
