/**
 * The webhooks area: webhook records and their tokens (registry.ts), inbound calls (inbound.ts:
 * token resolution, payloads, the durable outbox and its dispatcher, error-tracker endpoints
 * and signatures) and the two public use cases (invoke.ts: the synchronous call and the
 * error-tracker delivery).
 */
export * from './registry';
export * from './inbound';
export * from './invoke';
