/**
 * Managed configuration: `GET|PUT /api/v1/databases/{tableId}/managed-rows`, and the
 * configuration operations under `/api/v1/configuration/{operation}` (GET: catalog, history;
 * POST: export, validate, preview, prepare, apply, declare). A known operation with the wrong
 * method is 405 with `Allow`; an unknown name (including internal handler names) is 404.
 */
import { z } from 'zod';
import { routeGroup, type RouteResult, SESSION_ADMIN, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { pathId, sessionAdminErrors, idParams } from '../schemas';
import {
  catalogSchema,
  configurationOperationResultSchema,
  historySchema,
  managedRowResultSchema,
  proposalSchema,
  storageUnavailableSchema,
  valueErrorSchema,
} from '../schemas/databases';
import {
  applyProposal,
  configurationCatalog,
  configurationHistory,
  confirmProposal,
  declareTable,
  exportPackage,
  getManagedRow,
  preparePackage,
  previewPackage,
  putManagedRow,
  validatePackage,
} from '../../services/databases';
import { configurationProposalUrl } from '../http/links';
import { requestOrigin } from '../http/urls';
import { invalidInput, notFound } from '../../services/kernel/errors';
import type { AppContext } from '../context';

/** Managed rows and configuration operations through a workspace key. */
const configurationRoute = routeGroup({ tags: ['Configuration'], family: 'bare', access: WORKSPACE_READ });
/** Proposal review through the session (the product UI). */
const proposalRoute = routeGroup({
  tags: ['Configuration'],
  family: 'bare',
  access: SESSION_ADMIN,
  errors: sessionAdminErrors,
  pathPrefix: '/api/configuration/proposals',
});
const GET_OPERATIONS = ['catalog', 'history'] as const;
const POST_OPERATIONS = ['export', 'validate', 'preview', 'prepare', 'apply', 'declare'] as const;
const tableParams = z.object({ tableId: pathId });

export const getManagedRowRoute = configurationRoute({
  method: 'get',
  path: '/api/v1/databases/{tableId}/managed-rows',
  operationId: 'getManagedRow',
  summary: 'One row of a managed configuration table, by `?key=`, with its revision',
  params: tableParams,
  query: z.object({ key: z.string({ error: 'key is required' }).min(1, 'key is required').max(256) }),
  responses: {
    200: { description: '`{ tableId, row: { key, revision, values } }`', schema: managedRowResultSchema },
    404: 'Managed table or row not found (or in another workspace)',
  },
  handler: async (ctx, { principal, params, query }) => ({
    status: 200,
    body: await getManagedRow(ctx.state.em, principal.workspaceId, params.tableId, query.key),
  }),
});

export const putManagedRowRoute = configurationRoute({
  method: 'put',
  path: '/api/v1/databases/{tableId}/managed-rows',
  operationId: 'putManagedRow',
  summary:
    'Write one managed row `{ key, expectedRevision, values }`: revision 0 creates it; a stale revision is 409; the key is immutable; secrets in active or retired are refused',
  access: WORKSPACE_WRITE,
  params: tableParams,
  body: z.strictObject({
    key: z.string({ error: 'key is required' }),
    expectedRevision: z.number({ error: 'expectedRevision is required' }).int().min(0),
    values: z.record(z.string(), z.unknown(), { error: 'values must be an object of column name to value' }),
  }),
  responses: {
    200: { description: '`{ tableId, row }` at its new revision', schema: managedRowResultSchema },
    400: {
      description: 'Invalid values (column named), an immutable key, or a recognized secret (`secret_detected`)',
      schema: valueErrorSchema,
    },
    404: 'Managed table not found (or in another workspace)',
    409: 'Stale revision: `{ error, code: revision_conflict, currentRevision }`',
  },
  handler: async (ctx, { principal, params, body }) => ({
    status: 200,
    body: await putManagedRow(ctx.state.em, principal.workspaceId, params.tableId, body),
  }),
});

const operationParams = z.object({ operation: pathId });

function wrongMethod(allow: 'GET' | 'POST'): RouteResult {
  return { status: 405, body: { error: `Use ${allow} for this configuration operation.` }, headers: { Allow: allow } };
}

export const configurationGetRoute = configurationRoute({
  method: 'get',
  path: '/api/v1/configuration/{operation}',
  operationId: 'configurationRead',
  summary: '`catalog`: declared tables and whether apply is enabled; `history`: the latest 50 receipts (no row values)',
  params: operationParams,
  responses: {
    200: {
      description: 'catalog `{ applyEnabled, applyDisabledReason, databases, tables }` or history `{ receipts }`',
      schema: z.union([catalogSchema, historySchema]),
    },
    404: 'Unknown operation',
    405: 'A POST operation (`Allow: POST`)',
    503: {
      description: 'Catalog without durable storage: `applyEnabled: false`, `applyDisabledReason: storage_unavailable`, no metadata',
      schema: storageUnavailableSchema,
    },
  },
  handler: async (ctx, { principal, params, deps }) => {
    const op = params.operation;
    if (op === 'catalog')
      return {
        status: 200,
        body: await configurationCatalog(ctx.state.em, principal.workspaceId, { writesEnabled: deps.config.configurationWritesEnabled }),
      };
    if (op === 'history') return { status: 200, body: await configurationHistory(ctx.state.em, principal.workspaceId) };
    if ((POST_OPERATIONS as readonly string[]).includes(op)) return wrongMethod('POST');
    throw notFound(`Unknown configuration operation "${op}".`);
  },
});

export const configurationPostRoute = configurationRoute({
  method: 'post',
  path: '/api/v1/configuration/{operation}',
  operationId: 'configurationOperation',
  summary:
    'Admin or Owner. `declare { tableId, tableKey? }`; `export { packageKey, tableIds? }` (limits 20 tables, 500 rows per table, 1000 rows, 1 MiB; 32 MiB read budget); `validate { package }` (reads no destination rows); `preview { package }` (actions and blockers); `prepare { package }` (a proposal to confirm in a session, and its review URL); `apply { requestId, proposalId }` (a confirmed proposal, in one transaction; the same requestId returns the same receipt)',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'admin' },
  params: operationParams,
  responses: {
    200: {
      description:
        'declare `{ table }`, export `{ package, stats }`, validate `{ valid, issues, bytes }`, preview (the plan), apply `{ receipt, replayed }`',
      schema: configurationOperationResultSchema,
    },
    201: { description: 'prepare `{ proposal, preview, reviewUrl }`', schema: configurationOperationResultSchema },
    400: { description: 'Validation, or a recognized secret (`secret_detected`)', schema: valueErrorSchema },
    403: 'Admin or Owner required',
    404: 'Unknown operation, or a table of another workspace',
    405: 'A GET operation (`Allow: GET`)',
    409: 'Already declared; export reference conflicts and drift (`details.blockers`); unconfirmed proposal; requestId reused with other input',
    412: 'Expired proposal',
    503: 'Writes switched off and no committed receipt for this requestId',
  },
  handler: async (ctx, { principal, params, deps }) => {
    const op = params.operation;
    if ((GET_OPERATIONS as readonly string[]).includes(op)) return wrongMethod('GET');
    if (!(POST_OPERATIONS as readonly string[]).includes(op)) throw notFound(`Unknown configuration operation "${op}".`);
    const body = postBody(ctx);
    switch (op) {
      case 'declare': {
        const input = parseOperationBody(declareBody, body);
        return { status: 200, body: { table: await declareTable(ctx.state.em, principal.workspaceId, principal.userId, input) } };
      }
      case 'export': {
        const input = parseOperationBody(exportBody, body);
        return { status: 200, body: await exportPackage(ctx.state.em, principal.workspaceId, input) };
      }
      case 'validate': {
        const input = parseOperationBody(packageBody, body);
        const { issues, bytes } = validatePackage(input.package);
        return { status: 200, body: { valid: issues.length === 0, issues, bytes } };
      }
      case 'preview': {
        const input = parseOperationBody(packageBody, body);
        return { status: 200, body: await previewPackage(ctx.state.em, principal.workspaceId, input.package) };
      }
      case 'prepare': {
        const input = parseOperationBody(packageBody, body);
        const { proposal, preview } = await preparePackage(ctx.state.em, principal.workspaceId, principal.userId, input.package);
        return { status: 201, body: { proposal, preview, reviewUrl: configurationProposalUrl(requestOrigin(ctx), proposal.id) } };
      }
      case 'apply': {
        const input = parseOperationBody(applyBody, body);
        return {
          status: 200,
          body: await applyProposal(ctx.state.em, principal.workspaceId, principal.userId, input, {
            writesEnabled: deps.config.configurationWritesEnabled,
          }),
        };
      }
    }
    throw notFound(`Unknown configuration operation "${op}".`);
  },
});

const declareBody = z.strictObject({ tableId: pathId, tableKey: z.string().optional() });
const exportBody = z.strictObject({
  packageKey: z.string({ error: 'packageKey is required' }),
  tableIds: z.array(pathId).min(1).max(100).optional(),
});
const packageBody = z.strictObject({ package: z.unknown().refine((p) => p !== undefined, 'package is required') });
const applyBody = z.strictObject({ requestId: z.string().min(1).max(200, 'requestId is at most 200 characters'), proposalId: pathId });

/** Each operation has its own body; they share one route, so each is parsed here (a 400 naming the field). */
function parseOperationBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw invalidInput(`Invalid request body: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

function postBody(ctx: AppContext): unknown {
  return ctx.request.body ?? {};
}

export const confirmProposalRoute = proposalRoute({
  method: 'post',
  path: '/{id}/confirm',
  operationId: 'confirmConfigurationProposal',
  summary: 'A person confirms a prepared configuration proposal (session of an Admin or Owner; same-origin)',
  params: idParams,
  responses: {
    200: { description: '`{ proposal }`, now confirmed', schema: z.strictObject({ proposal: proposalSchema }) },
    403: 'Cross-origin request, or not Admin or Owner',
    404: 'Proposal not found (or of another workspace)',
    409: 'Already confirmed or applied',
    412: 'Expired proposal',
  },
  handler: async (ctx, { principal, params }) => ({
    status: 200,
    body: { proposal: await confirmProposal(ctx.state.em, principal.workspaceId, principal.userId, params.id) },
  }),
});

export const configurationRoutes = [
  getManagedRowRoute,
  putManagedRowRoute,
  configurationGetRoute,
  configurationPostRoute,
  confirmProposalRoute,
];
