/**
 * The webhooks area: webhook records and their tokens (registry.ts), inbound calls (inbound.ts:
 * token resolution, payloads, the durable outbox and its dispatcher, error-tracker endpoints
 * and signatures) and the two public use cases (invoke.ts: the synchronous call and the
 * error-tracker delivery), and the invoke route's hot path (intake.ts: the token cache of
 * tokenCache.ts and the group-commit outbox writer of outboxWriter.ts).
 */
export * from './registry';
export * from './inbound';
export * from './invoke';
export * from './intake';
export type { OutboxWriter, OutboxEntry, OutboxAcceptance } from './outboxWriter';
export type { WebhookTokenCache } from './tokenCache';
