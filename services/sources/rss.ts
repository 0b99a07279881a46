import type { EntityManager } from '@mikro-orm/postgresql';
import { TargetSourceSchema, type RssSourceConfig, type TargetSourceState } from '../../db/entities';
import { httpRequest } from '../kernel/outbound';
import { toStorable } from '../kernel/storableText';
import { enqueueSourceEvent, execOf, sourceWebhookId, targetIsLive } from './outbox';
import { parseFeed } from './feeds';

/** How many item keys a source remembers (newest kept); a feed rarely lists more. */
const SEEN_LIMIT = 1000;

export interface RssState extends TargetSourceState {
  etag?: string | null;
  lastModified?: string | null;
  /** Item keys already seen; absent until the first (baseline) poll. */
  seen?: string[];
}

export interface PollResult {
  outcome: 'baseline' | 'not_modified' | 'polled' | 'failed' | 'skipped';
  started: number;
  error?: string;
}

/**
 * Polls one RSS source: a conditional GET through the outbound guard (ETag, Last-Modified),
 * then, on the first poll, records every item as the baseline and starts nothing; afterwards
 * each new item (by guid/id, else link hash) gets one outbox entry (deduplicated by its key,
 * so a repeated poll never starts a second run) and the state advances in the same
 * transaction. Failures are kept in `state.error`; a stopped destination is skipped.
 */
export async function pollRssSource(
  em: EntityManager,
  opts: { allowPrivateNetworks: boolean; timeoutMs?: number },
  sourceId: string,
): Promise<PollResult> {
  const source = await em.fork().findOne(TargetSourceSchema, { id: sourceId, kind: 'rss' });
  if (!source) return { outcome: 'skipped', started: 0 };
  if (!(await targetIsLive(em, source.targetId))) return { outcome: 'skipped', started: 0 };
  const config = source.config as RssSourceConfig;
  const state = source.state as RssState;
  const polledAt = new Date().toISOString();
  const save = (tx: EntityManager, next: RssState) =>
    execOf(tx)(`update workflow_target_sources set state = ?::jsonb, updated_at = now() where id = ?`, [
      JSON.stringify(toStorable(next)),
      source.id,
    ]);

  let body: string;
  let etag: string | null = state.etag ?? null;
  let lastModified: string | null = state.lastModified ?? null;
  try {
    const headers: Record<string, string> = {
      accept: 'application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, */*;q=0.5',
    };
    if (state.seen && etag) headers['if-none-match'] = etag;
    if (state.seen && lastModified) headers['if-modified-since'] = lastModified;
    const res = await httpRequest(
      { method: 'GET', url: config.feedUrl, headers, timeoutMs: opts.timeoutMs ?? 15_000 },
      { allowPrivateNetworks: opts.allowPrivateNetworks },
    );
    if (res.status === 304) {
      await save(em, { ...state, lastPolledAt: polledAt, error: null });
      return { outcome: 'not_modified', started: 0 };
    }
    if (res.status < 200 || res.status >= 300) throw new Error(`The feed answered HTTP ${res.status}.`);
    body = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
    etag = res.headers['etag'] ?? null;
    lastModified = res.headers['last-modified'] ?? null;
  } catch (err) {
    const error = (err as Error).message.slice(0, 500);
    await save(em, { ...state, lastPolledAt: polledAt, error });
    return { outcome: 'failed', started: 0, error };
  }
  let items;
  try {
    items = parseFeed(body);
  } catch (err) {
    const error = `The feed could not be parsed: ${(err as Error).message}`.slice(0, 500);
    await save(em, { ...state, lastPolledAt: polledAt, error });
    return { outcome: 'failed', started: 0, error };
  }
  const keys = items.map((i) => i.key);
  if (!state.seen) {
    await save(em, { ...state, etag, lastModified, seen: keys.slice(0, SEEN_LIMIT), lastPolledAt: polledAt, error: null });
    return { outcome: 'baseline', started: 0 };
  }
  const seen = new Set(state.seen);
  // Feeds list newest first: start the oldest new item first.
  const fresh = items.filter((i) => !seen.has(i.key)).reverse();
  const webhookId = fresh.length > 0 ? await sourceWebhookId(em, source, 'rss', `rss:${source.id}`) : null;
  let started = 0;
  await em.transactional(async (tx) => {
    for (const item of fresh) {
      const payload = {
        rss: {
          sourceId: source.id,
          feedUrl: config.feedUrl,
          item: { key: item.key, title: item.title, link: item.link, summary: item.summary, publishedAt: item.publishedAt },
        },
      };
      if (await enqueueSourceEvent(tx, source, webhookId!, payload, `rss:${item.key}`)) started++;
    }
    const nextSeen = [...new Set([...keys, ...state.seen!])].slice(0, SEEN_LIMIT);
    await save(tx, { ...state, etag, lastModified, seen: nextSeen, lastPolledAt: polledAt, error: null });
  });
  return { outcome: 'polled', started };
}
