import { z } from 'zod';
import { defineRoute } from '../http/route';
import { bareAuthErrors, bareErrorSchema, pathId } from '../schemas';
import {
  bootstrapReportSchema,
  credentialEnvelopeSchema,
  credentialListSchema,
  credentialTestSchema,
  workflowCredentialTestSchema,
} from '../schemas/credentials';
import {
  bootstrapWorkflowCredentials,
  createCredential,
  deleteCredential,
  listCredentials,
  testCredential,
  testWorkflowCredentials,
  updateCredential,
} from '../../services/credentials';

const idParams = z.object({ id: pathId });
const notFound = { 404: { description: 'Credential not found (also for other workspaces’ ids)', schema: bareErrorSchema } };
const workflowErrors = {
  403: { description: 'Wrong key scope, or `API key cannot access this workflow`', schema: bareErrorSchema },
  404: { description: 'Workflow not found', schema: bareErrorSchema },
};

const name = z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(200, 'name must be at most 200 characters');
const type = z.string({ error: 'type is required' }).trim().min(1, 'type is required').max(100, 'type must be at most 100 characters');
const value = z
  .union([z.string(), z.record(z.string(), z.unknown())], { error: 'value must be a string (the secret) or an object for the type' })
  .describe('The secret: an object whose fields depend on the type (see the README), or a string for types with one secret');
const envVar = z.string().min(1).max(200).describe('An allowed deployment variable (CREDENTIAL_ENV_ALLOWLIST) to copy the value from');
const allowedHosts = z
  .array(z.string().max(300), { error: 'allowedHosts must be an array of host names' })
  .max(50, 'allowedHosts must have at most 50 hosts')
  .describe(
    'Hosts the credential may be sent to besides those its value and provider imply: `api.example.com`, `api.example.com:8443` or `*.example.com`. Changing them needs `value` (or `envVar`) in the same request',
  );

export const listCredentialsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/credentials',
  operationId: 'listCredentials',
  summary: 'Credentials of the workspace with masked values (never the secret)',
  tags: ['Credentials'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'read' },
  responses: { 200: { description: '`{ credentials }`', schema: credentialListSchema }, ...bareAuthErrors },
  handler: async (ctx, { principal, deps }) => ({
    status: 200,
    body: { credentials: await listCredentials(ctx.state.em, principal, deps.services.credentials.crud) },
  }),
});

export const createCredentialRoute = defineRoute({
  method: 'post',
  path: '/api/v1/credentials',
  operationId: 'createCredential',
  summary: 'Create a credential; a name the workspace already has (case-insensitive) updates that credential',
  tags: ['Credentials'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  body: z.strictObject({ name, type, value: value.optional(), envVar: envVar.optional(), allowedHosts: allowedHosts.optional() }),
  responses: { 201: { description: '`{ credential }`', schema: credentialEnvelopeSchema }, ...bareAuthErrors },
  handler: async (ctx, { principal, body, deps }) => {
    const { credential } = await createCredential(ctx.state.em, principal, deps.services.credentials.crud, body);
    return { status: 201, body: { credential } };
  },
});

export const updateCredentialRoute = defineRoute({
  method: 'patch',
  path: '/api/v1/credentials/{id}',
  operationId: 'updateCredential',
  summary: 'Rename, retype or replace the value; omitting `value` keeps the secret, and a new type or new allowedHosts need `value`',
  tags: ['Credentials'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: idParams,
  body: z.strictObject({
    name: name.optional(),
    type: type.optional(),
    value: value.optional(),
    envVar: envVar.optional(),
    allowedHosts: allowedHosts.optional(),
  }),
  responses: {
    200: { description: '`{ credential }`', schema: credentialEnvelopeSchema },
    ...bareAuthErrors,
    ...notFound,
    409: { description: 'Another credential of the workspace has that name', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, params, body, deps }) => ({
    status: 200,
    body: { credential: await updateCredential(ctx.state.em, principal, deps.services.credentials.crud, params.id, body) },
  }),
});

export const deleteCredentialRoute = defineRoute({
  method: 'delete',
  path: '/api/v1/credentials/{id}',
  operationId: 'deleteCredential',
  summary: 'Delete a credential',
  tags: ['Credentials'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: idParams,
  responses: { 200: { description: 'Deleted', schema: z.strictObject({ deleted: z.literal(true) }) }, ...bareAuthErrors, ...notFound },
  handler: async (ctx, { principal, params }) => {
    await deleteCredential(ctx.state.em, principal, params.id);
    return { status: 200, body: { deleted: true } };
  },
});

export const testCredentialRoute = defineRoute({
  method: 'post',
  path: '/api/v1/credentials/{id}/test',
  operationId: 'testCredential',
  summary: 'Live connection check with the stored credential (any valid key of the workspace)',
  tags: ['Credentials'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read', roles: 'read' },
  params: idParams,
  responses: {
    200: { description: '`{ result: { ok, status, message, checkedAt, latencyMs } }`', schema: credentialTestSchema },
    ...bareAuthErrors,
    ...notFound,
  },
  handler: async (ctx, { principal, params, deps }) => ({
    status: 200,
    body: { result: await testCredential(ctx.state.em, principal, deps.services.credentials.tests, params.id) },
  }),
});

export const testWorkflowCredentialsRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/credentials/test',
  operationId: 'testWorkflowCredentials',
  summary: "Tests every credential the workflow's nodes name (draft and active version)",
  tags: ['Credentials', 'Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read', roles: 'read' },
  params: idParams,
  responses: {
    200: {
      description: '`{ workflowId, ok, credentials: [{ reference, nodeIds, credential, result }] }`',
      schema: workflowCredentialTestSchema,
    },
    ...bareAuthErrors,
    ...workflowErrors,
  },
  handler: async (ctx, { principal, params, deps }) => ({
    status: 200,
    body: await testWorkflowCredentials(ctx.state.em, principal, deps.services.credentials.tests, params.id),
  }),
});

export const bootstrapWorkflowCredentialsRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/credentials/bootstrap-from-env',
  operationId: 'bootstrapWorkflowCredentials',
  summary:
    'Creates the credentials the workflow names but the workspace lacks, from allowed deployment variables; reports counts, never values',
  tags: ['Credentials', 'Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: idParams,
  responses: {
    200: { description: '`{ bootstrap: { workflowId, created, skipped, credentials } }`', schema: bootstrapReportSchema },
    ...bareAuthErrors,
    ...workflowErrors,
  },
  handler: async (ctx, { principal, params, deps }) => ({
    status: 200,
    body: { bootstrap: await bootstrapWorkflowCredentials(ctx.state.em, principal, deps.services.credentials.crud, params.id) },
  }),
});

export const credentialRoutes = [
  listCredentialsRoute,
  createCredentialRoute,
  updateCredentialRoute,
  deleteCredentialRoute,
  testCredentialRoute,
  testWorkflowCredentialsRoute,
  bootstrapWorkflowCredentialsRoute,
];
