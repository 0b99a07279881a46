/**
 * The mailer area: inbound routes (routes.ts), stored messages, threading and lists
 * (messages.ts), the signed and generic inbound endpoints (inbound.ts), replies with
 * reservations (replies.ts), polling groups and their polls (pollingGroups.ts, polling.ts),
 * the providers (providers.ts) and Google domain-wide delegation (delegation.ts). Accepted inbound messages go through the webhook outbox.
 */
export * from './routes';
export * from './messages';
export * from './inbound';
export * from './replies';
export * from './pollingGroups';
export * from './polling';
export * from './delegation';
export * from './attachments';
export { type MailProviderDeps } from './providers';
