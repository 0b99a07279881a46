import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/route';
import { requestOrigin } from '../http/urls';
import { bareAuthErrors, bareErrorSchema } from '../schemas';
import { smokeTestResultSchema, workerDoctorSchema, workerStatusSchema } from '../schemas/workers';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import { invalidInput } from '../../services/errors';
import type { WorkspacePrincipal } from '../../services/principal';
import { loadWorkflow } from '../../services/workflows';
// eslint-disable-next-line no-restricted-imports -- moves behind the WorkerProbe port (issue 9)
import { clampWait, runSmokeTest, workerDoctor, workerStatus } from '../../temporal/worker-health';


const nowQuery = z.object({ now: z.string().optional() });
const doctorQuery = nowQuery.extend({ bundlePath: z.string().optional() });

const smokeBody = z.strictObject({
  targetWorkflowId: z.string().min(1).max(100).nullish(),
  useQueue: z.boolean().optional(),
  waitForWorkerMs: z.number().finite().optional(),
});

function parseNow(now: string | undefined): Date {
  if (now === undefined || now === '') return new Date();
  const ms = Date.parse(now);
  if (!/^\d{4}-\d{2}-\d{2}/.test(now) || Number.isNaN(ms)) throw invalidInput('Invalid now: expected an ISO-8601 timestamp');
  return new Date(ms);
}

const badNow = { 400: { description: '`now` is not an ISO-8601 timestamp', schema: bareErrorSchema } };

const statusHandler = async (ctx: AppContext, input: { principal: WorkspacePrincipal; query: { now?: string }; deps: AppDeps }) => {
  const now = parseNow(input.query.now);
  const status = await workerStatus(input.deps, ctx.state.em, input.principal.workspaceId, now);
  return { status: 200, body: { status } };
};

const doctorHandler = async (ctx: AppContext, input: { principal: WorkspacePrincipal; query: { now?: string }; deps: AppDeps }) => {
  const now = parseNow(input.query.now);
  const doctor = await workerDoctor(input.deps, ctx.state.em, input.principal.workspaceId, now, requestOrigin(ctx));
  return { status: 200, body: { doctor } };
};

const smokeHandler = async (ctx: AppContext, input: { principal: WorkspacePrincipal; body: z.output<typeof smokeBody>; deps: AppDeps }) => {
  const principal = input.principal;
  const targetWorkflowId = input.body.targetWorkflowId ?? null;
  if (targetWorkflowId) await loadWorkflow(ctx.state.em, principal, targetWorkflowId);
  const { httpStatus, smokeTest } = await runSmokeTest(input.deps, ctx.state.em, principal.workspaceId, {
    targetWorkflowId,
    useQueue: input.body.useQueue ?? true,
    waitForWorkerMs: clampWait(input.body.waitForWorkerMs),
  });
  return { status: httpStatus, body: { smokeTest } };
};

const smokeResponses = {
  200: { description: '`{ smokeTest }` with status `passed`', schema: smokeTestResultSchema },
  202: { description: '`{ smokeTest }` with status `attention`: no worker completed it in time', schema: smokeTestResultSchema },
  500: { description: '`{ smokeTest }` with status `failed`: Temporal refused the start or the workflow failed', schema: smokeTestResultSchema },
  400: { description: 'Invalid body', schema: bareErrorSchema },
  404: { description: '`Workflow not found`', schema: bareErrorSchema },
};

export const workerStatusRoute = defineRoute({
  method: 'get',
  path: '/api/v1/workers/status',
  operationId: 'workerStatus',
  summary: 'Queue, database, scheduler and run health of the workspace, measured live',
  tags: ['Workers'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace' },
  query: nowQuery,
  responses: { 200: { description: '`{ status }`', schema: workerStatusSchema }, ...bareAuthErrors, ...badNow },
  handler: statusHandler,
});

export const workerDoctorRoute = defineRoute({
  method: 'get',
  path: '/api/v1/workers/doctor',
  operationId: 'workerDoctor',
  summary: 'Diagnosis of the worker setup: blockers, warnings and next actions',
  tags: ['Workers'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace' },
  query: doctorQuery,
  responses: { 200: { description: '`{ doctor }`', schema: workerDoctorSchema }, ...bareAuthErrors, ...badNow },
  handler: doctorHandler,
});

export const workerSmokeTestRoute = defineRoute({
  method: 'post',
  path: '/api/v1/workers/smoke-test',
  operationId: 'workerSmokeTest',
  summary: 'Runs the smoke workflow on workflow-runs and waits for a worker to complete it',
  tags: ['Workers'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'workspace' },
  body: smokeBody,
  responses: { ...smokeResponses, ...bareAuthErrors },
  handler: smokeHandler,
});

/** Session twin of a key route: same handler, the session cookie instead of a bearer key. */
const sessionTwin = (route: AnyRoute, path: string, operationId: string): AnyRoute => ({ ...route, path, operationId, access: { kind: 'session' } });

export const sessionWorkerStatusRoute = sessionTwin(workerStatusRoute, '/api/workers/status', 'sessionWorkerStatus');
export const sessionWorkerDoctorRoute = sessionTwin(workerDoctorRoute, '/api/workers/doctor', 'sessionWorkerDoctor');
export const sessionWorkerSmokeTestRoute = sessionTwin(workerSmokeTestRoute, '/api/workers/smoke-test', 'sessionWorkerSmokeTest');

export const workerRoutes: AnyRoute[] = [
  workerStatusRoute,
  workerDoctorRoute,
  workerSmokeTestRoute,
  sessionWorkerStatusRoute,
  sessionWorkerDoctorRoute,
  sessionWorkerSmokeTestRoute,
];
