import { z } from 'zod';
import { routeGroup, SESSION_ADMIN } from '../http/route';
import { apiKeySchema, sessionAdminErrors, idParams } from '../schemas';
import { API_KEY_SCOPES } from '../../engine/statuses';
import { createApiKey, listApiKeys, renameApiKey, revokeApiKey } from '../../services/accounts/apiKeys';
import type { SessionPrincipal } from '../../services/kernel/principal';

const apiKeyRoute = routeGroup({
  tags: ['API keys'],
  family: 'bare',
  access: SESSION_ADMIN,
  errors: sessionAdminErrors,
  pathPrefix: '/api/api-keys',
});

export const listApiKeysRoute = apiKeyRoute({
  method: 'get',
  path: '',
  operationId: 'listApiKeys',
  summary: "Active keys of the session's workspace (Admin or Owner)",
  responses: { 200: { description: 'Keys, newest first', schema: z.strictObject({ apiKeys: z.array(apiKeySchema) }) } },
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

export const createApiKeyRoute = apiKeyRoute({
  method: 'post',
  path: '',
  operationId: 'createApiKey',
  summary: 'Create a key (Admin or Owner); the token is shown once',
  body: createBody,
  responses: {
    201: {
      description: 'Created; store the token now, it is never shown again',
      schema: z.strictObject({ apiKey: apiKeySchema, token: z.string() }),
    },
    400: 'Invalid body, unknown scope or duplicate name in the scope',
  },
  handler: async (ctx, { principal, body, deps }) => ({
    status: 201,
    body: await createApiKey(ctx.state.em, principal as SessionPrincipal, body, deps.services.apiKeys),
  }),
});

export const revokeApiKeyRoute = apiKeyRoute({
  method: 'delete',
  path: '/{id}',
  operationId: 'revokeApiKey',
  summary: 'Revoke a key at once (Admin or Owner); audited as api_key.revoke',
  params: idParams,
  responses: {
    200: { description: 'Revoked', schema: z.strictObject({ deleted: z.literal(true), apiKey: apiKeySchema }) },
    404: 'No such active key in this workspace',
  },
  handler: async (ctx, { principal, params }) => ({
    status: 200,
    body: { deleted: true, apiKey: await revokeApiKey(ctx.state.em, principal as SessionPrincipal, params.id) },
  }),
});

export const renameApiKeyRoute = apiKeyRoute({
  method: 'patch',
  path: '/{id}',
  operationId: 'renameApiKey',
  summary: "Rename a key (Admin or Owner; the organization keys of this workspace's organization too); nothing else changes",
  params: idParams,
  body: z.object({ name: z.string().max(200) }).strict(),
  responses: {
    200: { description: 'Renamed', schema: z.strictObject({ apiKey: apiKeySchema }) },
    404: 'No such active key in this workspace',
  },
  handler: async (ctx, { principal, params, body }) => ({
    status: 200,
    body: { apiKey: await renameApiKey(ctx.state.em, principal as SessionPrincipal, params.id, body.name) },
  }),
});

export const apiKeyRoutes = [listApiKeysRoute, createApiKeyRoute, revokeApiKeyRoute, renameApiKeyRoute];
