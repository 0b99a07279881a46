import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, HIDDEN, timestamps, timestamptz } from './columns';
import { workspaceOwned } from './workspaces';

export type MailerReservationStatus = 'sending' | 'sent' | 'unknown' | 'retry_authorized';

export const MailerRouteSchema = entity('MailerRoute', 'mailer_routes', {
  ...workspaceOwned(),
  workflowId: p.string(),
  targetId: p.string(),
  /** Created with an explicit executionTargetId: its workflow and destination never change. */
  targetBound: p.boolean(),
  webhookId: p.string(),
  /** Trimmed and lowercased. */
  address: p.string(),
  description: p.text().nullable(),
  enabled: p.boolean(),
  signingSecretEncrypted: p.text().nullable().hidden(HIDDEN),
  ...timestamps(),
});
/**
 * The mailer's tables (migrations Migration20261123126000_mailer and _mailer_polling). Routes
 * are backed by a `mailer` webhook row, so accepted messages share the webhook outbox.
 */
export type MailerRoute = InferEntity<typeof MailerRouteSchema>;

export const MailerThreadSchema = entity('MailerThread', 'mailer_threads', {
  ...workspaceOwned(),
  routeId: p.string(),
  externalThreadId: p.string().nullable(),
  subject: p.text(),
  subjectKey: p.text(),
  participantsKey: p.text(),
  messageCount: p.integer(),
  lastMessageAt: timestamptz('last_message_at'),
  ...createdAt(),
});
export type MailerThread = InferEntity<typeof MailerThreadSchema>;

export const MailerMessageSchema = entity('MailerMessage', 'mailer_messages', {
  ...workspaceOwned(),
  routeId: p.string(),
  threadId: p.string(),
  externalMessageId: p.string().nullable(),
  messageIdHeader: p.text().nullable(),
  direction: p.string().$type<'inbound' | 'outbound'>(),
  fromAddress: p.text(),
  toAddresses: p.json<string[]>(),
  subject: p.text(),
  text: p.text().nullable(),
  html: p.text().nullable(),
  attachmentFileIds: p.json<string[]>(),
  providerMetadata: p.json<Record<string, unknown>>(),
  outboxId: p.string().nullable(),
  ...createdAt(),
});
export type MailerMessage = InferEntity<typeof MailerMessageSchema>;

export const MailerReplyReservationSchema = entity('MailerReplyReservation', 'mailer_reply_reservations', {
  ...workspaceOwned(),
  messageId: p.string(),
  idempotencyKey: p.string(),
  fingerprint: p.string(),
  status: p.string().$type<MailerReservationStatus>(),
  credentialId: p.string().nullable(),
  provider: p.string().nullable(),
  attempts: p.integer(),
  replyMessageId: p.string().nullable(),
  providerMessageId: p.text().nullable(),
  lastError: p.text().nullable(),
  ...timestamps(),
});
export type MailerReplyReservation = InferEntity<typeof MailerReplyReservationSchema>;

export const MailerPollingGroupSchema = entity('MailerPollingGroup', 'mailer_polling_groups', {
  ...workspaceOwned(),
  provider: p.string().$type<'mailA' | 'mailB'>(),
  credentialId: p.string().nullable(),
  googleDwdConfigId: p.string().nullable(),
  principalId: p.string(),
  identityKey: p.string().unique(),
  intervalSeconds: p.integer(),
  enabled: p.boolean(),
  /** Provider cursor: Gmail historyId, Graph deltaLink, or IMAP `{ uidValidity, lastUid }` as JSON. */
  cursor: p.text().nullable(),
  nextPollAt: timestamptz('next_poll_at').nullable(),
  lastPolledAt: timestamptz('last_polled_at').nullable(),
  lastError: p.text().nullable(),
  ...timestamps(),
});
export type MailerPollingGroup = InferEntity<typeof MailerPollingGroupSchema>;

export const MailerGoogleDwdConfigSchema = entity('MailerGoogleDwdConfig', 'mailer_google_dwd_configs', {
  ...workspaceOwned(),
  routeId: p.string().unique(),
  credentialId: p.string(),
  subject: p.text(),
  ...timestamps(),
});
/** A route's Google domain-wide delegation: the service account credential and the mailbox it acts as. */
export type MailerGoogleDwdConfig = InferEntity<typeof MailerGoogleDwdConfigSchema>;
