import { z } from 'zod';
import { defineRoute } from '../http/route';
import { apiKeySchema, bareErrorSchema, pathId } from '../schemas';
import { API_KEY_SCOPES } from '../../engine/statuses';
import { createApiKey, listApiKeys, renameApiKey, revokeApiKey } from '../../services/accounts/apiKeys';
import type { SessionPrincipal } from '../../services/kernel/principal';

const sessionErrors = {
  401: { description: 'Sign-in is required', schema: bareErrorSchema },
  403: { description: 'Admin or Owner role required, or cross-origin', schema: bareErrorSchema },
};

export const listApiKeysRoute = defineRoute({
  method: 'get',
  path: '/api/api-keys',
  operationId: 'listApiKeys',
  summary: "Active keys of the session's workspace (Admin or Owner)",
  tags: ['API keys'],
  family: 'bare',
  access: { kind: 'session', roles: 'admin' },
  responses: { 200: { description: 'Keys, newest first', schema: z.strictObject({ apiKeys: z.array(apiKeySchema) }) }, ...sessionErrors },
  handler: async (ctx, { principal }) => ({
    status: 200,
    body: { apiKeys: await listApiKeys(ctx.state.em, principal as SessionPrincipal) },
  }),
});

const createBody = z
  .object({
    name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(100),
    scope: z.enum(API_KEY_SCOPES, { error: `scope must be one of ${API_KEY_SCOPES.join(', ')}` }).default('workspace'),
    workspaceId: z.string().min(1).optional(),
    organization: z
      .object({
        workspaceSelection: z.enum(['organization', 'selected']),
        workspaceIds: z.array(z.string().min(1)).max(500).optional(),
        permission: z.enum(['read', 'write']),
      })
      .strict()
      .optional(),
    allowedWorkflowIds: z.array(z.string().min(1)).min(1).max(500).optional(),
  })
  .strict();

export const createApiKeyRoute = defineRoute({
  method: 'post',
  path: '/api/api-keys',
  operationId: 'createApiKey',
  summary: 'Create a key (Admin or Owner); the token is shown once',
  tags: ['API keys'],
  family: 'bare',
  access: { kind: 'session', roles: 'admin' },
  body: createBody,
  responses: {
    201: {
      description: 'Created; store the token now, it is never shown again',
      schema: z.strictObject({ apiKey: apiKeySchema, token: z.string() }),
    },
    400: { description: 'Invalid body, unknown scope or duplicate name in the scope', schema: bareErrorSchema },
    ...sessionErrors,
  },
  handler: async (ctx, { principal, body, deps }) => ({
    status: 201,
    body: await createApiKey(ctx.state.em, principal as SessionPrincipal, body, deps.services.apiKeys),
  }),
});

export const revokeApiKeyRoute = defineRoute({
  method: 'delete',
  path: '/api/api-keys/{id}',
  operationId: 'revokeApiKey',
  summary: 'Revoke a key at once (Admin or Owner); audited as api_key.revoke',
  tags: ['API keys'],
  family: 'bare',
  access: { kind: 'session', roles: 'admin' },
  params: z.object({ id: pathId }),
  responses: {
    200: { description: 'Revoked', schema: z.strictObject({ deleted: z.literal(true), apiKey: apiKeySchema }) },
    ...sessionErrors,
    404: { description: 'No such active key in this workspace', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, params }) => ({
    status: 200,
    body: { deleted: true, apiKey: await revokeApiKey(ctx.state.em, principal as SessionPrincipal, params.id) },
  }),
});

export const renameApiKeyRoute = defineRoute({
  method: 'patch',
  path: '/api/api-keys/{id}',
  operationId: 'renameApiKey',
  summary: "Rename a key (Admin or Owner; the organization keys of this workspace's organization too); nothing else changes",
  tags: ['API keys'],
  family: 'bare',
  access: { kind: 'session', roles: 'admin' },
  params: z.object({ id: pathId }),
  body: z.object({ name: z.string().max(200) }).strict(),
  responses: {
    200: { description: 'Renamed', schema: z.strictObject({ apiKey: apiKeySchema }) },
    ...sessionErrors,
    404: { description: 'No such active key in this workspace', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, params, body }) => ({
    status: 200,
    body: { apiKey: await renameApiKey(ctx.state.em, principal as SessionPrincipal, params.id, body.name) },
  }),
});

export const apiKeyRoutes = [listApiKeysRoute, createApiKeyRoute, revokeApiKeyRoute, renameApiKeyRoute];
