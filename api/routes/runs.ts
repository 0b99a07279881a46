import { requestOrigin } from '../http/urls';
import { z } from 'zod';
import { defineRoute } from '../http/route';
import { bareAuthErrors, bareErrorSchema, runFiltersQuery } from '../schemas';
import {
  approvalResultSchema,
  dryRunReceiptSchema,
  queuedReceiptSchema,
  rerunReceiptSchema,
  resumeResultSchema,
  runListSchema,
  runStatusReportSchema,
  runWithLinksSchema,
  workflowRunsStatusSchema,
} from '../schemas/runs';
import type { AppContext } from '../context';
import { workflowLinks } from './workflows';
import { RUN_STATUSES, RunSchema, WorkflowSchema, type Run } from '../../db/entities';
import { invalidInput, conflict, notFound } from '../../services/errors';
import { projectionFor, type WorkspacePrincipal } from '../../services/principal';
import { assertResumeTokenExists, claimResumeToken } from '../../services/resume';
import { queryRuns } from '../../services/runQueries';
import { cancelRun, executeWorkflow, isTerminal, loadRun, loadRunViews, projectRun, rerun, runLinks } from '../../services/runs';
import { loadWorkflow } from '../../services/workflows';
import { clampLimit } from '../../services/pagination';

const runErrors = {
  ...bareAuthErrors,
  404: { description: 'Run not found (also for runs of other workspaces)', schema: bareErrorSchema },
  409: { description: 'The run is in a state that refuses this action', schema: bareErrorSchema },
};
const base = (ctx: AppContext) => {
  const ui = ctx.deps.config.temporal.uiUrl;
  return { origin: requestOrigin(ctx), ...(ui ? { temporalUi: { url: ui, namespace: ctx.deps.temporal.namespace } } : {}) };
};

async function present(ctx: AppContext, principal: WorkspacePrincipal, runs: Run[], opts: { logLimit?: number } = {}) {
  const views = await loadRunViews(ctx.state.em, runs, base(ctx), opts);
  return views.map((v) => projectRun(principal, v));
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
    endUser: z.object({ externalId: z.string().min(1) }).optional(),
    message: z.string().optional(),
  })
  .strict();

export const executeRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workflows/{id}/execute',
  operationId: 'executeWorkflow',
  summary: 'Execute the active version (queued on Temporal, 202) or test the candidate (dry run, 201)',
  tags: ['Runs'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: z.object({ id: z.string().min(1) }),
  body: executeBody,
  idempotency: 'optional',
  responses: {
    202: { description: 'Queued on Temporal: `{ run, execution, queued: true, statusUrl, cancelUrl, links }`', schema: queuedReceiptSchema },
    201: { description: 'Dry run, finished: `{ run, execution, queued: false, statusUrl, links }`', schema: dryRunReceiptSchema },
    ...bareAuthErrors,
    403: { description: 'Wrong key scope, viewer, or `API key cannot access this workflow`', schema: bareErrorSchema },
    404: { description: 'Workflow not found', schema: bareErrorSchema },
    409: { description: 'Idempotency-Key reuse with another request, or a stale expectedVersionId', schema: bareErrorSchema },
    503: { description: 'Temporal refused the start; the run is recorded canceled with the reason', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, params, body, deps }) => {
    const wf = await loadWorkflow(ctx.state.em, principal, params.id);
    const result = await executeWorkflow(ctx.state.em, deps.runLauncher, principal, wf, body);
    const [run] = await present(ctx, principal, [result.run]);
    const links = runLinks(result.run, base(ctx));
    const execution = {
      workflowId: result.run.id,
      taskQueue: result.kind === 'queued' ? 'workflow-runs' : null,
      namespace: result.kind === 'queued' ? deps.temporal.namespace : null,
      mode: result.kind === 'queued' ? 'temporal' : 'inline',
      dryRun: result.run.dryRun,
      resourceMode: result.run.executionEvidence.resourceMode,
      target: result.run.executionEvidence.requestedTarget,
      versionId: result.run.versionId,
    };
    if (result.kind === 'dry') return { status: 201, body: { run, execution, queued: false, statusUrl: links.status, links } };
    return { status: 202, body: { run, execution, queued: true, statusUrl: links.status, cancelUrl: links.cancel, links } };
  },
});

const listQuery = runFiltersQuery;

export const listRunsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/runs',
  operationId: 'listRuns',
  summary: 'Runs of the workspace, filtered and sorted in SQL',
  tags: ['Runs'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  query: listQuery,
  responses: { 200: { description: '`{ runs, links }`', schema: runListSchema }, ...bareAuthErrors },
  handler: async (ctx, { principal, query }) => {
    const runs = await queryRuns(ctx.state.em, principal.workspaceId, {
      ...query,
      limit: clampLimit(query.limit, { default: 100, min: 1, max: 200 }),
      projection: projectionFor(principal),
    });
    return { status: 200, body: { runs: await present(ctx, principal, runs), links: runs.map((r) => runLinks(r, base(ctx))) } };
  },
});

const runIdParams = z.object({ id: z.string().min(1).max(100) });

export const getRunRoute = defineRoute({
  method: 'get',
  path: '/api/v1/runs/{id}',
  operationId: 'getRun',
  summary: 'One run: full projection for write permission, workspace-safe.v1 otherwise',
  tags: ['Runs'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  params: runIdParams,
  responses: { 200: { description: '`{ run, links }`', schema: runWithLinksSchema }, ...runErrors },
  handler: async (ctx, { principal, params }) => {
    const run = await loadRun(ctx.state.em, principal, params.id);
    const [view] = await present(ctx, principal, [run]);
    return { status: 200, body: { run: view, links: runLinks(run, base(ctx)) } };
  },
});

export const cancelRunRoute = defineRoute({
  method: 'post',
  path: '/api/v1/runs/{id}/cancel',
  operationId: 'cancelRun',
  summary: 'Cancel a queued, running or waiting run through Temporal cancellation; 409 when terminal',
  tags: ['Runs'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: runIdParams,
  idempotency: 'optional',
  responses: { 200: { description: '`{ run, links }` with the canceled run', schema: runWithLinksSchema }, ...runErrors },
  handler: async (ctx, { principal, params, deps }) => {
    const run = await loadRun(ctx.state.em, principal, params.id);
    const canceled = await cancelRun(ctx.state.em, deps.runLauncher, principal, run);
    const [view] = await present(ctx, principal, [canceled]);
    return { status: 200, body: { run: view, links: runLinks(canceled, base(ctx)) } };
  },
});

export const rerunRoute = defineRoute({
  method: 'post',
  path: '/api/v1/runs/{id}/rerun',
  operationId: 'rerunRun',
  summary: 'A fresh run of the same version from the original input',
  tags: ['Runs'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' },
  params: runIdParams,
  idempotency: 'optional',
  responses: { 201: { description: '`{ run, statusUrl, cancelUrl, links }`', schema: rerunReceiptSchema }, ...runErrors },
  handler: async (ctx, { principal, params, deps }) => {
    const original = await loadRun(ctx.state.em, principal, params.id);
    const wf = await ctx.state.em.findOne(WorkflowSchema, { id: original.workflowId, workspaceId: original.workspaceId });
    const run = await rerun(ctx.state.em, deps.runLauncher, principal, original, wf);
    const [view] = await present(ctx, principal, [run]);
    const links = runLinks(run, base(ctx));
    return { status: 201, body: { run: view, statusUrl: links.status, cancelUrl: links.cancel, links } };
  },
});

export const workflowStatusRoute = defineRoute({
  method: 'get',
  path: '/api/v1/workflows/{id}/status',
  operationId: 'workflowStatus',
  summary: 'Status of one run (`?runId=`) or of the 20 latest runs',
  tags: ['Runs'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  params: z.object({ id: z.string().min(1) }),
  query: z.object({ runId: z.string().min(1).optional() }),
  responses: {
    200: {
      description: 'With `runId`: `{ workflow, projection, run, status, queued, active, output, error, steps, logs, links, pollAfterMs }`; without: `{ workflow, runs, statuses }`',
      schema: z.union([runStatusReportSchema, workflowRunsStatusSchema]),
    },
    ...bareAuthErrors,
    404: { description: 'Workflow or run not found', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, params, query }) => {
    const em = ctx.state.em;
    const wf = await loadWorkflow(em, principal, params.id);
    const redacted = projectionFor(principal) === 'safe';
    const workflow = { id: wf.id, name: wf.name, status: wf.status, activeVersionId: wf.activeVersionId };
    if (!query.runId) {
      const runs = await em.find(RunSchema, { workspaceId: wf.workspaceId, workflowId: wf.id }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 20 });
      const statuses = Object.fromEntries(RUN_STATUSES.map((s) => [s, runs.filter((r) => r.status === s).length]));
      return { status: 200, body: { workflow, runs: await present(ctx, principal, runs, { logLimit: 20 }), statuses } };
    }
    const run = await em.findOne(RunSchema, { id: query.runId, workspaceId: wf.workspaceId, workflowId: wf.id });
    if (!run) throw notFound('Run not found');
    const [view] = await present(ctx, principal, [run], { logLimit: 20 });
    const full = view as Record<string, unknown>;
    const active = !isTerminal(run.status);
    return {
      status: 200,
      body: {
        workflow,
        projection: { kind: 'workflow-status', version: 1, redacted },
        run: view,
        status: run.status,
        queued: run.status === 'queued',
        active,
        output: redacted ? undefined : full.output,
        error: redacted ? undefined : full.error,
        steps: full.steps,
        logs: redacted ? undefined : full.logs,
        links: { ...runLinks(run, base(ctx)), workflow: workflowLinks(ctx, wf.id).self },
        // Waiting runs change on human time scales; running ones within seconds.
        pollAfterMs: !active ? 0 : run.status === 'waiting' ? 5000 : 1000,
      },
    };
  },
});

export const approvalRoute = defineRoute({
  method: 'post',
  path: '/api/runs/{id}/approval',
  operationId: 'decideApproval',
  summary: 'Approve or reject a waiting approval (member with write permission; session or workspace key)',
  tags: ['Runs'],
  family: 'bare',
  access: { kind: 'apiKeyOrSession', roles: 'write' },
  params: runIdParams,
  body: z.object({ decision: z.enum(['approved', 'rejected'], { error: 'decision must be approved or rejected' }), comment: z.string().max(5000).optional(), nodeId: z.string().optional() }).strict(),
  responses: { 200: { description: '`{ approval: { nodeId, decision }, run }`', schema: approvalResultSchema }, ...runErrors },
  handler: async (ctx, { principal, params, body, deps }) => {
    const run = await loadRun(ctx.state.em, principal, params.id);
    if (isTerminal(run.status)) throw conflict(`The run is already ${run.status}.`);
    const outcome = await deps.runLauncher.approve(run.id, { ...body, decidedBy: principal.userId });
    if (outcome.kind === 'refused') throw conflict(outcome.reason);
    const approval = { nodeId: outcome.nodeId, decision: outcome.decision };
    const fresh = await ctx.state.em.fork().findOneOrFail(RunSchema, { id: run.id });
    const [view] = await present(ctx, principal, [fresh]);
    return { status: 200, body: { approval, run: view } };
  },
});

export const resumeRoute = defineRoute({
  method: 'post',
  path: '/api/hooks/resume/{token}',
  operationId: 'resumeEvent',
  summary: 'Resume an event wait with the JSON body as the node output (single-use token, no bearer)',
  tags: ['Runs'],
  family: 'bare',
  access: { kind: 'public' },
  params: z.object({ token: z.string().min(1).max(200) }),
  body: z.unknown(),
  responses: {
    202: { description: '`{ runId, nodeId, status: "resumed" }`', schema: resumeResultSchema },
    404: { description: 'Unknown token', schema: bareErrorSchema },
    409: { description: 'Token already used or expired, or the run no longer waits', schema: bareErrorSchema },
  },
  handler: async (ctx, { params, body, deps }) => {
    // Unknown tokens are 404 whatever the body; a bad body must not burn a valid token.
    await assertResumeTokenExists(ctx.state.em, params.token);
    if (!ctx.is('application/json')) throw invalidInput('The resume body must be JSON (Content-Type: application/json).');
    const claimed = await claimResumeToken(ctx.state.em, params.token);
    const delivered = await deps.runLauncher.resumeEvent(claimed.runId, { nodeId: claimed.nodeId, token: params.token, payload: body ?? null });
    if (!delivered) throw conflict('The run is no longer waiting for this event.');
    return { status: 202, body: { runId: claimed.runId, nodeId: claimed.nodeId, status: 'resumed' } };
  },
});

export const runRoutes = [executeRoute, listRunsRoute, getRunRoute, cancelRunRoute, rerunRoute, workflowStatusRoute, approvalRoute, resumeRoute];

