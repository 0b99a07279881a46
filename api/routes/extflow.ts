/**
 * The extflow worker routes: import a bundle of the external workflow tool, smoke-test the
 * imported workflows, bootstrap their credentials from the environment, and import the
 * original sub-workflows they call; the `legacyalias` aliases of the last three; session twins
 * under /api/workers/.
 */
import { z } from 'zod';
import { routeGroup, sessionTwin, type AnyRoute, WORKSPACE_WRITE } from '../http/route';
import { requestOrigin } from '../http/urls';
import { workflowLinks } from '../http/links';
import {
  extflowBootstrapSchema,
  extflowImportResultSchema,
  extflowOriginalsResultSchema,
  extflowSmokeTestSchema,
} from '../schemas/extflow';
import type { AppContext } from '../context';
import type { AppDeps } from '../deps';
import type { WorkspacePrincipal } from '../../services/kernel/principal';
import {
  bootstrapExtflowCredentials,
  importExtflowBundle,
  importExtflowOriginals,
  smokeTestExtflow,
  type BundleSource,
  type SmokeOutcome,
} from '../../services/publishing/extflowImport';

const BASE = '/api/v1/workers/extflow';
const ALIAS = '/api/v1/workers/legacyalias';
const SESSION_BASE = '/api/workers/extflow';
const SESSION_ALIAS = '/api/workers/legacyalias';

/** The largest importBundleJson / importJson string (the body limit applies first). */
const MAX_JSON_CHARS = 5_000_000;
const jsonText = z.string().min(1, 'must not be empty').max(MAX_JSON_CHARS);
const bundlePath = z
  .string()
  .min(1, 'must not be empty')
  .max(1000)
  .describe("A file or directory inside the server's import directory (EXTFLOW_IMPORT_DIR)");

const doctorLinks = (ctx: AppContext) => ({
  appUrl: requestOrigin(ctx),
  smokeTest: 'POST /api/v1/workers/smoke-test',
  localAiCliSession: 'POST /api/v1/workers/local-ai-cli/session',
});

const withLinks = <T extends { workflows: Array<{ workflow: { id: string } }> }>(ctx: AppContext, result: T) => ({
  ...result,
  workflows: result.workflows.map((w) => ({ ...w, links: workflowLinks(ctx, w.workflow.id) })),
});

/** The handler of an import route: `importer` reads the body's bundle; 201 with the links of each imported workflow. */
const importHandler =
  (importer: typeof importExtflowBundle | typeof importExtflowOriginals) =>
  async (ctx: AppContext, { principal, body, deps }: { principal: WorkspacePrincipal; body: BundleSource; deps: AppDeps }) => {
    const { importResult, doctor } = await importer(ctx.state.em, principal, deps.services.extflow, body, doctorLinks(ctx));
    return { status: 201, body: { importResult: withLinks(ctx, importResult), doctor } };
  };

const badRequest = {
  400: 'Invalid body, bundle or bundlePath (outside the import directory, missing, malformed)',
};

/** Extflow through a workspace key of a role above viewer; each has a session twin under SESSION_BASE. */
const extflowRoute = routeGroup({ tags: ['Workers'], family: 'bare', access: WORKSPACE_WRITE, pathPrefix: BASE });

export const extflowImportBundleRoute = extflowRoute({
  method: 'post',
  path: '/import-bundle',
  operationId: 'extflowImportBundle',
  summary: "Import a bundle of the external tool's workflows (converted; upsert by externalId) and diagnose the workers",
  body: z.strictObject({ importBundleJson: jsonText.optional(), bundlePath: bundlePath.optional() }),
  responses: {
    201: { description: '`{ importResult: { bundle, workflows[] }, doctor }`', schema: extflowImportResultSchema },
    ...badRequest,
  },
  handler: importHandler(importExtflowBundle),
});

const smokeHttpStatus: Record<SmokeOutcome, 200 | 202 | 500> = { passed: 200, attention: 202, failed: 500 };

export const extflowSmokeTestRoute = extflowRoute({
  method: 'post',
  path: '/smoke-test',
  operationId: 'extflowSmokeTest',
  summary: 'Run every imported workflow (dry runs, or live runs through the queue) and report',
  body: z.strictObject({
    bundlePath: bundlePath.optional(),
    useQueue: z.boolean().optional(),
    waitForWorkerMs: z.number().finite().optional(),
  }),
  responses: {
    200: { description: '`{ importedWorkflowSmokeTest }`, every run succeeded', schema: extflowSmokeTestSchema },
    202: { description: 'attention: a workflow is not ready, waits, or was not finished in time', schema: extflowSmokeTestSchema },
    500: { description: 'failed: a run failed', schema: extflowSmokeTestSchema },
    ...badRequest,
  },
  handler: async (ctx, { principal, body, deps }) => {
    const { outcome, importedWorkflowSmokeTest } = await smokeTestExtflow(ctx.state.em, principal, deps.services.extflow, body);
    return { status: smokeHttpStatus[outcome], body: { importedWorkflowSmokeTest } };
  },
});

export const extflowBootstrapRoute = extflowRoute({
  method: 'post',
  path: '/credentials/bootstrap-from-env',
  operationId: 'extflowCredentialsBootstrap',
  summary: "Create the imported workflows' credentials from allowed deployment variables",
  body: z.strictObject({ bundlePath: bundlePath.optional() }),
  responses: {
    200: { description: '`{ bootstrap, doctor }`: created and skipped counts, never values', schema: extflowBootstrapSchema },
    ...badRequest,
  },
  handler: async (ctx, { principal, body, deps }) => ({
    status: 200,
    body: await bootstrapExtflowCredentials(ctx.state.em, principal, deps.services.extflow, body, doctorLinks(ctx)),
  }),
});

export const extflowOriginalsRoute = extflowRoute({
  method: 'post',
  path: '/subflows/import-originals',
  operationId: 'extflowImportOriginals',
  summary: 'Import the original sub-workflows that imported workflows call, and link their subworkflow nodes',
  body: z.strictObject({ importJson: jsonText.optional(), importBundleJson: jsonText.optional() }),
  responses: {
    201: { description: '`{ importResult: { bundle, workflows[], relinked[] }, doctor }`', schema: extflowOriginalsResultSchema },
    ...badRequest,
  },
  handler: importHandler(importExtflowOriginals),
});

const alias = (route: AnyRoute, path: string, operationId: string): AnyRoute => ({ ...route, path, operationId });

const keyRoutes: Array<[AnyRoute, string, string]> = [
  [extflowImportBundleRoute, 'import-bundle', 'ImportBundle'],
  [extflowSmokeTestRoute, 'smoke-test', 'SmokeTest'],
  [extflowBootstrapRoute, 'credentials/bootstrap-from-env', 'CredentialsBootstrap'],
  [extflowOriginalsRoute, 'subflows/import-originals', 'ImportOriginals'],
];

export const extflowRoutes: AnyRoute[] = [
  ...keyRoutes.map(([r]) => r),
  // The legacyalias family: the three routes the spec aliases (import-bundle has no alias).
  ...keyRoutes.slice(1).map(([r, p, op]) => alias(r, `${ALIAS}/${p}`, `legacyalias${op}`)),
  ...keyRoutes.map(([r, p, op]) => sessionTwin(r, `${SESSION_BASE}/${p}`, `sessionExtflow${op}`)),
  ...keyRoutes.slice(1).map(([r, p, op]) => sessionTwin(r, `${SESSION_ALIAS}/${p}`, `sessionLegacyalias${op}`)),
];
