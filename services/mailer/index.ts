/**
 * The mailer area: inbound routes (routes.ts), stored messages, threading and lists
 * (messages.ts), the signed and generic inbound endpoints (inbound.ts) and replies with
 * reservations (replies.ts). Accepted inbound messages go through the webhook outbox.
 */
export * from './routes';
export * from './messages';
export * from './inbound';
export * from './replies';
export * from './pollingGroups';
