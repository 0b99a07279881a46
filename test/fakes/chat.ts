/**
 * Loopback Slack Web API: `GET /conversations.history` with `channel`, `limit`, `cursor`,
 * `oldest`, `latest`, `inclusive` — messages newest first, `has_more`,
 * `response_metadata.next_cursor`; errors as HTTP 200 `{ ok: false, error }` (`not_authed`,
 * `invalid_auth`, `channel_not_found`).
 */
import { bearer, startProviderFake, type ProviderFake } from './providerServer';

export interface SlackMessage {
  type: 'message';
  ts: string;
  user?: string;
  text: string;
  subtype?: string;
}

export interface ChatFake extends ProviderFake {
  channels: Map<string, SlackMessage[]>;
  /** Adds `count` messages to `channel` with increasing timestamps; returns them. */
  post(channel: string, texts: string[]): SlackMessage[];
}

export async function startChatFake(token = 'xoxb-fake-token'): Promise<ChatFake> {
  const channels = new Map<string, SlackMessage[]>();
  let clock = 1_700_000_000;
  const fake = await startProviderFake({
    authorized: bearer(token),
    unauthorized: { status: 200, json: { ok: false, error: 'invalid_auth' } },
    handle: (req) => {
      if (req.path !== '/conversations.history') return { status: 404, json: { ok: false, error: 'unknown_method' } };
      const channel = req.query.get('channel') ?? '';
      const all = channels.get(channel);
      if (!all) return { json: { ok: false, error: 'channel_not_found' } };
      const limit = Math.min(Number(req.query.get('limit') ?? 100) || 100, 999);
      const oldest = req.query.get('oldest');
      const latest = req.query.get('latest');
      const inclusive = req.query.get('inclusive') === 'true' || req.query.get('inclusive') === '1';
      const inRange = all
        .filter((m) => (oldest ? (inclusive ? Number(m.ts) >= Number(oldest) : Number(m.ts) > Number(oldest)) : true))
        .filter((m) => (latest ? (inclusive ? Number(m.ts) <= Number(latest) : Number(m.ts) < Number(latest)) : true))
        .sort((a, b) => Number(b.ts) - Number(a.ts));
      const offset = Number(
        Buffer.from(req.query.get('cursor') ?? '', 'base64')
          .toString('utf8')
          .replace('next_ts:', '') || 0,
      );
      const page = inRange.slice(offset, offset + limit);
      const more = offset + limit < inRange.length;
      return {
        json: {
          ok: true,
          messages: page,
          has_more: more,
          pin_count: 0,
          response_metadata: { next_cursor: more ? Buffer.from(`next_ts:${offset + limit}`).toString('base64') : '' },
        },
      };
    },
  });
  return {
    ...fake,
    channels,
    post(channel, texts) {
      const list = channels.get(channel) ?? [];
      channels.set(channel, list);
      const added = texts.map((text) => ({ type: 'message' as const, ts: `${clock++}.000100`, user: 'U0123', text }));
      list.push(...added);
      return added;
    },
  };
}
