import { z } from 'zod';
import { routeGroup, sessionTwin, type AnyRoute, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { requestOrigin } from '../http/urls';
import { bareAuthErrors } from '../schemas';
import {
  localAiCliLoginResultSchema,
  localAiCliModelsResultSchema,
  localAiCliSessionResultSchema,
  smokeTestResultSchema,
  workerDoctorSchema,
  workerStatusSchema,
} from '../schemas/workers';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import type { SmokeTestStatus } from '../../db/entities';
import { invalidInput } from '../../services/kernel/errors';
import {
  completeLocalAiCliLogin,
  listLocalAiCliModels,
  localAiCliSession,
  startLocalAiCliLogin,
  storeLocalAiCliToken,
} from '../../services/workers/localAiCli';
import type { WorkspacePrincipal } from '../../services/kernel/principal';
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

const badNow = { 400: '`now` is not an ISO-8601 timestamp' };

const SMOKE_TEST_PATH = '/api/v1/workers/smoke-test';
const LOCAL_AI_CLI_PATH = '/api/v1/workers/local-ai-cli';

const statusHandler = async (ctx: AppContext, input: { principal: WorkspacePrincipal; query: { now?: string }; deps: AppDeps }) => {
  const status = await workerStatus(
    input.deps.services.workers.health,
    ctx.state.em,
    input.principal.workspaceId,
    parseNow(input.query.now),
  );
  return { status: 200, body: { status } };
};

const doctorHandler = async (
  ctx: AppContext,
  input: { principal: WorkspacePrincipal; query: { now?: string; bundlePath?: string }; deps: AppDeps },
) => {
  const links = {
    appUrl: requestOrigin(ctx),
    smokeTest: `POST ${SMOKE_TEST_PATH}`,
    localAiCliSession: `POST ${LOCAL_AI_CLI_PATH}/session`,
  };
  const request = { now: parseNow(input.query.now), bundlePath: input.query.bundlePath || undefined };
  const doctor = await workerDoctor(input.deps.services.workers.health, ctx.state.em, input.principal.workspaceId, request, links);
  return { status: 200, body: { doctor } };
};

const smokeHttpStatus: Record<SmokeTestStatus, 200 | 202 | 500> = { passed: 200, attention: 202, failed: 500 };

const smokeHandler = async (ctx: AppContext, input: { principal: WorkspacePrincipal; body: z.output<typeof smokeBody>; deps: AppDeps }) => {
  const { outcome, smokeTest } = await runSmokeTest(input.deps.services.workers.health, ctx.state.em, input.principal, input.body);
  return { status: smokeHttpStatus[outcome], body: { smokeTest } };
};

const smokeResponses = {
  200: { description: '`{ smokeTest }` with status `passed`', schema: smokeTestResultSchema },
  202: { description: '`{ smokeTest }` with status `attention`: no worker completed it in time', schema: smokeTestResultSchema },
  500: {
    description: '`{ smokeTest }` with status `failed`: Temporal refused the start or the workflow failed',
    schema: smokeTestResultSchema,
  },
  404: '`Workflow not found`',
};

const workerRoute = routeGroup({ tags: ['Workers'], family: 'bare', access: WORKSPACE_READ });

export const workerStatusRoute = workerRoute({
  method: 'get',
  path: '/api/v1/workers/status',
  operationId: 'workerStatus',
  summary: 'Queue, database, scheduler and run health of the workspace, measured live',
  query: nowQuery,
  responses: { 200: { description: '`{ status }`', schema: workerStatusSchema }, ...badNow },
  handler: statusHandler,
});

export const workerDoctorRoute = workerRoute({
  method: 'get',
  path: '/api/v1/workers/doctor',
  operationId: 'workerDoctor',
  summary: 'Diagnosis of the worker setup: blockers, warnings and next actions',
  query: doctorQuery,
  responses: { 200: { description: '`{ doctor }`', schema: workerDoctorSchema }, ...badNow },
  handler: doctorHandler,
});

export const workerSmokeTestRoute = workerRoute({
  method: 'post',
  path: SMOKE_TEST_PATH,
  operationId: 'workerSmokeTest',
  summary: 'Runs the smoke workflow on workflow-runs and waits for a worker to complete it',
  access: WORKSPACE_WRITE,
  body: smokeBody,
  responses: smokeResponses,
  handler: smokeHandler,
});

// ---------------------------------------------------------------------------------------------
// Local AI CLI sessions

const KIND_MESSAGE = 'kind must be cliA or cliB';
const kindSchema = z.enum(['cliA', 'cliB'], { error: KIND_MESSAGE });

const sessionBody = z.strictObject({
  action: z.enum(['prepare', 'verify', 'disconnect'], { error: 'action must be prepare, verify or disconnect' }).optional(),
  kind: kindSchema.optional(),
});
const loginBody = z.strictObject({ kind: kindSchema });
const callbackBody = z.strictObject({
  callbackUrl: z.string({ error: 'callbackUrl is required' }).min(1, 'callbackUrl is required').max(4096),
});
const tokenBody = z.strictObject({
  kind: z.literal('cliA', { error: 'kind must be cliA: only cliA signs in with a token' }),
  token: z.string({ error: 'token is required' }).min(1, 'token is required').max(8192),
});
const modelsQuery = z.object({ kind: kindSchema.optional() });

/** The local AI CLI sign-in, driven from the product UI through a workspace key of a role above viewer. */
const localAiCliRoute = routeGroup({
  tags: ['Workers'],
  family: 'bare',
  access: WORKSPACE_WRITE,
  errors: {
    ...bareAuthErrors,
    400: 'Invalid body or query (bad kind or action), or the CLI refused the token or login',
    408: 'The CLI did not answer within its time budget',
    409: 'The CLI is not configured on this server, or cannot serve the request in its current sign-in state',
    503: 'The configured CLI does not start, or its login ended before giving an authorization URL',
  },
  pathPrefix: LOCAL_AI_CLI_PATH,
});

const DEFAULT_KIND = 'cliA';

/** What every local AI CLI service call starts with: the request's entity manager, the CLI service and the caller. */
const cliArgs = (ctx: AppContext, input: { deps: AppDeps; principal: WorkspacePrincipal }) =>
  [ctx.state.em, input.deps.services.workers.localAiCli, input.principal] as const;

export const localAiCliSessionRoute = localAiCliRoute({
  method: 'post',
  path: '/session',
  operationId: 'localAiCliSession',
  summary: "Prepares, verifies (default) or disconnects the workspace's session with a local AI CLI",
  body: sessionBody,
  responses: {
    200: { description: '`{ session }`: readiness of the session', schema: localAiCliSessionResultSchema },
  },
  handler: async (ctx, input) => {
    const session = await localAiCliSession(...cliArgs(ctx, input), input.body.action ?? 'verify', input.body.kind ?? DEFAULT_KIND);
    return { status: 200, body: { session } };
  },
});

export const localAiCliLoginRoute = localAiCliRoute({
  method: 'post',
  path: '/login',
  operationId: 'localAiCliLogin',
  summary: "Starts the CLI's browser login and answers its authorization URL",
  body: loginBody,
  responses: {
    200: { description: '`{ login: { kind, authorizationUrl, expiresAt }, session }`', schema: localAiCliLoginResultSchema },
  },
  handler: async (ctx, input) => {
    const { session, ...login } = await startLocalAiCliLogin(...cliArgs(ctx, input), input.body.kind);
    return { status: 200, body: { login, session } };
  },
});

export const localAiCliCallbackRoute = localAiCliRoute({
  method: 'post',
  path: '/callback',
  operationId: 'localAiCliCallback',
  summary: "Hands the login's redirect URL back to the pending login and verifies the session",
  body: callbackBody,
  responses: { 200: { description: '`{ session }`', schema: localAiCliSessionResultSchema } },
  handler: async (ctx, input) => {
    const session = await completeLocalAiCliLogin(...cliArgs(ctx, input), input.body.callbackUrl);
    return { status: 200, body: { session } };
  },
});

export const localAiCliTokenRoute = localAiCliRoute({
  method: 'post',
  path: '/token',
  operationId: 'localAiCliToken',
  summary: 'Signs cliA in with a token, stored as an encrypted credential and never answered',
  body: tokenBody,
  responses: { 200: { description: '`{ session }`', schema: localAiCliSessionResultSchema } },
  handler: async (ctx, input) => {
    const session = await storeLocalAiCliToken(...cliArgs(ctx, input), input.body.kind, input.body.token);
    return { status: 200, body: { session } };
  },
});

export const localAiCliModelsRoute = localAiCliRoute({
  method: 'get',
  path: '/models',
  operationId: 'localAiCliModels',
  summary: "The models the workspace's CLI offers",
  access: WORKSPACE_READ,
  query: modelsQuery,
  responses: { 200: { description: '`{ kind, models }`', schema: localAiCliModelsResultSchema } },
  handler: async (ctx, input) => {
    const result = await listLocalAiCliModels(...cliArgs(ctx, input), input.query.kind ?? DEFAULT_KIND);
    return { status: 200, body: result };
  },
});

export const sessionWorkerStatusRoute = sessionTwin(workerStatusRoute, '/api/workers/status', 'sessionWorkerStatus');
export const sessionWorkerDoctorRoute = sessionTwin(workerDoctorRoute, '/api/workers/doctor', 'sessionWorkerDoctor');
export const sessionWorkerSmokeTestRoute = sessionTwin(workerSmokeTestRoute, '/api/workers/smoke-test', 'sessionWorkerSmokeTest');

const localAiCliRoutes = [
  localAiCliSessionRoute,
  localAiCliLoginRoute,
  localAiCliCallbackRoute,
  localAiCliTokenRoute,
  localAiCliModelsRoute,
] as AnyRoute[];

export const workerRoutes: AnyRoute[] = [
  workerStatusRoute,
  workerDoctorRoute,
  workerSmokeTestRoute,
  ...localAiCliRoutes,
  sessionWorkerStatusRoute,
  sessionWorkerDoctorRoute,
  sessionWorkerSmokeTestRoute,
  ...localAiCliRoutes.map((route) =>
    sessionTwin(
      route,
      route.path.replace('/api/v1/', '/api/'),
      `session${route.operationId.charAt(0).toUpperCase()}${route.operationId.slice(1)}`,
    ),
  ),
];
