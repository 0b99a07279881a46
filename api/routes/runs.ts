import { z } from 'zod';
import { routeGroup, ANY_KEY_READ, PUBLIC, WORKSPACE_WRITE } from '../http/route';
import { linkBase, runLinks, withRunUrls, workflowLinks } from '../http/links';
import { runFiltersQuery, pathId, idParams } from '../schemas';
import {
  approvalQueuedSchema,
  approvalResultSchema,
  dryRunReceiptSchema,
  queuedReceiptSchema,
  rerunReceiptSchema,
  resumeResultSchema,
  runListSchema,
  runStatusReportSchema,
  runValueSchema,
  runWithLinksSchema,
  workflowRunsStatusSchema,
} from '../schemas/runs';
import type { AppContext } from '../context';
import type { Run } from '../../db/entities';
import { endUserExecuteAnswer, executeAsEndUser } from './endUsers';
import { isEndUserGateway } from '../../services/runs/endUsers';
import { projectionFor, type WorkspacePrincipal } from '../../services/kernel/principal';
import {
  cancelRun,
  decideApproval,
  executeWorkflow,
  fullRunValue,
  loadRun,
  presentRuns,
  queryRunSummaries,
  rerunRun,
  resumeEventWait,
  workflowRunStatus,
} from '../../services/runs';
import { clampLimit } from '../../services/kernel/pagination';
import type { RunValueField } from '../../services/runs';

/** Runs through a workspace key (the resume hook, public, is declared on its own). */
const runRoute = routeGroup({ tags: ['Runs'], family: 'bare', access: ANY_KEY_READ });
const runErrors = {
  404: 'Run not found (also for runs of other workspaces)',
  409: 'The run is in a state that refuses this action',
};

/** The runs as the principal may see them, with resume URLs for full projections. */
async function present(ctx: AppContext, principal: WorkspacePrincipal, runs: Run[]) {
  const origin = linkBase(ctx).origin;
  return (await presentRuns(ctx.state.em, principal, runs)).map((v) => withRunUrls(v, origin));
}

const executeBody = z
  .object({
    input: z.unknown().optional(),
    startNodeId: z.string().min(1).optional(),
    dryRun: z.boolean().optional(),
    target: z.enum(['active', 'candidate'], { error: 'target must be active or candidate' }).default('active'),
    executionTargetId: z.string().min(1).optional(),
    expectedVersionId: z.string().min(1).optional(),
    confirm: z.boolean().optional(),
    endUser: z
      .object({ externalId: z.string().min(1).max(256) })
      .strict()
      .optional(),
    message: z.string().optional(),
  })
  .strict();

export const executeRoute = runRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/execute',
  operationId: 'executeWorkflow',
  summary: 'Execute the active version (queued on Temporal, 202) or test the candidate (dry run, 201)',
  access: { kind: 'apiKey', scopes: 'workspace-or-gateway', roles: 'write' },
  params: idParams,
  body: executeBody,
  idempotency: 'optional',
  responses: {
    202: {
      description:
        'Queued on Temporal: `{ run, execution, queued: true, statusUrl, cancelUrl, links }`; for an end-user gateway key only `{ run (end-user run summary), queued: true, statusUrl, cancelUrl }` under /api/v1/end-users/runs',
      schema: z.union([queuedReceiptSchema, endUserExecuteAnswer]),
    },
    201: { description: 'Dry run, finished: `{ run, execution, queued: false, statusUrl, links }`', schema: dryRunReceiptSchema },
    403: 'Wrong key scope, viewer, or `API key cannot access this workflow`',
    404: 'Workflow not found',
    409: 'Idempotency-Key reuse with another request, or a stale expectedVersionId',
    503: 'Temporal refused the start (the run is recorded canceled with the reason), or the workspace kept RUN_ADMISSION_MAX_ACTIVE runs queued or running for RUN_ADMISSION_MAX_WAIT_MS (no run recorded)',
  },
  handler: async (ctx, { principal, params, body, deps }) => {
    if (isEndUserGateway(principal)) return executeAsEndUser(ctx, { principal, params, body, deps });
    const result = await executeWorkflow(ctx.state.em, deps.services.runs.launcher, principal, params.id, body, 'api', {
      admit: deps.services.runs.admit,
      versions: deps.services.runs.versions,
    });
    const [run] = await present(ctx, principal, [result.run]);
    const links = runLinks(result.run, linkBase(ctx));
    const execution = {
      workflowId: result.run.id,
      taskQueue: result.kind === 'queued' ? deps.services.runs.launcher.taskQueue : null,
      namespace: result.kind === 'queued' ? deps.temporal.namespace : null,
      mode: result.kind === 'queued' ? 'temporal' : 'inline',
      dryRun: result.run.dryRun,
      resourceMode: result.run.executionEvidence.resourceMode,
      target: result.run.executionEvidence.requestedTarget,
      versionId: result.run.versionId,
      ...(result.destination ? { destination: result.destination } : {}),
    };
    if (result.kind === 'dry') return { status: 201, body: { run, execution, queued: false, statusUrl: links.status, links } };
    return { status: 202, body: { run, execution, queued: true, statusUrl: links.status, cancelUrl: links.cancel, links } };
  },
});

const listQuery = runFiltersQuery;

export const listRunsRoute = runRoute({
  method: 'get',
  path: '/api/v1/runs',
  operationId: 'listRuns',
  summary: 'Run summaries of the workspace (no input, output, steps or logs: GET /api/v1/runs/{id} has them), filtered and sorted in SQL',
  query: listQuery,
  responses: { 200: { description: '`{ runs (summaries), links }`', schema: runListSchema } },
  handler: async (ctx, { principal, query }) => {
    const runs = await queryRunSummaries(ctx.state.em, principal, {
      ...query,
      limit: clampLimit(query.limit, { default: 100, min: 1, max: 200 }),
      projection: projectionFor(principal),
    });
    return { status: 200, body: { runs, links: runs.map((r) => runLinks(r, linkBase(ctx))) } };
  },
});

export const getRunRoute = runRoute({
  method: 'get',
  path: '/api/v1/runs/{id}',
  operationId: 'getRun',
  summary: 'One run: full projection for write permission, workspace-safe.v1 otherwise',
  params: idParams,
  responses: { 200: { description: '`{ run, links }`', schema: runWithLinksSchema }, ...runErrors },
  handler: async (ctx, { principal, params }) => {
    const run = await loadRun(ctx.state.em, principal, params.id);
    const [view] = await present(ctx, principal, [run]);
    return { status: 200, body: { run: view, links: runLinks(run, linkBase(ctx)) } };
  },
});

const valueErrors = {
  ...runErrors,
  403: 'Input and output are restricted for this key (workspace-safe.v1 readers), or a wrong key scope',
  404: 'Run not found (also for runs of other workspaces), or `Step not found`',
};

/** GET /api/v1/runs/{id}/{input|output}: the whole value a run view truncated, for the same readers as the full run. */
const runValueRoute = (field: RunValueField) =>
  runRoute({
    method: 'get',
    path: `/api/v1/runs/{id}/${field}`,
    operationId: field === 'input' ? 'getRunInput' : 'getRunOutput',
    summary: `The run's whole ${field} (the href of a truncated value; full projection only)`,
    params: idParams,
    responses: { 200: { description: `\`{ runId, nodeId: null, field, bytes, value }\``, schema: runValueSchema }, ...valueErrors },
    handler: async (ctx, { principal, params }) => ({ status: 200, body: await fullRunValue(ctx.state.em, principal, params.id, field) }),
  });

/** GET /api/v1/runs/{id}/steps/{nodeId}/{input|output}: one step's whole value. */
const stepValueRoute = (field: RunValueField) =>
  runRoute({
    method: 'get',
    path: `/api/v1/runs/{id}/steps/{nodeId}/${field}`,
    operationId: field === 'input' ? 'getRunStepInput' : 'getRunStepOutput',
    summary: `One step's whole ${field} (the href of a truncated value; full projection only)`,
    params: idParams.extend({ nodeId: pathId }),
    responses: { 200: { description: `\`{ runId, nodeId, field, bytes, value }\``, schema: runValueSchema }, ...valueErrors },
    handler: async (ctx, { principal, params }) => ({
      status: 200,
      body: await fullRunValue(ctx.state.em, principal, params.id, field, params.nodeId),
    }),
  });

export const runInputRoute = runValueRoute('input');
export const runOutputRoute = runValueRoute('output');
export const stepInputRoute = stepValueRoute('input');
export const stepOutputRoute = stepValueRoute('output');

export const cancelRunRoute = runRoute({
  method: 'post',
  path: '/api/v1/runs/{id}/cancel',
  operationId: 'cancelRun',
  summary: 'Cancel a queued, running or waiting run through Temporal cancellation; 409 when terminal',
  access: WORKSPACE_WRITE,
  params: idParams,
  idempotency: 'optional',
  responses: { 200: { description: '`{ run, links }` with the canceled run', schema: runWithLinksSchema }, ...runErrors },
  handler: async (ctx, { principal, params, deps }) => {
    const canceled = await cancelRun(ctx.state.em, deps.services.runs.launcher, principal, params.id);
    const [view] = await present(ctx, principal, [canceled]);
    return { status: 200, body: { run: view, links: runLinks(canceled, linkBase(ctx)) } };
  },
});

export const rerunRoute = runRoute({
  method: 'post',
  path: '/api/v1/runs/{id}/rerun',
  operationId: 'rerunRun',
  summary: 'A fresh queued run of the same version (or candidate snapshot) from the original input',
  access: WORKSPACE_WRITE,
  params: idParams,
  idempotency: 'optional',
  responses: {
    201: { description: '`{ run, statusUrl, cancelUrl, links }`', schema: rerunReceiptSchema },
    ...runErrors,
    409: 'A dry run (execute the workflow instead), a workflow that cannot run now (disabled, trashed, draft), or a version that no longer exists',
    503: 'Temporal refused the start, or the workspace kept RUN_ADMISSION_MAX_ACTIVE runs queued or running for RUN_ADMISSION_MAX_WAIT_MS',
  },
  handler: async (ctx, { principal, params, deps }) => {
    const run = await rerunRun(ctx.state.em, deps.services.runs.launcher, principal, params.id, deps.services.runs.admit);
    const [view] = await present(ctx, principal, [run]);
    const links = runLinks(run, linkBase(ctx));
    return { status: 201, body: { run: view, statusUrl: links.status, cancelUrl: links.cancel, links } };
  },
});

export const workflowStatusRoute = runRoute({
  method: 'get',
  path: '/api/v1/workflows/{id}/status',
  operationId: 'workflowStatus',
  summary: 'Status of one run (`?runId=`) or of the 20 latest runs',
  params: idParams,
  query: z.object({ runId: z.string().min(1).optional() }),
  responses: {
    200: {
      description:
        'With `runId`: `{ workflow, projection, run, status, queued, active, output, error, steps, logs, links, pollAfterMs }`; without: `{ workflow, runs, statuses }`',
      schema: z.union([runStatusReportSchema, workflowRunsStatusSchema]),
    },
    404: 'Workflow or run not found',
  },
  handler: async (ctx, { principal, params, query }) => {
    const result = await workflowRunStatus(ctx.state.em, principal, params.id, query.runId);
    const origin = linkBase(ctx).origin;
    const { workflow: wf } = result;
    const workflow = { id: wf.id, name: wf.name, status: wf.status, activeVersionId: wf.activeVersionId };
    if (result.kind === 'latest') {
      return { status: 200, body: { workflow, runs: result.runs.map((v) => withRunUrls(v, origin)), statuses: result.statuses } };
    }
    const { run, redacted } = result;
    const view = withRunUrls(result.view, origin);
    const full = view as Record<string, unknown>;
    return {
      status: 200,
      body: {
        workflow,
        projection: { kind: 'workflow-status', version: 1, redacted },
        run: view,
        status: run.status,
        queued: run.status === 'queued',
        active: result.active,
        output: redacted ? undefined : full.output,
        error: redacted ? undefined : full.error,
        steps: full.steps,
        logs: redacted ? undefined : full.logs,
        links: { ...runLinks(run, linkBase(ctx)), workflow: workflowLinks(ctx, wf.id).self },
        pollAfterMs: result.pollAfterMs,
      },
    };
  },
});

export const approvalRoute = runRoute({
  method: 'post',
  path: '/api/runs/{id}/approval',
  operationId: 'decideApproval',
  summary: 'Approve or reject a waiting approval (member with write permission; session or workspace key)',
  access: { kind: 'apiKeyOrSession', roles: 'write' },
  params: idParams,
  body: z
    .object({
      decision: z.enum(['approved', 'rejected'], { error: 'decision must be approved or rejected' }),
      comment: z.string().max(5000).optional(),
      nodeId: z.string().optional(),
    })
    .strict(),
  responses: {
    200: { description: '`{ approval: { nodeId, decision }, run }`: decided', schema: approvalResultSchema },
    202: {
      description:
        '`{ approval, run, queued: true }`: no worker answered within APPROVAL_ANSWER_WAIT_MS; the decision is queued durably and applies when a worker picks the run up',
      schema: approvalQueuedSchema,
    },
    ...runErrors,
  },
  handler: async (ctx, { principal, params, body, deps }) => {
    const { approval, run, queued } = await decideApproval(
      ctx.state.em,
      deps.services.runs.launcher,
      principal,
      params.id,
      body,
      deps.config.approvalAnswerWaitMs,
    );
    const [view] = await present(ctx, principal, [run]);
    return queued ? { status: 202, body: { approval, run: view, queued: true as const } } : { status: 200, body: { approval, run: view } };
  },
});

/** The resume hook of an event wait: its single-use token is the credential. */
const resumeHookRoute = routeGroup({ tags: ['Runs'], family: 'bare', access: PUBLIC });

export const resumeRoute = resumeHookRoute({
  method: 'post',
  path: '/api/hooks/resume/{token}',
  operationId: 'resumeEvent',
  summary: 'Resume an event wait with the JSON body as the node output (single-use token, no bearer)',
  params: z.object({ token: pathId }),
  body: z.unknown(),
  responses: {
    202: { description: '`{ runId, nodeId, status: "resumed" }`', schema: resumeResultSchema },
    404: 'Unknown token',
    409: 'Token already used or expired, or the run no longer waits',
  },
  handler: async (ctx, { params, body, deps }) => {
    const resumed = await resumeEventWait(ctx.state.em, deps.services.runs.launcher, {
      token: params.token,
      bodyIsJson: Boolean(ctx.is('application/json')),
      payload: body,
    });
    return { status: 202, body: resumed };
  },
});

export const runRoutes = [
  executeRoute,
  listRunsRoute,
  getRunRoute,
  runInputRoute,
  runOutputRoute,
  stepInputRoute,
  stepOutputRoute,
  cancelRunRoute,
  rerunRoute,
  workflowStatusRoute,
  approvalRoute,
  resumeRoute,
];
