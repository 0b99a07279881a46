import { z } from 'zod';
import { routeGroup, ANY_KEY_WRITE, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { bareAuthErrors, idParams } from '../schemas';
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

/**
 * Connection tests send the stored secret to its service: any valid key of the workspace (the
 * contract), but only with the write role, like every other route that makes a credential leave
 * the service (docs/api/credentials.md).
 */
const credentialRoute = routeGroup({ tags: ['Credentials'], family: 'bare', access: WORKSPACE_READ, pathPrefix: '/api/v1/credentials' });
/** The credentials a workflow's nodes name. */
const workflowCredentialRoute = routeGroup({
  tags: ['Credentials', 'Workflows'],
  family: 'bare',
  access: WORKSPACE_WRITE,
  errors: {
    ...bareAuthErrors,
    403: 'Wrong key scope, or `API key cannot access this workflow`',
    404: 'Workflow not found',
  },
  pathPrefix: '/api/v1/workflows/{id}/credentials',
});
const notFound = { 404: 'Credential not found (also for other workspaces’ ids)' };

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

export const listCredentialsRoute = credentialRoute({
  method: 'get',
  path: '',
  operationId: 'listCredentials',
  summary: 'Credentials of the workspace with masked values (never the secret)',
  responses: { 200: { description: '`{ credentials }`', schema: credentialListSchema } },
  handler: async (ctx, { principal, deps }) => ({
    status: 200,
    body: { credentials: await listCredentials(ctx.state.em, principal, deps.services.credentials.crud) },
  }),
});

export const createCredentialRoute = credentialRoute({
  method: 'post',
  path: '',
  operationId: 'createCredential',
  summary: 'Create a credential; a name the workspace already has (case-insensitive) updates that credential',
  access: WORKSPACE_WRITE,
  body: z.strictObject({ name, type, value: value.optional(), envVar: envVar.optional(), allowedHosts: allowedHosts.optional() }),
  responses: { 201: { description: '`{ credential }`', schema: credentialEnvelopeSchema } },
  handler: async (ctx, { principal, body, deps }) => {
    const { credential } = await createCredential(ctx.state.em, principal, deps.services.credentials.crud, body);
    return { status: 201, body: { credential } };
  },
});

export const updateCredentialRoute = credentialRoute({
  method: 'patch',
  path: '/{id}',
  operationId: 'updateCredential',
  summary: 'Rename, retype or replace the value; omitting `value` keeps the secret, and a new type or new allowedHosts need `value`',
  access: WORKSPACE_WRITE,
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
    ...notFound,
    409: 'Another credential of the workspace has that name',
  },
  handler: async (ctx, { principal, params, body, deps }) => ({
    status: 200,
    body: { credential: await updateCredential(ctx.state.em, principal, deps.services.credentials.crud, params.id, body) },
  }),
});

export const deleteCredentialRoute = credentialRoute({
  method: 'delete',
  path: '/{id}',
  operationId: 'deleteCredential',
  summary: 'Delete a credential',
  access: WORKSPACE_WRITE,
  params: idParams,
  responses: { 200: { description: 'Deleted', schema: z.strictObject({ deleted: z.literal(true) }) }, ...bareAuthErrors, ...notFound },
  handler: async (ctx, { principal, params }) => {
    await deleteCredential(ctx.state.em, principal, params.id);
    return { status: 200, body: { deleted: true } };
  },
});

export const testCredentialRoute = credentialRoute({
  method: 'post',
  path: '/{id}/test',
  operationId: 'testCredential',
  summary: 'Live connection check with the stored credential (any valid key of the workspace; Member or above)',
  access: ANY_KEY_WRITE,
  params: idParams,
  responses: {
    200: { description: '`{ result: { ok, status, message, checkedAt, latencyMs } }`', schema: credentialTestSchema },
    ...notFound,
  },
  handler: async (ctx, { principal, params, deps }) => ({
    status: 200,
    body: { result: await testCredential(ctx.state.em, principal, deps.services.credentials.tests, params.id) },
  }),
});

export const testWorkflowCredentialsRoute = workflowCredentialRoute({
  method: 'post',
  path: '/test',
  operationId: 'testWorkflowCredentials',
  summary: "Tests every credential the workflow's nodes name (draft and active version)",
  access: ANY_KEY_WRITE,
  params: idParams,
  responses: {
    200: {
      description: '`{ workflowId, ok, credentials: [{ reference, nodeIds, credential, result }] }`',
      schema: workflowCredentialTestSchema,
    },
  },
  handler: async (ctx, { principal, params, deps }) => ({
    status: 200,
    body: await testWorkflowCredentials(ctx.state.em, principal, deps.services.credentials.tests, params.id),
  }),
});

export const bootstrapWorkflowCredentialsRoute = workflowCredentialRoute({
  method: 'post',
  path: '/bootstrap-from-env',
  operationId: 'bootstrapWorkflowCredentials',
  summary:
    'Creates the credentials the workflow names but the workspace lacks, from allowed deployment variables; reports counts, never values',
  params: idParams,
  responses: {
    200: { description: '`{ bootstrap: { workflowId, created, skipped, credentials } }`', schema: bootstrapReportSchema },
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
