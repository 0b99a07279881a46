import { z } from 'zod';
import { timestampFields, url } from './index';
import { fullRunSchema } from './runs';

/** Response schemas of the webhooks area (webhook objects and the public invocation answers). */

export const webhookSchema = z
  .strictObject({
    id: z.string(),
    workspaceId: z.string(),
    workflowId: z.string(),
    nodeId: z.string().describe('The trigger node the webhook starts'),
    kind: z.enum(['generic', 'errtracker']),
    provider: z.literal('errtracker').nullable(),
    enabled: z.boolean(),
    ...timestampFields,
    invokeUrl: url.nullable().describe('Null for error-tracker webhooks: their token was shown once at creation'),
    destination: z
      .strictObject({ targetId: z.string(), kind: z.enum(['production', 'preview']), name: z.string() })
      .nullable()
      .optional()
      .describe('The destination whose published version the webhook runs (list and get); production and previews never share a URL'),
    links: z.strictObject({ invoke: url.nullable() }),
  })
  .meta({ id: 'Webhook' });

export const webhookListSchema = z.strictObject({ webhooks: z.array(webhookSchema), links: z.array(webhookSchema.shape.links) });

export const webhookWithLinksSchema = z.strictObject({ webhook: webhookSchema, links: webhookSchema.shape.links });

export const createdErrtrackerWebhookSchema = z.strictObject({
  webhook: webhookSchema.extend({ invokeUrl: url }),
  invokeUrl: url.describe('Shown once; only its digest is kept'),
});

export const acceptedDeliverySchema = z.strictObject({
  token: z.string(),
  outboxId: z.string(),
  status: z.enum(['accepted', 'deduplicated']),
});

/**
 * What a Response node replied: the status, headers and body the workflow chose. Its body is
 * whatever the workflow built, so it can look like any other answer of the route.
 */
export const responseNodeReplySchema = z.unknown().describe("The Response node's reply body");

export const invokeAcceptedSchema = z.union([
  acceptedDeliverySchema.describe('Durable: the request is in the outbox (no Response node, or a repeated delivery)'),
  z
    .strictObject({ runId: z.string(), status: z.literal('waiting') })
    .describe('The run paused on a durable wait or approval before replying'),
  z.strictObject({ status: z.literal('processing') }).describe('The synchronous budget ran out; the run goes on'),
  responseNodeReplySchema,
]);

export const invokeRunEndedSchema = z.union([
  z.strictObject({ token: z.string(), run: fullRunSchema }).describe('The run ended without reaching its Response node'),
  responseNodeReplySchema,
]);
