import { z } from 'zod';
import { defineRoute, type HttpMethod, type RouteResult } from '../http/route';
import { requestOrigin } from '../http/urls';
import { errtrackerInvokeUrl, webhookWithLinks } from '../http/links';
import { bareAuthErrors, bareErrorSchema, pathId } from '../schemas';
import {
  acceptedDeliverySchema,
  createdErrtrackerWebhookSchema,
  invokeAcceptedSchema,
  invokeRunEndedSchema,
  responseNodeReplySchema,
  webhookListSchema,
  webhookWithLinksSchema,
} from '../schemas/webhooks';
import type { AppContext } from '../context';
import { withRunUrls } from '../http/links';
import {
  callWebhook,
  createErrtrackerWebhook,
  getWebhook,
  listWebhooks,
  receiveErrtrackerDelivery,
  type InboundRequest,
  type WebhookCallOutcome,
} from '../../services/webhooks';

/** The parts of the HTTP request a webhook run sees. */
function inboundRequest(ctx: AppContext): InboundRequest {
  return { method: ctx.method, query: ctx.query, headers: ctx.headers, body: ctx.request.body };
}

export const listWebhooksRoute = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks',
  operationId: 'listWebhooks',
  summary: 'Webhooks of the workspace with their invoke links; `?workflowId=` narrows to one workflow',
  tags: ['Webhooks'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'read' },
  query: z.object({ workflowId: z.string().min(1).optional() }),
  responses: { 200: { description: '`{ webhooks, links }`', schema: webhookListSchema }, ...bareAuthErrors },
  handler: async (ctx, { principal, query }) => {
    const webhooks = (await listWebhooks(ctx.state.em, principal, ctx.deps.config.secretKey, query.workflowId)).map((w) =>
      webhookWithLinks(requestOrigin(ctx), w),
    );
    return { status: 200, body: { webhooks, links: webhooks.map((w) => w.links) } };
  },
});

export const getWebhookRoute = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks/{id}',
  operationId: 'getWebhook',
  summary: 'One webhook with its invoke link',
  tags: ['Webhooks'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'read' },
  params: z.object({ id: pathId }),
  responses: {
    200: { description: '`{ webhook, links }`', schema: webhookWithLinksSchema },
    ...bareAuthErrors,
    403: { description: '`API key cannot access this webhook`', schema: bareErrorSchema },
    404: { description: 'Webhook not found', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, params }) => {
    const webhook = webhookWithLinks(requestOrigin(ctx), await getWebhook(ctx.state.em, principal, ctx.deps.config.secretKey, params.id));
    return { status: 200, body: { webhook, links: webhook.links } };
  },
});

/** How a webhook call's outcome is answered: 202 while the run is pending or running, else the reply or the run. */
function callResponse(token: string, outcome: WebhookCallOutcome, origin: string): RouteResult {
  switch (outcome.kind) {
    case 'accepted':
      return { status: 202, body: { token, outboxId: outcome.outboxId, status: outcome.deduplicated ? 'deduplicated' : 'accepted' } };
    case 'reply':
      return { status: outcome.status, body: outcome.body, headers: outcome.headers };
    case 'waiting':
      return { status: 202, body: { runId: outcome.runId, status: 'waiting' } };
    case 'processing':
      return { status: 202, body: { status: 'processing' } };
    case 'finished':
      return { status: 200, body: { token, run: withRunUrls(outcome.run, origin) } };
  }
}

const INVOKE_METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

export const invokeWebhookRoutes = INVOKE_METHODS.map((method) =>
  defineRoute({
    method,
    path: '/api/webhooks/{token}',
    operationId: `invokeWebhook_${method}`,
    summary: 'Invoke a webhook (no bearer; the token is the capability)',
    tags: ['Webhooks'],
    family: 'bare',
    access: { kind: 'public' },
    params: z.object({ token: pathId }),
    responses: {
      202: {
        description:
          '`{ token, outboxId, status: accepted | deduplicated }`, `{ runId, status: waiting }`, `{ status: processing }`, or a Response node reply with status 202',
        schema: invokeAcceptedSchema,
      },
      200: {
        description: "`{ token, run }` when the run ended without reaching its Response node, or the Response node's reply",
        schema: invokeRunEndedSchema,
      },
      default: { description: "The Response node's reply: the status, headers and body the workflow set", schema: responseNodeReplySchema },
      404: { description: 'Unknown or disabled token, or a workflow that cannot run', schema: bareErrorSchema },
      413: { description: 'Body too large', schema: bareErrorSchema },
    },
    handler: async (ctx, { params, deps }) => {
      const outcome = await callWebhook(
        () => ctx.state.em,
        {
          launcher: deps.services.runs.launcher,
          syncBudgetMs: deps.config.webhookSyncBudgetMs,
          log: ctx.state.log,
          intake: deps.services.webhooks.intake,
        },
        params.token,
        inboundRequest(ctx),
      );
      return callResponse(params.token, outcome, requestOrigin(ctx));
    },
  }),
);

const errtrackerBody = z
  .object({
    provider: z.literal('errtracker', { error: 'provider must be errtracker' }),
    workflowId: z.string().min(1),
    organizationSlug: z.string().trim().min(1).max(200),
    projectSlug: z.string().trim().min(1).max(200),
    credentialId: z.string().min(1).optional(),
    signingSecret: z.string().min(16, 'signingSecret must be at least 16 characters').max(500).optional(),
    executionTargetId: z.string().optional(),
    nodeId: z.string().optional(),
  })
  .strict()
  .refine((b) => (b.credentialId === undefined) !== (b.signingSecret === undefined), {
    message: 'Send exactly one of credentialId or signingSecret.',
  });

export const createErrtrackerWebhookRoute = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks',
  operationId: 'createErrtrackerWebhook',
  summary: 'Prepare a signed error-tracker endpoint (Admin or Owner); the invokeUrl is shown once',
  tags: ['Webhooks'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'admin' },
  body: errtrackerBody,
  responses: {
    201: { description: '`{ webhook, invokeUrl }`; the invokeUrl is shown once', schema: createdErrtrackerWebhookSchema },
    ...bareAuthErrors,
    404: { description: 'Workflow not found', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, body }) => {
    const { webhook, token } = await createErrtrackerWebhook(
      ctx.state.em,
      ctx.deps.config.secretKey,
      principal,
      body,
      ctx.deps.services.credentials.keys,
    );
    const invokeUrl = errtrackerInvokeUrl(requestOrigin(ctx), token);
    return { status: 201, body: { webhook: { ...webhookWithLinks(requestOrigin(ctx), webhook), invokeUrl }, invokeUrl } };
  },
});

export const errtrackerIngressRoute = defineRoute({
  method: 'post',
  path: '/api/integrations/errtracker/{token}',
  operationId: 'errtrackerIngress',
  summary: 'Error-tracker deliveries (HMAC-signed, no bearer); off unless ERRTRACKER_INGRESS_ENABLED',
  tags: ['Webhooks'],
  family: 'bare',
  access: { kind: 'public' },
  params: z.object({ token: pathId }),
  responses: {
    202: { description: '`{ token, outboxId, status: accepted | deduplicated }`', schema: acceptedDeliverySchema },
    401: { description: 'Missing, forged or stale signature', schema: bareErrorSchema },
    404: { description: 'Unknown token, ingress switched off, or a workflow that cannot run', schema: bareErrorSchema },
  },
  handler: async (ctx, { params, deps }) => {
    const { outboxId, deduplicated } = await receiveErrtrackerDelivery(ctx.state.em, deps.services.webhooks.errtracker, params.token, {
      ...inboundRequest(ctx),
      rawBody: ctx.request.rawBody ?? '',
    });
    return { status: 202, body: { token: params.token, outboxId, status: deduplicated ? 'deduplicated' : 'accepted' } };
  },
});

export const webhookRoutes = [
  listWebhooksRoute,
  getWebhookRoute,
  createErrtrackerWebhookRoute,
  errtrackerIngressRoute,
  ...invokeWebhookRoutes,
];
