import { z } from 'zod';
import { isoDate, timestampFields, url } from './index';

/** Mailer response objects (services/mailer). Fields beyond the spec's are this service's choice. */
export const mailerRouteSchema = z.strictObject({
  id: z.string(),
  address: z.string(),
  workflowId: z.string(),
  executionTargetId: z.string().nullable(),
  description: z.string().nullable(),
  enabled: z.boolean(),
  targetEnabled: z.boolean(),
  ...timestampFields,
});
export const mailerRouteLinksSchema = z.strictObject({ self: url, inbound: url, signedInbound: url });
export const mailerRouteWithLinksSchema = z.strictObject({
  route: mailerRouteSchema,
  links: mailerRouteLinksSchema,
  signingSecret: z.string().optional(),
});
export const createdMailerRouteSchema = z.strictObject({
  route: mailerRouteSchema,
  signingSecret: z.string(),
  links: mailerRouteLinksSchema,
});
export const mailerRouteListSchema = z.strictObject({ routes: z.array(mailerRouteSchema), links: z.array(mailerRouteLinksSchema) });

export const mailerMessageSchema = z.strictObject({
  id: z.string(),
  threadId: z.string(),
  routeId: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  externalMessageId: z.string().nullable(),
  from: z.string(),
  to: z.array(z.string()),
  subject: z.string(),
  text: z.string().nullable(),
  html: z.string().nullable().describe('Sanitized HTML: no scripts, no remote images'),
  attachmentFileIds: z.array(z.string()),
  providerMetadata: z.record(z.string(), z.unknown()),
  createdAt: isoDate,
});
export const mailerThreadSchema = z.strictObject({
  id: z.string(),
  routeId: z.string(),
  externalThreadId: z.string().nullable(),
  subject: z.string(),
  messageCount: z.number().int(),
  lastMessageAt: isoDate,
  createdAt: isoDate,
});
export const mailerInboundAcceptedSchema = z.strictObject({
  route: mailerRouteSchema,
  message: mailerMessageSchema,
  run: z.null(),
  outbox: z.strictObject({ id: z.string(), status: z.literal('pending') }),
  deduplicated: z.boolean(),
});
export const mailerThreadListSchema = z.strictObject({ threads: z.array(mailerThreadSchema), nextCursor: z.string().nullable() });
export const mailerThreadWithMessagesSchema = z.strictObject({ thread: mailerThreadSchema, messages: z.array(mailerMessageSchema) });
export const mailerMessageListSchema = z.strictObject({ messages: z.array(mailerMessageSchema), nextCursor: z.string().nullable() });

export const replyReservationSchema = z.strictObject({
  id: z.string(),
  messageId: z.string(),
  status: z.enum(['sending', 'sent', 'unknown', 'retry_authorized']),
  reconciliable: z.boolean(),
  provider: z.string().nullable(),
  attempts: z.number().int(),
  replyMessageId: z.string().nullable(),
  lastError: z.string().nullable(),
  ...timestampFields,
});
export const replySentSchema = z.strictObject({
  reply: mailerMessageSchema,
  reservation: replyReservationSchema,
  deduplicated: z.boolean(),
});

export const pollingGroupSchema = z.strictObject({
  id: z.string(),
  provider: z.enum(['mailA', 'mailB']),
  credentialId: z.string().nullable(),
  googleDwdConfigId: z.string().nullable(),
  intervalSeconds: z.number().int(),
  enabled: z.boolean(),
  cursor: z.string().nullable(),
  nextPollAt: isoDate.nullable(),
  lastPolledAt: isoDate.nullable(),
  lastError: z.string().nullable(),
  ...timestampFields,
});
export const pollingGroupResponseSchema = z.strictObject({ pollingGroup: pollingGroupSchema });
export const pollingGroupListSchema = z.strictObject({ pollingGroups: z.array(pollingGroupSchema) });

export const googleDwdSchema = z.strictObject({
  id: z.string(),
  serviceAccountCredentialId: z.string(),
  subject: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const mailerRouteGoogleDwdSchema = z.strictObject({
  route: mailerRouteSchema,
  googleDwd: googleDwdSchema.nullable(),
  links: mailerRouteLinksSchema,
});
