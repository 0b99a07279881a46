import { EntitySchema } from '@mikro-orm/core';

/**
 * The mailer's tables (migrations Migration20261123126000_mailer and _mailer_polling). Routes
 * are backed by a `mailer` webhook row, so accepted messages share the webhook outbox.
 */
export interface MailerRoute {
  id: string;
  workspaceId: string;
  workflowId: string;
  targetId: string;
  /** Created with an explicit executionTargetId: its workflow and destination never change. */
  targetBound: boolean;
  webhookId: string;
  /** Trimmed and lowercased. */
  address: string;
  description: string | null;
  enabled: boolean;
  signingSecretEncrypted: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface MailerThread {
  id: string;
  workspaceId: string;
  routeId: string;
  externalThreadId: string | null;
  subject: string;
  subjectKey: string;
  participantsKey: string;
  messageCount: number;
  lastMessageAt: Date;
  createdAt: Date;
}

export interface MailerMessage {
  id: string;
  workspaceId: string;
  routeId: string;
  threadId: string;
  externalMessageId: string | null;
  messageIdHeader: string | null;
  direction: 'inbound' | 'outbound';
  fromAddress: string;
  toAddresses: string[];
  subject: string;
  text: string | null;
  html: string | null;
  attachmentFileIds: string[];
  providerMetadata: Record<string, unknown>;
  outboxId: string | null;
  createdAt: Date;
}

export type MailerReservationStatus = 'sending' | 'sent' | 'unknown' | 'retry_authorized';

export interface MailerReplyReservation {
  id: string;
  workspaceId: string;
  messageId: string;
  idempotencyKey: string;
  fingerprint: string;
  status: MailerReservationStatus;
  credentialId: string | null;
  provider: string | null;
  attempts: number;
  replyMessageId: string | null;
  providerMessageId: string | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface MailerPollingGroup {
  id: string;
  workspaceId: string;
  provider: 'mailA' | 'mailB';
  credentialId: string | null;
  googleDwdConfigId: string | null;
  principalId: string;
  identityKey: string;
  intervalSeconds: number;
  enabled: boolean;
  /** Provider cursor: Gmail historyId, Graph deltaLink, or IMAP `{ uidValidity, lastUid }` as JSON. */
  cursor: string | null;
  nextPollAt: Date | null;
  lastPolledAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A route's Google domain-wide delegation: the service account credential and the mailbox it acts as. */
export interface MailerGoogleDwdConfig {
  id: string;
  workspaceId: string;
  routeId: string;
  credentialId: string;
  subject: string;
  createdAt: Date;
  updatedAt: Date;
}

const ts = (fieldName: string, nullable = false) => ({ type: 'Date', fieldName, columnType: 'timestamptz', nullable }) as const;
const workspace = { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true } as const;

export const MailerRouteSchema = new EntitySchema<MailerRoute>({
  name: 'MailerRoute',
  tableName: 'mailer_routes',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: workspace,
    workflowId: { type: 'string', fieldName: 'workflow_id' },
    targetId: { type: 'string', fieldName: 'target_id' },
    targetBound: { type: 'boolean', fieldName: 'target_bound' },
    webhookId: { type: 'string', fieldName: 'webhook_id' },
    address: { type: 'string' },
    description: { type: 'text', nullable: true },
    enabled: { type: 'boolean' },
    signingSecretEncrypted: { type: 'text', fieldName: 'signing_secret_encrypted', nullable: true, hidden: true },
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});

export const MailerThreadSchema = new EntitySchema<MailerThread>({
  name: 'MailerThread',
  tableName: 'mailer_threads',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: workspace,
    routeId: { type: 'string', fieldName: 'route_id' },
    externalThreadId: { type: 'string', fieldName: 'external_thread_id', nullable: true },
    subject: { type: 'text' },
    subjectKey: { type: 'text', fieldName: 'subject_key' },
    participantsKey: { type: 'text', fieldName: 'participants_key' },
    messageCount: { type: 'integer', fieldName: 'message_count' },
    lastMessageAt: ts('last_message_at'),
    createdAt: ts('created_at'),
  },
});

export const MailerMessageSchema = new EntitySchema<MailerMessage>({
  name: 'MailerMessage',
  tableName: 'mailer_messages',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: workspace,
    routeId: { type: 'string', fieldName: 'route_id' },
    threadId: { type: 'string', fieldName: 'thread_id' },
    externalMessageId: { type: 'string', fieldName: 'external_message_id', nullable: true },
    messageIdHeader: { type: 'text', fieldName: 'message_id_header', nullable: true },
    direction: { type: 'string' },
    fromAddress: { type: 'text', fieldName: 'from_address' },
    toAddresses: { type: 'json', fieldName: 'to_addresses' },
    subject: { type: 'text' },
    text: { type: 'text', nullable: true },
    html: { type: 'text', nullable: true },
    attachmentFileIds: { type: 'json', fieldName: 'attachment_file_ids' },
    providerMetadata: { type: 'json', fieldName: 'provider_metadata' },
    outboxId: { type: 'string', fieldName: 'outbox_id', nullable: true },
    createdAt: ts('created_at'),
  },
});

export const MailerReplyReservationSchema = new EntitySchema<MailerReplyReservation>({
  name: 'MailerReplyReservation',
  tableName: 'mailer_reply_reservations',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: workspace,
    messageId: { type: 'string', fieldName: 'message_id' },
    idempotencyKey: { type: 'string', fieldName: 'idempotency_key' },
    fingerprint: { type: 'string' },
    status: { type: 'string' },
    credentialId: { type: 'string', fieldName: 'credential_id', nullable: true },
    provider: { type: 'string', nullable: true },
    attempts: { type: 'integer' },
    replyMessageId: { type: 'string', fieldName: 'reply_message_id', nullable: true },
    providerMessageId: { type: 'text', fieldName: 'provider_message_id', nullable: true },
    lastError: { type: 'text', fieldName: 'last_error', nullable: true },
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});

export const MailerPollingGroupSchema = new EntitySchema<MailerPollingGroup>({
  name: 'MailerPollingGroup',
  tableName: 'mailer_polling_groups',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: workspace,
    provider: { type: 'string' },
    credentialId: { type: 'string', fieldName: 'credential_id', nullable: true },
    googleDwdConfigId: { type: 'string', fieldName: 'google_dwd_config_id', nullable: true },
    principalId: { type: 'string', fieldName: 'principal_id' },
    identityKey: { type: 'string', fieldName: 'identity_key', unique: true },
    intervalSeconds: { type: 'integer', fieldName: 'interval_seconds' },
    enabled: { type: 'boolean' },
    cursor: { type: 'text', nullable: true },
    nextPollAt: ts('next_poll_at', true),
    lastPolledAt: ts('last_polled_at', true),
    lastError: { type: 'text', fieldName: 'last_error', nullable: true },
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});

export const MailerGoogleDwdConfigSchema = new EntitySchema<MailerGoogleDwdConfig>({
  name: 'MailerGoogleDwdConfig',
  tableName: 'mailer_google_dwd_configs',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: workspace,
    routeId: { type: 'string', fieldName: 'route_id', unique: true },
    credentialId: { type: 'string', fieldName: 'credential_id' },
    subject: { type: 'text' },
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});
