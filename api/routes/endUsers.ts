import { z } from 'zod';
import type { AppContext } from '../context';
import { routeGroup, type RouteResult } from '../http/route';
import { endUserRunUrls } from '../http/links';
import { bareAuthErrors, isoDate, idParams } from '../schemas';
import { RUN_STATUSES } from '../../engine/statuses';
import { cancelEndUserRun, executeForEndUser, getEndUserRun, type EndUserRunSummary } from '../../services/runs/endUsers';
import type { WorkspacePrincipal } from '../../services/kernel/principal';
import type { ExecuteInput } from '../../services/runs';
import type { AppDeps } from '../deps';

/** The end-user run summary: the only run shape a gateway key ever receives. */
export const endUserRunSchema = z.object({
  id: z.string(),
  workflowId: z.string(),
  status: z.enum(RUN_STATUSES),
  active: z.boolean(),
  endUser: z.object({ externalId: z.string().nullable() }),
  createdAt: isoDate,
  startedAt: isoDate.nullable(),
  finishedAt: isoDate.nullable(),
  durationMs: z.number().nullable(),
  output: z.unknown().describe('The workflow output once the run succeeded; null otherwise'),
});

const endUserRunAnswer = z.object({ run: endUserRunSchema, statusUrl: z.string(), cancelUrl: z.string() });

/** The execute answer for end-user runs: always queued, links under /api/v1/end-users/runs. */
export const endUserExecuteAnswer = endUserRunAnswer.extend({ queued: z.literal(true) });

const answer = (ctx: AppContext, run: EndUserRunSummary) => ({ run, ...endUserRunUrls(ctx, run.id) });

/**
 * `POST /api/v1/workflows/{id}/execute` for an end-user gateway key (execute rule 4); the
 * execute route hands gateway principals here so its own answer never reaches them.
 */
export async function executeAsEndUser(
  ctx: AppContext,
  { principal, params, body, deps }: { principal: WorkspacePrincipal; params: { id: string }; body: ExecuteInput; deps: AppDeps },
): Promise<RouteResult> {
  const run = await executeForEndUser(ctx.state.em, deps.services.runs.launcher, principal, params.id, body, deps.services.runs.admit);
  return { status: 202, body: { ...answer(ctx, run), queued: true } };
}

/** The runs an end-user gateway key started; nothing else is reachable with such a key. */
const endUserRunRoute = routeGroup({
  tags: ['End users'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'end-user-gateway', roles: 'read' },
  errors: {
    ...bareAuthErrors,
    403: '`An end-user gateway API key is required.` (every other scope), or end users are disabled',
    404: 'Run not found: missing, or not created by this gateway key',
  },
  pathPrefix: '/api/v1/end-users/runs',
});

export const getEndUserRunRoute = endUserRunRoute({
  method: 'get',
  path: '/{id}',
  operationId: 'getEndUserRun',
  summary: 'A run this end-user gateway key started, as the end-user run summary',
  params: idParams,
  responses: { 200: { description: '`{ run, statusUrl, cancelUrl }`', schema: endUserRunAnswer } },
  handler: async (ctx, { principal, params }) => {
    return { status: 200, body: answer(ctx, await getEndUserRun(ctx.state.em, principal, params.id)) };
  },
});

export const cancelEndUserRunRoute = endUserRunRoute({
  method: 'post',
  path: '/{id}/cancel',
  operationId: 'cancelEndUserRun',
  summary: 'Cancel a run this end-user gateway key started; 409 when it already ended',
  access: { kind: 'apiKey', scopes: 'end-user-gateway', roles: 'write' },
  params: idParams,
  idempotency: 'optional',
  responses: {
    200: { description: '`{ run, statusUrl, cancelUrl }`', schema: endUserRunAnswer },
    409: 'The run already ended',
  },
  handler: async (ctx, { principal, params, deps }) => {
    return { status: 200, body: answer(ctx, await cancelEndUserRun(ctx.state.em, deps.services.runs.launcher, principal, params.id)) };
  },
});

export const endUserRoutes = [getEndUserRunRoute, cancelEndUserRunRoute];
