import { requestOrigin } from '../http/urls';
import { z } from 'zod';
import { defineRoute } from '../http/route';
import { bareAuthErrors, bareErrorSchema } from '../schemas';
import {
  createdWorkflowSchema,
  deployResultSchema,
  importPreviewSchema,
  portableWorkflowSchema,
  restoredWorkflowSchema,
  updatedWorkflowSchema,
  validationResultSchema,
  workflowListSchema,
  workflowVersionSchema,
  workflowWithLinksSchema,
} from '../schemas/workflows';
import { forbidden, invalidInput } from '../../services/errors';
import { projectFor } from '../../services/projection';
import { projectionFor, type WorkspacePrincipal } from '../../services/principal';
import {
  createWorkflow,
  deleteWorkflow,
  deployWorkflow,
  DeployRefused,
  listVersions,
  listWorkflows,
  loadWorkflow,
  parseImportJson,
  patchWorkflow,
  portableShape,
  restoreVersion,
  validateWorkflowGraph,
  viewOf,
  type WorkflowView,
} from '../../services/workflows';
import { WORKFLOW_STATUSES } from '../../db/entities';
import type { AppContext } from '../context';
import { secretKeyOf } from './webhooks';
import { syncWebhooks, webhookView } from '../../services/webhooks';

const idParams = z.object({ id: z.string().min(1).max(100) });
const nodes = z.array(z.looseObject({})).max(500).describe('Graph nodes; see the node contract in the README');
const edges = z.array(z.looseObject({})).max(2000);
const workflowErrors = {
  ...bareAuthErrors,
  403: { description: 'Wrong key scope, or `API key cannot access this workflow`', schema: bareErrorSchema },
  404: { description: 'Workflow not found', schema: bareErrorSchema },
};

/** Links of a workflow, absolute from the request origin. */
export function workflowLinks(ctx: AppContext, id: string) {
  const base = `${requestOrigin(ctx)}/api/v1/workflows/${id}`;
  return {
    self: base,
    version: `${base}/versions`,
    validate: `${base}/validate`,
    execute: `${base}/execute`,
    status: `${base}/status`,
    portable: `${base}?format=portable`,
    deploy: `${base}/deploy`,
  };
}

/**
 * Safe readers (personal, copilot, viewer) see a workflow's shape but not node configs,
 * which can carry URLs, headers and code.
 */
function present(principal: WorkspacePrincipal, view: WorkflowView) {
  return projectFor(principal, view as unknown as Record<string, unknown>, ['nodes.config']);
}


export const listWorkflowsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/workflows',
  operationId: 'listWorkflows',
  summary: 'Non-trashed workflows of the workspace, newest first',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  responses: { 200: { description: '`{ workflows, links }`', schema: workflowListSchema }, ...bareAuthErrors },
  handler: async (ctx, { principal }) => {
    const workflows = await listWorkflows(ctx.state.em, principal);
    return { status: 200, body: { workflows: workflows.map((w) => present(principal, w)), links: workflows.map((w) => workflowLinks(ctx, w.id)) } };
  },
});

const createBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(5000).optional(),
    templateKey: z.string().min(1).optional(),
    sourceWorkflowId: z.string().min(1).optional(),
    importJson: z.string().min(1).max(5_000_000).optional(),
    importBundleJson: z.string().optional(),
    subWorkflowPlaceholder: z
      .object({ name: z.string().trim().min(1).max(200), workflowId: z.string().optional(), sourceNodeId: z.string().optional(), sourceNodeLabel: z.string().optional() })
      .optional(),
    nodes: nodes.optional(),
    edges: edges.optional(),
  })
  .strict();

export const createWorkflowRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workflows',
  operationId: 'createWorkflow',
  summary: 'Create a blank workflow, from a template, a duplicate, an import or a subworkflow placeholder',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  body: createBody,
  idempotency: 'optional',
  responses: { 201: { description: 'Created draft: `{ workflow, links, importReadiness? }`', schema: createdWorkflowSchema }, ...workflowErrors },
  handler: async (ctx, { principal, body }) => {
    if (body.importBundleJson !== undefined) {
      throw invalidInput('importBundleJson (multi-workflow bundles) is not supported yet; import one workflow with importJson.');
    }
    const { importBundleJson: _ignored, ...input } = body;
    const result = await createWorkflow(ctx.state.em, principal, { ...input, nodes: input.nodes as never, edges: input.edges as never });
    return { status: 201, body: { ...result, links: workflowLinks(ctx, result.workflow.id) } };
  },
});

export const importPreviewRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workflows/import-preview',
  operationId: 'previewWorkflowImport',
  summary: 'Parse and validate an import without writing anything',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace' },
  body: z.object({ importJson: z.string().optional(), importBundleJson: z.string().optional() }).strict(),
  responses: { 200: { description: 'What the import would create: `{ preview, importReadiness, persisted: false }`', schema: importPreviewSchema }, ...bareAuthErrors },
  handler: async (_ctx, { body }) => {
    if (body.importBundleJson !== undefined) throw invalidInput('importBundleJson (multi-workflow bundles) is not supported yet.');
    if (body.importJson === undefined) throw invalidInput('importJson or importBundleJson is required.');
    const { graph, importReadiness } = parseImportJson(body.importJson);
    return {
      status: 200,
      body: { preview: { name: graph.name ?? 'Imported workflow', description: graph.description ?? '', nodes: graph.nodes, edges: graph.edges }, importReadiness, persisted: false },
    };
  },
});

export const getWorkflowRoute = defineRoute({
  method: 'get',
  path: '/api/v1/workflows/{id}',
  operationId: 'getWorkflow',
  summary: 'A workflow with links, or `?format=portable` for the portable export',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  params: idParams,
  query: z.object({ format: z.enum(['portable']).optional() }),
  responses: {
    200: { description: '`{ workflow, links }`, or with `?format=portable` the portable `{ name, description, nodes, edges }`', schema: z.union([workflowWithLinksSchema, portableWorkflowSchema]) },
    ...workflowErrors,
  },
  handler: async (ctx, { principal, params, query }) => {
    const wf = await loadWorkflow(ctx.state.em, principal, params.id);
    if (query.format === 'portable') {
      if (projectionFor(principal) === 'safe') {
        throw forbidden('The portable export includes node configs and needs a workspace key with write permission.');
      }
      return { status: 200, body: portableShape(wf), headers: { 'Content-Disposition': `attachment; filename="${wf.id}.json"` } };
    }
    return { status: 200, body: { workflow: present(principal, await viewOf(ctx.state.em, wf)), links: workflowLinks(ctx, wf.id) } };
  },
});

const patchBody = z
  .object({
    name: z.string().max(200).optional(),
    description: z.string().max(5000).optional(),
    status: z.enum(WORKFLOW_STATUSES, { error: `status must be one of ${WORKFLOW_STATUSES.join(', ')}` }).optional(),
    nodes: nodes.optional(),
    edges: edges.optional(),
    importJson: z.string().min(1).max(5_000_000).optional(),
    trashed: z.boolean().optional(),
  })
  .strict();

export const patchWorkflowRoute = defineRoute({
  method: 'patch',
  path: '/api/v1/workflows/{id}',
  operationId: 'updateWorkflow',
  summary: 'Update, import-replace, trash, or deploy via `status: deployed`',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: idParams,
  body: patchBody,
  responses: { 200: { description: 'Updated workflow `{ workflow, links, importReadiness? }`, or the deploy result for `status: deployed`', schema: updatedWorkflowSchema }, ...workflowErrors },
  handler: async (ctx, { principal, params, body }) => {
    const em = ctx.state.em;
    const wf = await loadWorkflow(em, principal, params.id);
    const { workflow, importReadiness } = await patchWorkflow(em, principal, wf, { ...body, nodes: body.nodes as never, edges: body.edges as never });
    if (body.status === 'deployed' && body.importJson === undefined) {
      return deployResponse(ctx, principal, workflow);
    }
    // Undeployed, disabled or trashed workflows must stop firing on their schedules.
    if (workflow.status !== 'deployed' || workflow.trashed) await ctx.deps.scheduler.sync(workflow, null);
    return {
      status: 200,
      body: { workflow: await viewOf(em, workflow), links: workflowLinks(ctx, workflow.id), ...(importReadiness ? { importReadiness } : {}) },
    };
  },
});

export const deleteWorkflowRoute = defineRoute({
  method: 'delete',
  path: '/api/v1/workflows/{id}',
  operationId: 'deleteWorkflow',
  summary: 'Delete a workflow and its versions (its runs stay in the history)',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: idParams,
  responses: { 200: { description: 'Deleted', schema: z.strictObject({ deleted: z.literal(true) }) }, ...workflowErrors },
  handler: async (ctx, { principal, params }) => {
    const wf = await loadWorkflow(ctx.state.em, principal, params.id);
    await ctx.deps.scheduler.sync(wf, null);
    await deleteWorkflow(ctx.state.em, principal, wf);
    return { status: 200, body: { deleted: true } };
  },
});

async function deployResponse(ctx: AppContext, principal: WorkspacePrincipal, wf: Parameters<typeof deployWorkflow>[2]) {
  try {
    const { workflow, version } = await deployWorkflow(ctx.state.em, principal, wf);
    const graph = { nodes: version.nodes, edges: version.edges };
    // SECRET_KEY is needed only to mint webhook URLs; deploys without webhook triggers work without it.
    const secret = graph.nodes.some((n) => n.type === 'webhook') ? secretKeyOf(ctx) : (ctx.deps.config.secretKey ?? '');
    const webhooks = await syncWebhooks(ctx.state.em, secret, workflow, graph);
    const schedules = await ctx.deps.scheduler.sync(workflow, graph);
    const views = webhooks.map((w) => webhookView(w, requestOrigin(ctx), secret));
    const first = views[0] ?? null;
    return {
      status: 200,
      body: {
        workflow: await viewOf(ctx.state.em, workflow),
        synchronizedVersionId: version.id,
        version: version.version,
        webhookUrl: first?.invokeUrl ?? null,
        links: { ...workflowLinks(ctx, workflow.id), webhook: first ? `${requestOrigin(ctx)}/api/v1/webhooks/${first.id}` : null, invoke: first?.invokeUrl ?? null },
        webhooks: views,
        schedules: schedules.map((scheduleId) => ({ scheduleId })),
      },
    };
  } catch (err) {
    if (err instanceof DeployRefused) {
      throw invalidInput('Workflow is not ready to deploy.', { details: { ...err.validation } });
    }
    throw err;
  }
}

export const deployWorkflowRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/deploy',
  operationId: 'deployWorkflow',
  summary: 'Validate the draft, pin it as a new version and make it active',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: idParams,
  responses: {
    200: { description: '`{ workflow, synchronizedVersionId, version, webhookUrl, links: { …, webhook, invoke }, webhooks, schedules }`', schema: deployResultSchema },
    ...workflowErrors,
    400: { description: 'Not ready: `{ error, report, deploymentReadiness }`', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, params }) => deployResponse(ctx, principal, await loadWorkflow(ctx.state.em, principal, params.id)),
});

export const validateSavedRoute = defineRoute({
  method: 'get',
  path: '/api/v1/workflows/{id}/validate',
  operationId: 'validateWorkflow',
  summary: 'Validation report and deployment readiness of the saved draft',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  params: idParams,
  responses: { 200: { description: '`{ report, deploymentReadiness }`', schema: validationResultSchema }, ...workflowErrors },
  handler: async (ctx, { principal, params }) => {
    const wf = await loadWorkflow(ctx.state.em, principal, params.id);
    return { status: 200, body: validateWorkflowGraph({ nodes: wf.nodes, edges: wf.edges }) };
  },
});

export const validateDraftRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/validate',
  operationId: 'validateWorkflowDraft',
  summary: 'Validate a draft body `{ nodes, edges }` without saving it',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  params: idParams,
  body: z.object({ nodes: z.unknown().optional(), edges: z.unknown().optional() }),
  responses: { 200: { description: '`{ report, deploymentReadiness }`', schema: validationResultSchema }, ...workflowErrors },
  handler: async (ctx, { principal, params, body }) => {
    const wf = await loadWorkflow(ctx.state.em, principal, params.id);
    return { status: 200, body: validateWorkflowGraph({ nodes: body.nodes ?? wf.nodes, edges: body.edges ?? wf.edges }) };
  },
});

export const listVersionsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/workflows/{id}/versions',
  operationId: 'listWorkflowVersions',
  summary: 'Deployed versions, newest first',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  params: idParams,
  responses: { 200: { description: '`{ versions }`, newest first', schema: z.strictObject({ versions: z.array(workflowVersionSchema) }) }, ...workflowErrors },
  handler: async (ctx, { principal, params }) => {
    const wf = await loadWorkflow(ctx.state.em, principal, params.id);
    return { status: 200, body: { versions: await listVersions(ctx.state.em, wf) } };
  },
});

export const restoreVersionRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/versions/{version}/restore',
  operationId: 'restoreWorkflowVersion',
  summary: 'Copy a version into the draft (the active version is unchanged)',
  tags: ['Workflows'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: z.object({ id: z.string().min(1), version: z.coerce.number({ error: 'version must be an integer >= 1' }).int('version must be an integer >= 1').min(1, 'version must be an integer >= 1') }),
  responses: { 200: { description: '`{ workflow, restoredVersion, links }`', schema: restoredWorkflowSchema }, ...workflowErrors },
  handler: async (ctx, { principal, params }) => {
    const wf = await loadWorkflow(ctx.state.em, principal, params.id);
    const { workflow, restoredVersion } = await restoreVersion(ctx.state.em, principal, wf, params.version);
    return { status: 200, body: { workflow: await viewOf(ctx.state.em, workflow), restoredVersion, links: workflowLinks(ctx, workflow.id) } };
  },
});

export const workflowRoutes = [
  listWorkflowsRoute,
  createWorkflowRoute,
  importPreviewRoute,
  getWorkflowRoute,
  patchWorkflowRoute,
  deleteWorkflowRoute,
  deployWorkflowRoute,
  validateSavedRoute,
  validateDraftRoute,
  listVersionsRoute,
  restoreVersionRoute,
];
