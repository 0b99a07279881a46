import { z } from 'zod';
import { routeGroup, type HttpMethod, type RouteResult, PUBLIC, WORKSPACE_READ } from '../http/route';
import { requestOrigin } from '../http/urls';
import { errtrackerInvokeUrl, webhookWithLinks } from '../http/links';
import { pathId, idParams } from '../schemas';
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

/** The workspace's webhooks, managed with a workspace key. */
const webhookRoute = routeGroup({ tags: ['Webhooks'], family: 'bare', access: WORKSPACE_READ, pathPrefix: '/api/v1/webhooks' });
/** Inbound calls: the token in the path (and a signature where the webhook has one) is the credential. */
const inboundRoute = routeGroup({ tags: ['Webhooks'], family: 'bare', access: PUBLIC });

export const listWebhooksRoute = webhookRoute({
  method: 'get',
  path: '',
  operationId: 'listWebhooks',
  summary: 'Webhooks of the workspace with their invoke links; `?workflowId=` narrows to one workflow',
  query: z.object({ workflowId: z.string().min(1).optional() }),
  responses: { 200: { description: '`{ webhooks, links }`', schema: webhookListSchema } },
  handler: async (ctx, { principal, query }) => {
    const webhooks = (await listWebhooks(ctx.state.em, principal, ctx.deps.config.secretKey, query.workflowId)).map((w) =>
      webhookWithLinks(requestOrigin(ctx), w),
    );
    return { status: 200, body: { webhooks, links: webhooks.map((w) => w.links) } };
  },
});

export const getWebhookRoute = webhookRoute({
  method: 'get',
  path: '/{id}',
  operationId: 'getWebhook',
  summary: 'One webhook with its invoke link',
  params: idParams,
  responses: {
    200: { description: '`{ webhook, links }`', schema: webhookWithLinksSchema },
    403: '`API key cannot access this webhook`',
    404: 'Webhook not found',
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
    case 'method_not_allowed': {
      const allow = outcome.allow.join(', ');
      return { status: 405, body: { error: `This webhook accepts ${allow} only.` }, headers: { Allow: allow } };
    }
  }
}

const INVOKE_METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

export const invokeWebhookRoutes = INVOKE_METHODS.map((method) =>
  inboundRoute({
    method,
    path: '/api/webhooks/{token}',
    operationId: `invokeWebhook_${method}`,
    summary: 'Invoke a webhook (no bearer; the token is the capability)',
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
      404: 'Unknown or disabled token, or a workflow that cannot run',
      405: "A method the webhook's trigger does not declare (`Allow` names the declared one); no run is created",
      413: 'Body too large',
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

export const createErrtrackerWebhookRoute = webhookRoute({
  method: 'post',
  path: '',
  operationId: 'createErrtrackerWebhook',
  summary: 'Prepare a signed error-tracker endpoint (Admin or Owner); the invokeUrl is shown once',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'admin' },
  body: errtrackerBody,
  responses: {
    201: { description: '`{ webhook, invokeUrl }`; the invokeUrl is shown once', schema: createdErrtrackerWebhookSchema },
    404: 'Workflow not found',
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

export const errtrackerIngressRoute = inboundRoute({
  method: 'post',
  path: '/api/integrations/errtracker/{token}',
  operationId: 'errtrackerIngress',
  summary: 'Error-tracker deliveries (HMAC-signed, no bearer); off unless ERRTRACKER_INGRESS_ENABLED',
  params: z.object({ token: pathId }),
  responses: {
    202: { description: '`{ token, outboxId, status: accepted | deduplicated }`', schema: acceptedDeliverySchema },
    401: 'Missing, forged or stale signature',
    404: 'Unknown token, ingress switched off, or a workflow that cannot run',
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
