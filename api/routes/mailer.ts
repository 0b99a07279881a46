import { z } from 'zod';
import { routeGroup, type AnyRoute, PUBLIC, SESSION_WRITE, WORKSPACE_ADMIN, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { answerById } from '../http/handlers';
import { requestOrigin } from '../http/urls';
import { pathId, idParams } from '../schemas';
import {
  createdMailerRouteSchema,
  mailerInboundAcceptedSchema,
  mailerMessageListSchema,
  mailerRouteGoogleDwdSchema,
  mailerRouteListSchema,
  mailerRouteWithLinksSchema,
  mailerThreadListSchema,
  mailerThreadWithMessagesSchema,
  pollingGroupListSchema,
  pollingGroupResponseSchema,
  replyReservationSchema,
  replySentSchema,
} from '../schemas/mailer';
import { parseIdempotencyKey } from '../../services/kernel/idempotency';
import { clampLimit } from '../../services/kernel/pagination';
import {
  authorizeRetry,
  createRoute,
  getReservation,
  getThread,
  listMessages,
  listRoutes,
  listThreads,
  loadRoute,
  patchRoute,
  readLimitedBody,
  receiveGenericMail,
  receiveSignedMail,
  routeLinks,
  routeView,
  sendReply,
  upsertPollingGroup,
  listPollingGroups,
  getPollingGroup,
  patchPollingGroup,
  POLLING_INTERVAL,
  setGoogleDwd,
} from '../../services/mailer';

const TAG = ['Mailer'];
/** Mailer routes under `pathPrefix` (the v1 API, or the session's inbound twin); writes declare their role. */
const mailerGroup = (pathPrefix: string) => routeGroup({ tags: TAG, family: 'bare', access: WORKSPACE_READ, pathPrefix });
const mailerRoute = mailerGroup('/api/v1/mailer');
/** Signed inbound mail: no credential, the signature is checked by the handler. */
const signedMailRoute = routeGroup({ tags: TAG, family: 'bare', access: PUBLIC, pathPrefix: '/api/v1/mailer/inbound' });
const notFoundResponse = (what: string) => ({ 404: `${what} not found (also for another workspace's id)` });
const LIST_BOUNDS = { default: 50, min: 1, max: 100 };
const listQuery = z.object({ cursor: z.string().max(500).optional(), limit: z.string().max(10).optional() });

export const listMailerRoutesRoute = mailerRoute({
  method: 'get',
  path: '/routes',
  operationId: 'listMailerRoutes',
  summary: 'Inbound routes of the workspace and their links',
  responses: { 200: { description: '`{ routes, links }`', schema: mailerRouteListSchema } },
  handler: async (ctx, { principal }) => {
    const rows = await listRoutes(ctx.state.em, principal);
    const routes = await Promise.all(rows.map((r) => routeView(ctx.state.em, r)));
    return { status: 200, body: { routes, links: rows.map((r) => routeLinks(requestOrigin(ctx), r.id)) } };
  },
});

export const createMailerRouteRoute = mailerRoute({
  method: 'post',
  path: '/routes',
  operationId: 'createMailerRoute',
  summary: 'Create an inbound route (Idempotency-Key required); the signingSecret is shown once',
  access: WORKSPACE_WRITE,
  idempotency: 'required',
  body: z
    .object({
      address: z.string().max(400),
      workflowId: z.string().min(1).max(200),
      executionTargetId: z.string().min(1).max(200).optional(),
      description: z.string().max(2000).optional(),
      enabled: z.boolean().optional(),
    })
    .strict(),
  responses: {
    201: { description: '`{ route, signingSecret, links }`', schema: createdMailerRouteSchema },
    ...notFoundResponse('Workflow or destination'),
    409: 'Duplicate address within the destination, or Idempotency-Key reused with another body',
  },
  handler: async (ctx, { principal, body }) => {
    const { route, signingSecret } = await createRoute(ctx.state.em, ctx.deps.config.secretKey, principal, body);
    return {
      status: 201,
      body: { route: await routeView(ctx.state.em, route), signingSecret, links: routeLinks(requestOrigin(ctx), route.id) },
    };
  },
});

export const getMailerRouteRoute = mailerRoute({
  method: 'get',
  path: '/routes/{id}',
  operationId: 'getMailerRoute',
  summary: 'One route and its links',
  params: idParams,
  responses: {
    200: { description: '`{ route, links }`', schema: mailerRouteWithLinksSchema },
    ...notFoundResponse('Mailer route'),
  },
  handler: async (ctx, { principal, params }) => {
    const row = await loadRoute(ctx.state.em, principal, params.id);
    return { status: 200, body: { route: await routeView(ctx.state.em, row), links: routeLinks(requestOrigin(ctx), row.id) } };
  },
});

export const patchMailerRouteRoute = mailerRoute({
  method: 'patch',
  path: '/routes/{id}',
  operationId: 'patchMailerRoute',
  summary: 'Update enabled, workflowId, description; rotateSigningSecret (Idempotency-Key required) returns a new signingSecret once',
  access: WORKSPACE_WRITE,
  idempotency: 'optional',
  params: idParams,
  body: z
    .object({
      enabled: z.boolean().optional(),
      workflowId: z.string().min(1).max(200).optional(),
      description: z.string().max(2000).nullable().optional(),
      rotateSigningSecret: z.boolean().optional(),
    })
    .strict(),
  responses: {
    200: { description: '`{ route, links }`, plus `signingSecret` after a rotation', schema: mailerRouteWithLinksSchema },
    ...notFoundResponse('Mailer route'),
    409: 'Target-bound routes cannot change workflow; duplicate address',
  },
  handler: async (ctx, { principal, params, body }) => {
    if (body.rotateSigningSecret) parseIdempotencyKey(ctx.get('idempotency-key') || undefined, true);
    const { route, signingSecret } = await patchRoute(ctx.state.em, ctx.deps.config.secretKey, principal, params.id, body);
    return {
      status: 200,
      body: {
        route: await routeView(ctx.state.em, route),
        links: routeLinks(requestOrigin(ctx), route.id),
        ...(signingSecret ? { signingSecret } : {}),
      },
    };
  },
});

export const patchGoogleDwdRoute = mailerRoute({
  method: 'patch',
  path: '/routes/{id}/google-dwd',
  operationId: 'setMailerRouteGoogleDwd',
  summary:
    'Bind the route to a Google Workspace mailbox through domain-wide delegation (`{ serviceAccountCredentialId, subject }`), or clear it (`{ serviceAccountCredentialId: null }`) (Admin or Owner)',
  access: WORKSPACE_ADMIN,
  idempotency: 'optional',
  params: idParams,
  body: z
    .object({
      serviceAccountCredentialId: z.string().min(1).max(200).nullable(),
      subject: z.string().max(400).nullable().optional(),
    })
    .strict(),
  responses: {
    200: {
      description: '`{ route, googleDwd, links }`; googleDwd is null once cleared. Its id is the googleDwdConfigId of polling groups.',
      schema: mailerRouteGoogleDwdSchema,
    },
    ...notFoundResponse('Mailer route or credential'),
  },
  handler: async (ctx, { principal, params, body }) => {
    const { route, googleDwd } = await setGoogleDwd(ctx.state.em, principal, params.id, body);
    return {
      status: 200,
      body: { route: await routeView(ctx.state.em, route), googleDwd, links: routeLinks(requestOrigin(ctx), route.id) },
    };
  },
});

const genericInboundBody = z
  .object({
    to: z.string().min(1).max(400),
    from: z.string().min(1).max(500),
    subject: z.string().max(2000),
    text: z
      .string()
      .max(1024 * 1024)
      .optional(),
  })
  .strict();

const genericInbound = (pathPrefix: string, operationId: string, access: AnyRoute['access']) =>
  mailerGroup(pathPrefix)({
    method: 'post',
    path: '/inbound',
    operationId,
    summary: 'Generic inbound mail to a Production route by address; an Idempotency-Key header deduplicates a repeated delivery',
    access,
    body: genericInboundBody,
    responses: {
      202: { description: '`{ route, message, run: null, outbox, deduplicated }`', schema: mailerInboundAcceptedSchema },
      404: 'No enabled route has this address',
    },
    handler: async (ctx, { principal, body }) => {
      const deliveryId = parseIdempotencyKey(ctx.get('idempotency-key') || undefined, false) ?? undefined;
      const { route, accepted } = await receiveGenericMail(ctx.state.em, principal!, { ...body, deliveryId });
      return {
        status: 202,
        body: {
          route: await routeView(ctx.state.em, route),
          message: accepted.message,
          run: null,
          outbox: accepted.outbox,
          deduplicated: accepted.deduplicated,
        },
      };
    },
  });

export const signedInboundRoute = signedMailRoute({
  method: 'post',
  path: '/{routeId}',
  operationId: 'signedMailerInbound',
  summary: "Signed inbound mail (no bearer): `x-svc-timestamp` and `x-svc-signature: v1=<hex HMAC-SHA256 of timestamp + '.' + raw body>`",
  params: z.object({ routeId: pathId }),
  rawBody: {
    contentType: 'application/json',
    description: 'externalMessageId, from, subject; optional text, html, externalThreadId, to, raw (MIME); at most 1 MiB',
  },
  responses: {
    202: { description: '`{ route, message, run: null, outbox, deduplicated: false }`', schema: mailerInboundAcceptedSchema },
    400: 'Missing body fields, or `to` differs from the route address',
    401: 'Missing, forged or stale signature',
    404: 'Unknown or disabled route',
    409: 'Replayed or in-progress message id, or signing not configured',
    413: 'Body over 1 MiB',
  },
  handler: async (ctx, { params }) => {
    const contentLength = ctx.get('content-length') || undefined;
    const raw = await readLimitedBody(ctx.req, contentLength);
    const { route, accepted } = await receiveSignedMail(
      ctx.state.em,
      ctx.deps.config.secretKey,
      params.routeId,
      raw,
      ctx.headers,
      ctx.deps.services.files,
    );
    return {
      status: 202,
      body: {
        route: await routeView(ctx.state.em, route),
        message: accepted.message,
        run: null,
        outbox: accepted.outbox,
        deduplicated: accepted.deduplicated,
      },
    };
  },
});

export const listThreadsRoute = mailerRoute({
  method: 'get',
  path: '/threads',
  operationId: 'listMailerThreads',
  summary: 'Threads, newest first (cursor, limit 1 to 100, default 50)',
  query: listQuery,
  responses: { 200: { description: '`{ threads, nextCursor }`', schema: mailerThreadListSchema } },
  handler: async (ctx, { principal, query }) => ({
    status: 200,
    body: await listThreads(ctx.state.em, principal, { cursor: query.cursor, limit: clampLimit(query.limit, LIST_BOUNDS) }),
  }),
});

export const getThreadRoute = mailerRoute({
  method: 'get',
  path: '/threads/{id}',
  operationId: 'getMailerThread',
  summary: 'A thread and up to 100 of its messages, oldest first',
  params: idParams,
  responses: {
    200: { description: '`{ thread, messages }`', schema: mailerThreadWithMessagesSchema },
    ...notFoundResponse('Mailer thread'),
  },
  handler: async (ctx, { principal, params }) => ({ status: 200, body: await getThread(ctx.state.em, principal, params.id) }),
});

export const listMessagesRoute = mailerRoute({
  method: 'get',
  path: '/messages',
  operationId: 'listMailerMessages',
  summary: 'Messages, newest first (threadId, cursor, limit 1 to 100, default 50)',
  query: listQuery.extend({ threadId: z.string().max(200).optional() }),
  responses: { 200: { description: '`{ messages, nextCursor }`', schema: mailerMessageListSchema } },
  handler: async (ctx, { principal, query }) => ({
    status: 200,
    body: await listMessages(ctx.state.em, principal, {
      threadId: query.threadId,
      cursor: query.cursor,
      limit: clampLimit(query.limit, LIST_BOUNDS),
    }),
  }),
});

export const replyRoute = mailerRoute({
  method: 'post',
  path: '/messages/{id}/reply',
  operationId: 'replyToMailerMessage',
  summary: 'Reply (Idempotency-Key required): 201 on first send, 200 `deduplicated: true` on replay',
  access: WORKSPACE_WRITE,
  params: idParams,
  body: z
    .object({
      text: z
        .string()
        .max(1024 * 1024)
        .optional(),
      html: z
        .string()
        .max(1024 * 1024)
        .optional(),
      attachmentFileIds: z.array(z.string().max(200)).max(20).optional(),
    })
    .strict()
    .refine((b) => b.text !== undefined || b.html !== undefined, { message: 'text or html is required' }),
  responses: {
    201: { description: '`{ reply, reservation, deduplicated: false }`', schema: replySentSchema },
    200: { description: '`{ reply, reservation, deduplicated: true }`', schema: replySentSchema },
    400: 'Missing Idempotency-Key or bad body',
    ...notFoundResponse('Mailer message or attachment file'),
    423: 'An attachment file is not ready',
    409: '`SETUP_REQUIRED` without a usable mail credential (also when the outbound guard refuses its host: nothing is reserved); reservation conflicts with code, reservationId, reconciliable',
    503: '`reply_outcome_unknown`: the provider did not confirm; reservationId, reconciliable. `mail_server_unreachable`: its host did not resolve, nothing reserved',
  },
  handler: async (ctx, { principal, params, body, deps }) => {
    const key = parseIdempotencyKey(ctx.get('idempotency-key') || undefined, true)!;
    const outcome = await sendReply(ctx.state.em, deps.services.mailer.replies, principal, params.id, key, body);
    return { status: outcome.status, body: { reply: outcome.reply, reservation: outcome.reservation, deduplicated: outcome.deduplicated } };
  },
});

/** What the get and the patch of a reply reservation share: its path, role and answers. */
const oneReservation = {
  path: '/reply-reservations/{id}',
  access: WORKSPACE_ADMIN,
  params: idParams,
  responses: {
    200: { description: '`{ reservation }`', schema: z.strictObject({ reservation: replyReservationSchema }) },
    ...notFoundResponse('Reply reservation'),
  },
};

export const getReservationRoute = mailerRoute({
  ...oneReservation,
  method: 'get',
  operationId: 'getReplyReservation',
  summary: 'A reply reservation (Admin or Owner)',
  handler: answerById('reservation', getReservation),
});

export const patchReservationRoute = mailerRoute({
  ...oneReservation,
  method: 'patch',
  operationId: 'authorizeReplyRetry',
  summary: '`{ action: authorize_retry }` (Admin or Owner): a reconciliable reservation may be sent once more',
  body: z.object({ action: z.literal('authorize_retry', { error: 'action must be authorize_retry' }) }).strict(),
  responses: { ...oneReservation.responses, 409: 'The reservation is not reconciliable' },
  handler: async (ctx, { principal, params }) => ({
    status: 200,
    body: { reservation: await authorizeRetry(ctx.state.em, principal, params.id) },
  }),
});

const interval = z.number().int().min(POLLING_INTERVAL.min).max(POLLING_INTERVAL.max);

export const listPollingGroupsRoute = mailerRoute({
  method: 'get',
  path: '/polling-groups',
  operationId: 'listMailerPollingGroups',
  summary: 'Polling groups of the workspace',
  responses: { 200: { description: '`{ pollingGroups }`', schema: pollingGroupListSchema } },
  handler: async (ctx, { principal }) => ({ status: 200, body: { pollingGroups: await listPollingGroups(ctx.state.em, principal) } }),
});

export const upsertPollingGroupRoute = mailerRoute({
  method: 'post',
  path: '/polling-groups',
  operationId: 'upsertMailerPollingGroup',
  summary:
    'Create a polling group, or update the one with the same identity (workspace, provider, credential, principal, delegation config)',
  access: WORKSPACE_WRITE,
  body: z
    .object({
      provider: z.enum(['mailA', 'mailB'], { error: 'provider must be mailA or mailB' }),
      credentialId: z.string().min(1).max(200).optional(),
      googleDwdConfigId: z.string().min(1).max(200).optional(),
      intervalSeconds: interval.optional(),
      enabled: z.boolean().optional(),
    })
    .strict(),
  responses: {
    201: { description: '`{ pollingGroup }` created', schema: pollingGroupResponseSchema },
    200: { description: '`{ pollingGroup }` of the same identity, updated', schema: pollingGroupResponseSchema },
    ...notFoundResponse('Credential or delegation configuration'),
  },
  handler: async (ctx, { principal, body }) => {
    const { group, created } = await upsertPollingGroup(ctx.state.em, principal, body);
    return { status: created ? 201 : 200, body: { pollingGroup: group } };
  },
});

/** What the get and the patch of a polling group share: its path and answers. */
const onePollingGroup = {
  path: '/polling-groups/{id}',
  params: idParams,
  responses: {
    200: { description: '`{ pollingGroup }`', schema: pollingGroupResponseSchema },
    ...notFoundResponse('Polling group'),
  },
};

export const getPollingGroupRoute = mailerRoute({
  ...onePollingGroup,
  method: 'get',
  operationId: 'getMailerPollingGroup',
  summary: 'One polling group',
  handler: answerById('pollingGroup', getPollingGroup),
});

export const patchPollingGroupRoute = mailerRoute({
  ...onePollingGroup,
  method: 'patch',
  operationId: 'patchMailerPollingGroup',
  summary: 'Update intervalSeconds (60 to 86400) or enabled',
  access: WORKSPACE_WRITE,
  body: z.object({ intervalSeconds: interval.optional(), enabled: z.boolean().optional() }).strict(),
  handler: async (ctx, { principal, params, body }) => ({
    status: 200,
    body: { pollingGroup: await patchPollingGroup(ctx.state.em, principal, params.id, body) },
  }),
});

export const mailerRoutes: AnyRoute[] = [
  listPollingGroupsRoute,
  upsertPollingGroupRoute,
  getPollingGroupRoute,
  patchPollingGroupRoute,
  listMailerRoutesRoute,
  createMailerRouteRoute,
  getMailerRouteRoute,
  patchMailerRouteRoute,
  patchGoogleDwdRoute,
  genericInbound('/api/v1/mailer', 'genericMailerInbound', WORKSPACE_WRITE),
  // Starts runs: the same write role as the v1 route (a viewer's session once could).
  genericInbound('/api/mailer', 'genericMailerInboundSession', SESSION_WRITE),
  signedInboundRoute,
  listThreadsRoute,
  getThreadRoute,
  listMessagesRoute,
  replyRoute,
  getReservationRoute,
  patchReservationRoute,
];
