import { z } from 'zod';
import { defineRoute, type HttpMethod } from '../http/route';
import { requestOrigin } from '../http/urls';
import { bareAuthErrors, bareErrorSchema } from '../schemas';
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
import { RunSchema, WebhookOutboxSchema } from '../../db/entities';
import { invalidInput, notFound, unavailable } from '../../services/errors';
import { loadRunViews } from '../../services/runs';
import {
  acceptIntoOutbox,
  createErrtrackerWebhook,
  errtrackerDeliveryId,
  verifyErrtrackerSignature,
  createWebhookRun,
  deliveryId,
  listWebhooks,
  loadWebhook,
  outboxRunId,
  resolveWebhookToken,
  webhookPayload,
  webhookView,
} from '../../services/webhooks';


export function secretKeyOf(ctx: AppContext): string {
  const key = ctx.deps.config.secretKey;
  if (!key) throw unavailable('Webhooks are unavailable: SECRET_KEY is not configured.');
  return key;
}

export const listWebhooksRoute = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks',
  operationId: 'listWebhooks',
  summary: 'Webhooks of the workspace with their invoke links; `?workflowId=` narrows to one workflow',
  tags: ['Webhooks'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace' },
  query: z.object({ workflowId: z.string().min(1).optional() }),
  responses: { 200: { description: '`{ webhooks, links }`', schema: webhookListSchema }, ...bareAuthErrors },
  handler: async (ctx, { principal, query }) => {
    const webhooks = (await listWebhooks(ctx.state.em, principal, query.workflowId)).map((w) => webhookView(w, requestOrigin(ctx), secretKeyOf(ctx)));
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
  access: { kind: 'apiKey', scopes: 'workspace' },
  params: z.object({ id: z.string().min(1).max(100) }),
  responses: {
    200: { description: '`{ webhook, links }`', schema: webhookWithLinksSchema },
    ...bareAuthErrors,
    403: { description: '`API key cannot access this webhook`', schema: bareErrorSchema },
    404: { description: 'Webhook not found', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, params }) => {
    const webhook = webhookView(await loadWebhook(ctx.state.em, principal, params.id), requestOrigin(ctx), secretKeyOf(ctx));
    return { status: 200, body: { webhook, links: webhook.links } };
  },
});

/**
 * The public invocation: no bearer, every verb. Without a Response node the request goes to
 * the durable outbox (202 accepted); with one the caller waits, within the synchronous budget,
 * for that node's reply, started with an update-with-start so no polling is involved.
 */
async function invoke(ctx: AppContext, token: string) {
  const em = ctx.state.em;
  const resolved = await resolveWebhookToken(em, token);
  const payload = webhookPayload({ method: ctx.method, query: ctx.query, headers: ctx.headers, body: ctx.request.body });
  const { outboxId, deduplicated } = await acceptIntoOutbox(em, resolved, payload, deliveryId(resolved.webhook, ctx.headers));
  const accepted = { status: 202, body: { token, outboxId, status: deduplicated ? 'deduplicated' : 'accepted' } };
  const replies = resolved.version.nodes.some((n) => n.type === 'response' && !n.disabled);
  if (deduplicated || !replies) return accepted;

  const run = await createWebhookRun(em, { runId: outboxRunId(outboxId), workflow: resolved.workflow, version: resolved.version, input: payload });
  let reply;
  try {
    reply = await ctx.deps.runLauncher.startWithReply(run, { nodes: resolved.version.nodes, edges: resolved.version.edges }, ctx.deps.config.webhookSyncBudgetMs);
  } catch (err) {
    // Temporal unavailable: the entry stays pending and the dispatcher starts it later.
    ctx.state.log.warn({ err, outboxId }, 'synchronous webhook start failed; left in the outbox');
    return accepted;
  }
  await em.nativeUpdate(WebhookOutboxSchema, { id: outboxId, status: 'pending' }, { status: 'dispatched', dispatchedAt: new Date() });
  switch (reply.kind) {
    case 'response':
      return { status: reply.status, body: reply.body, headers: reply.headers };
    case 'waiting':
      return { status: 202, body: { runId: run.id, status: 'waiting' } };
    case 'timeout':
      return { status: 202, body: { status: 'processing' } };
    default: {
      // The run ended without reaching a Response node: answer with the run itself.
      const fork = em.fork();
      const [view] = await loadRunViews(fork, [await fork.findOneOrFail(RunSchema, { id: run.id })], { origin: requestOrigin(ctx) });
      return { status: 200, body: { token, run: view } };
    }
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
    params: z.object({ token: z.string().min(1).max(200) }),
    responses: {
      202: { description: '`{ token, outboxId, status: accepted | deduplicated }`, `{ runId, status: waiting }`, `{ status: processing }`, or a Response node reply with status 202', schema: invokeAcceptedSchema },
      200: { description: "`{ token, run }` when the run ended without reaching its Response node, or the Response node's reply", schema: invokeRunEndedSchema },
      default: { description: "The Response node's reply: the status, headers and body the workflow set", schema: responseNodeReplySchema },
      404: { description: 'Unknown or disabled token, or a workflow that cannot run', schema: bareErrorSchema },
      413: { description: 'Body too large', schema: bareErrorSchema },
    },
    handler: async (ctx, { params }) => invoke(ctx, params.token),
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
  .refine((b) => (b.credentialId === undefined) !== (b.signingSecret === undefined), { message: 'Send exactly one of credentialId or signingSecret.' });

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
    if (body.executionTargetId !== undefined) throw invalidInput('Named destinations are not available yet; omit executionTargetId.');
    const { webhook, token } = await createErrtrackerWebhook(ctx.state.em, secretKeyOf(ctx), principal, body);
    const invokeUrl = `${requestOrigin(ctx)}/api/integrations/errtracker/${token}`;
    return { status: 201, body: { webhook: { ...webhookView(webhook, requestOrigin(ctx), secretKeyOf(ctx)), invokeUrl }, invokeUrl } };
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
  params: z.object({ token: z.string().min(1).max(200) }),
  responses: {
    202: { description: '`{ token, outboxId, status: accepted | deduplicated }`', schema: acceptedDeliverySchema },
    401: { description: 'Missing, forged or stale signature', schema: bareErrorSchema },
    404: { description: 'Unknown token, ingress switched off, or a workflow that cannot run', schema: bareErrorSchema },
  },
  handler: async (ctx, { params }) => {
    if (!ctx.deps.config.errtrackerIngressEnabled) throw notFound('Not found');
    const resolved = await resolveWebhookToken(ctx.state.em, params.token, 'errtracker');
    const rawBody = ctx.request.rawBody ?? '';
    verifyErrtrackerSignature(resolved.webhook, secretKeyOf(ctx), rawBody, ctx.headers);
    const payload = webhookPayload({ method: ctx.method, query: ctx.query, headers: ctx.headers, body: ctx.request.body });
    const { outboxId, deduplicated } = await acceptIntoOutbox(ctx.state.em, resolved, payload, errtrackerDeliveryId(rawBody, ctx.headers));
    return { status: 202, body: { token: params.token, outboxId, status: deduplicated ? 'deduplicated' : 'accepted' } };
  },
});

export const webhookRoutes = [listWebhooksRoute, getWebhookRoute, createErrtrackerWebhookRoute, errtrackerIngressRoute, ...invokeWebhookRoutes];
