/**
 * The webhooks area: webhook records and their tokens (registry.ts), inbound calls (inbound.ts:
 * token resolution, payloads, the durable outbox and its dispatcher, error-tracker endpoints
 * and signatures) and the two public use cases (invoke.ts: the synchronous call and the
 * error-tracker delivery), and the invoke route's hot path (intake.ts: the token cache of
 * tokenCache.ts and the group-commit outbox writer of outboxWriter.ts).
 */
export { getWebhook, listWebhooks, syncWebhooks, WEBHOOK_FORBIDDEN, webhookData, type WebhookData, webhookToken } from './registry';
export {
  acceptIntoOutbox,
  createErrtrackerWebhook,
  createWebhookRun,
  deliveryId,
  dispatchOutbox,
  type DispatchPass,
  errtrackerDeliveryId,
  errtrackerSecretOf,
  type ErrtrackerWebhookInput,
  type InboundRequest,
  outboxRunId,
  type ResolvedWebhook,
  resolveWebhookToken,
  verifyErrtrackerSignature,
  webhookPayload,
} from './inbound';
export {
  callWebhook,
  type ErrtrackerIngressSettings,
  receiveErrtrackerDelivery,
  type WebhookCallDeps,
  type WebhookCallOutcome,
} from './invoke';
export { createWebhookIntake, type WebhookIntake } from './intake';
export type { OutboxWriter, OutboxEntry, OutboxAcceptance, OutboxBatching } from './outboxWriter';
export type { WebhookTokenCache } from './tokenCache';
