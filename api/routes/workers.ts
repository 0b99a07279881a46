import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/route';
import { requestOrigin } from '../http/urls';
import { bareAuthErrors, bareErrorSchema } from '../schemas';
import { smokeTestResultSchema, workerDoctorSchema, workerStatusSchema } from '../schemas/workers';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import type { SmokeTestStatus } from '../../db/entities';
import { invalidInput } from '../../services/errors';
import type { WorkspacePrincipal } from '../../services/principal';
import { workerDoctor } from '../../services/workers/doctor';
import { runSmokeTest } from '../../services/workers/smokeTests';
import { workerStatus } from '../../services/workers/status';


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

const SMOKE_TEST_PATH = '/api/v1/workers/smoke-test';

const statusHandler = async (ctx: AppContext, input: { principal: WorkspacePrincipal; query: { now?: string }; deps: AppDeps }) => {
  const status = await workerStatus(input.deps, ctx.state.em, input.principal.workspaceId, parseNow(input.query.now));
  return { status: 200, body: { status } };
};

const doctorHandler = async (ctx: AppContext, input: { principal: WorkspacePrincipal; query: { now?: string }; deps: AppDeps }) => {
  const links = { appUrl: requestOrigin(ctx), smokeTest: `POST ${SMOKE_TEST_PATH}` };
  const doctor = await workerDoctor(input.deps, ctx.state.em, input.principal.workspaceId, parseNow(input.query.now), links);
  return { status: 200, body: { doctor } };
};

const smokeHttpStatus: Record<SmokeTestStatus, 200 | 202 | 500> = { passed: 200, attention: 202, failed: 500 };

const smokeHandler = async (ctx: AppContext, input: { principal: WorkspacePrincipal; body: z.output<typeof smokeBody>; deps: AppDeps }) => {
  const { outcome, smokeTest } = await runSmokeTest(input.deps, ctx.state.em, input.principal, input.body);
  return { status: smokeHttpStatus[outcome], body: { smokeTest } };
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
  path: SMOKE_TEST_PATH,
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
