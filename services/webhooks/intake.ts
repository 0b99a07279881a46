import type { MikroORM } from '@mikro-orm/postgresql';
import { outboxRunId } from './inbound';
import { OutboxWriter, type OutboxBatching } from './outboxWriter';
import { WebhookTokenCache } from './tokenCache';

/** The invoke route's hot path: resolved tokens kept briefly, and the outbox written in group commits. */
export interface WebhookIntake {
  tokens: WebhookTokenCache;
  outbox: OutboxWriter;
}

/** Built once per process by the composition root; the cache follows changes flushed through `orm`. */
export function createWebhookIntake(orm: MikroORM, tokenCacheMs: number, batching: OutboxBatching): WebhookIntake {
  const tokens = new WebhookTokenCache(tokenCacheMs);
  tokens.watch(orm.em.getEventManager());
  return { tokens, outbox: new OutboxWriter(() => orm.em.fork(), outboxRunId, batching) };
}
