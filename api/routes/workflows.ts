import { z } from 'zod';
import { routeGroup, type RouteResult, ANY_KEY_READ, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { deployedWebhookLinks, webhookWithLinks, workflowLinks } from '../http/links';
import { requestOrigin } from '../http/urls';
import { pathId, idParams } from '../schemas';
import {
  artifactReportSchema,
  bundlePreviewSchema,
  importedBundleSchema,
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
import { projectFor } from '../../services/kernel/redaction';
import type { WorkspacePrincipal } from '../../services/kernel/principal';
import {
  createWorkflow,
  deleteWorkflow,
  deployWorkflow,
  importBundle,
  previewBundle,
  previewImportIn,
  restoreVersion,
  updateWorkflow,
  type Deployment,
} from '../../services/publishing';
import {
  exportWorkflow,
  getWorkflow,
  listVersions,
  validateArtifactFiles,
  listWorkflows,
  validateWorkflow,
  type WorkflowView,
} from '../../services/workflows';
import { WORKFLOW_STATUSES } from '../../engine/statuses';
import { draftEdgeSchema, draftNodeSchema } from '../../engine/nodes';
import type { AppContext } from '../context';
import { invalidInput } from '../../services/kernel/errors';

const nodes = z.array(draftNodeSchema).max(500).describe('Graph nodes; see the node contract in the README');
const edges = z.array(draftEdgeSchema).max(2000);
/** Workflows through a workspace key: any key reads, a workspace key of a role above viewer writes. */
const workflowRoute = routeGroup({ tags: ['Workflows'], family: 'bare', access: ANY_KEY_READ, pathPrefix: '/api/v1/workflows' });
const workflowErrors = {
  403: 'Wrong key scope, or `API key cannot access this workflow`',
  404: 'Workflow not found',
};

/**
 * Safe readers (personal, copilot, viewer) see a workflow's shape but not node configs,
 * which can carry URLs, headers and code.
 */
function present(principal: WorkspacePrincipal, view: WorkflowView) {
  return projectFor(principal, view as unknown as Record<string, unknown>, ['nodes.config']);
}

export const listWorkflowsRoute = workflowRoute({
  method: 'get',
  path: '',
  operationId: 'listWorkflows',
  summary: 'Non-trashed workflows of the workspace, newest first',
  responses: { 200: { description: '`{ workflows, links }`', schema: workflowListSchema } },
  handler: async (ctx, { principal }) => {
    const workflows = await listWorkflows(ctx.state.em, principal);
    return {
      status: 200,
      body: { workflows: workflows.map((w) => present(principal, w)), links: workflows.map((w) => workflowLinks(ctx, w.id)) },
    };
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
      .object({
        name: z.string().trim().min(1).max(200),
        workflowId: z.string().optional(),
        sourceNodeId: z.string().optional(),
        sourceNodeLabel: z.string().optional(),
      })
      .optional(),
    nodes: nodes.optional(),
    edges: edges.optional(),
  })
  .strict();

export const createWorkflowRoute = workflowRoute({
  method: 'post',
  path: '',
  operationId: 'createWorkflow',
  summary: 'Create a blank workflow, from a template, a duplicate, an import or a subworkflow placeholder',
  access: WORKSPACE_WRITE,
  body: createBody,
  idempotency: 'optional',
  responses: {
    201: {
      description:
        "Created draft: `{ workflow, links, importReadiness? }`; with importBundleJson `{ bundle, files[], workflows[] }` (each workflow with importAction, importReadiness, bundleSubWorkflowStatus, links; files[] every workflow's fate)",
      schema: z.union([createdWorkflowSchema, importedBundleSchema]),
    },
    ...workflowErrors,
  },
  handler: async (ctx, { principal, body }) => {
    if (body.importBundleJson !== undefined) {
      const { importBundleJson, ...rest } = body;
      if (Object.keys(rest).length > 0) throw invalidInput('importBundleJson cannot be combined with other fields.');
      const { bundle, files, workflows } = await importBundle(ctx.state.em, principal, importBundleJson);
      return {
        status: 201,
        body: { bundle, files, workflows: workflows.map((w) => ({ ...w, links: workflowLinks(ctx, w.workflow.id) })) },
      };
    }
    const result = await createWorkflow(ctx.state.em, principal, body);
    return { status: 201, body: { ...result, links: workflowLinks(ctx, result.workflow.id) } };
  },
});

export const importPreviewRoute = workflowRoute({
  method: 'post',
  path: '/import-preview',
  operationId: 'previewWorkflowImport',
  summary: 'Parse and validate an import without writing anything',
  access: WORKSPACE_READ,
  body: z.object({ importJson: z.string().optional(), importBundleJson: z.string().optional() }).strict(),
  responses: {
    200: {
      description:
        'What the import would create: `{ preview, importReadiness, persisted: false }`; for a bundle `{ bundle, workflows[], persisted: false }`',
      schema: z.union([importPreviewSchema, bundlePreviewSchema]),
    },
  },
  handler: async (ctx, { principal, body }) => {
    if (body.importBundleJson !== undefined && body.importJson === undefined) {
      return { status: 200, body: await previewBundle(ctx.state.em, principal, body.importBundleJson) };
    }
    return { status: 200, body: await previewImportIn(ctx.state.em, principal, body) };
  },
});

const artifactFiles = z.union(
  [z.record(z.string().min(1), z.unknown()), z.array(z.object({ path: z.string().min(1), content: z.unknown() }).strict()).max(500)],
  {
    error: 'files must be an object (path → content) or an array of { path, content }.',
  },
);

export const validateArtifactRoute = workflowRoute({
  method: 'post',
  path: '/validate-artifact',
  operationId: 'validateWorkflowArtifacts',
  summary: 'Validate repository artifact files (one JSON workflow artifact per file) without writing anything',
  access: WORKSPACE_READ,
  body: z.object({ files: artifactFiles.optional() }).strict(),
  responses: { 200: { description: '`{ valid, files[] }`: one report per file', schema: artifactReportSchema } },
  handler: async (_ctx, { body }) => {
    if (body.files === undefined) throw invalidInput('files is required: an object (path → content) or an array of { path, content }.');
    return { status: 200, body: validateArtifactFiles(body.files) };
  },
});

export const getWorkflowRoute = workflowRoute({
  method: 'get',
  path: '/{id}',
  operationId: 'getWorkflow',
  summary: 'A workflow with links, or `?format=portable` for the portable export',
  params: idParams,
  query: z.object({ format: z.enum(['portable']).optional() }),
  responses: {
    200: {
      description: '`{ workflow, links }`, or with `?format=portable` the portable `{ name, description, nodes, edges }`',
      schema: z.union([workflowWithLinksSchema, portableWorkflowSchema]),
    },
    ...workflowErrors,
  },
  handler: async (ctx, { principal, params, query }) => {
    if (query.format === 'portable') {
      const portable = await exportWorkflow(ctx.state.em, principal, params.id);
      return { status: 200, body: portable, headers: { 'Content-Disposition': `attachment; filename="${params.id}.json"` } };
    }
    const workflow = await getWorkflow(ctx.state.em, principal, params.id);
    return { status: 200, body: { workflow: present(principal, workflow), links: workflowLinks(ctx, workflow.id) } };
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

export const patchWorkflowRoute = workflowRoute({
  method: 'patch',
  path: '/{id}',
  operationId: 'updateWorkflow',
  summary: 'Update, import-replace, trash, or deploy via `status: deployed`',
  access: WORKSPACE_WRITE,
  params: idParams,
  body: patchBody,
  responses: {
    200: {
      description: 'Updated workflow `{ workflow, links, importReadiness? }`, or the deploy result for `status: deployed`',
      schema: updatedWorkflowSchema,
    },
    ...workflowErrors,
  },
  handler: async (ctx, { principal, params, body }) => {
    const update = await updateWorkflow(ctx.state.em, principal, params.id, body, ctx.deps.services.publishing);
    if (update.kind === 'deployed') return deployResponse(ctx, update.deployment);
    const { workflow, importReadiness } = update;
    return { status: 200, body: { workflow, links: workflowLinks(ctx, workflow.id), ...(importReadiness ? { importReadiness } : {}) } };
  },
});

export const deleteWorkflowRoute = workflowRoute({
  method: 'delete',
  path: '/{id}',
  operationId: 'deleteWorkflow',
  summary: 'Delete a workflow and its versions (its runs stay in the history)',
  access: WORKSPACE_WRITE,
  params: idParams,
  responses: { 200: { description: 'Deleted', schema: z.strictObject({ deleted: z.literal(true) }) }, ...workflowErrors },
  handler: async (ctx, { principal, params, deps }) => {
    await deleteWorkflow(ctx.state.em, principal, params.id, deps.services.publishing);
    return { status: 200, body: { deleted: true } };
  },
});

/** The answer of POST /deploy and of PATCH `status: deployed`, which share one shape. */
function deployResponse(ctx: AppContext, deployment: Deployment): RouteResult {
  const origin = requestOrigin(ctx);
  const webhooks = deployment.webhooks.map((w) => webhookWithLinks(origin, w));
  const firstWebhook = deployedWebhookLinks(origin, deployment.webhooks[0]);
  return {
    status: 200,
    body: {
      workflow: deployment.workflow,
      synchronizedVersionId: deployment.versionId,
      version: deployment.version,
      webhookUrl: firstWebhook.invoke,
      links: { ...workflowLinks(ctx, deployment.workflow.id), ...firstWebhook },
      webhooks,
      schedules: deployment.scheduleIds.map((scheduleId) => ({ scheduleId })),
    },
  };
}

export const deployWorkflowRoute = workflowRoute({
  method: 'post',
  path: '/{id}/deploy',
  operationId: 'deployWorkflow',
  summary: 'Validate the draft, pin it as a new version and make it active',
  access: WORKSPACE_WRITE,
  params: idParams,
  responses: {
    200: {
      description: '`{ workflow, synchronizedVersionId, version, webhookUrl, links: { …, webhook, invoke }, webhooks, schedules }`',
      schema: deployResultSchema,
    },
    ...workflowErrors,
    400: 'Not ready: `{ error, report, deploymentReadiness }`',
  },
  handler: async (ctx, { principal, params }) =>
    deployResponse(ctx, await deployWorkflow(ctx.state.em, principal, params.id, ctx.deps.services.publishing)),
});

export const validateSavedRoute = workflowRoute({
  method: 'get',
  path: '/{id}/validate',
  operationId: 'validateWorkflow',
  summary: 'Validation report and deployment readiness of the saved draft',
  params: idParams,
  responses: { 200: { description: '`{ report, deploymentReadiness }`', schema: validationResultSchema }, ...workflowErrors },
  handler: async (ctx, { principal, params }) => ({ status: 200, body: await validateWorkflow(ctx.state.em, principal, params.id) }),
});

export const validateDraftRoute = workflowRoute({
  method: 'post',
  path: '/{id}/validate',
  operationId: 'validateWorkflowDraft',
  summary: 'Validate a draft body `{ nodes, edges }` without saving it',
  params: idParams,
  body: z.object({ nodes: z.unknown().optional(), edges: z.unknown().optional() }),
  responses: { 200: { description: '`{ report, deploymentReadiness }`', schema: validationResultSchema }, ...workflowErrors },
  handler: async (ctx, { principal, params, body }) => ({
    status: 200,
    body: await validateWorkflow(ctx.state.em, principal, params.id, body),
  }),
});

export const listVersionsRoute = workflowRoute({
  method: 'get',
  path: '/{id}/versions',
  operationId: 'listWorkflowVersions',
  summary: 'Deployed versions, newest first',
  params: idParams,
  responses: {
    200: { description: '`{ versions }`, newest first', schema: z.strictObject({ versions: z.array(workflowVersionSchema) }) },
    ...workflowErrors,
  },
  handler: async (ctx, { principal, params }) => ({
    status: 200,
    body: { versions: await listVersions(ctx.state.em, principal, params.id) },
  }),
});

export const restoreVersionRoute = workflowRoute({
  method: 'post',
  path: '/{id}/versions/{version}/restore',
  operationId: 'restoreWorkflowVersion',
  summary: 'Copy a version into the draft (the active version is unchanged)',
  access: WORKSPACE_WRITE,
  params: z.object({
    id: pathId,
    version: z.coerce
      .number({ error: 'version must be an integer >= 1' })
      .int('version must be an integer >= 1')
      .min(1, 'version must be an integer >= 1')
      .max(2_147_483_647, 'version is too large'),
  }),
  responses: { 200: { description: '`{ workflow, restoredVersion, links }`', schema: restoredWorkflowSchema }, ...workflowErrors },
  handler: async (ctx, { principal, params }) => {
    const { workflow, restoredVersion } = await restoreVersion(ctx.state.em, principal, params.id, params.version);
    return { status: 200, body: { workflow, restoredVersion, links: workflowLinks(ctx, workflow.id) } };
  },
});

export const workflowRoutes = [
  listWorkflowsRoute,
  createWorkflowRoute,
  importPreviewRoute,
  validateArtifactRoute,
  getWorkflowRoute,
  patchWorkflowRoute,
  deleteWorkflowRoute,
  deployWorkflowRoute,
  validateSavedRoute,
  validateDraftRoute,
  listVersionsRoute,
  restoreVersionRoute,
];
