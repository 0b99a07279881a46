import { z } from 'zod';
import { routeGroup, ANY_KEY_READ, SESSION_READ } from '../http/route';
import { requestOrigin } from '../http/urls';
import { runFiltersQuery, pathId } from '../schemas';
import { executionDetailSchema, logExportSchema, logStatsSchema, sessionLogsSchema } from '../schemas/logs';
import { echoFilters, executionDetail, exportLogs, logStats, LOGS_LIMIT, sessionLogs } from '../../services/runs/logs';
import { clampLimit } from '../../services/kernel/pagination';
import { projectionFor, type WorkspacePrincipal } from '../../services/kernel/principal';
import type { RunFilters } from '../../services/runs';
import { executionLinker, withRunUrls } from '../http/links';

const filterQuery = runFiltersQuery;
type FilterQuery = z.output<typeof filterQuery>;

function filters(principal: WorkspacePrincipal, query: FilterQuery): RunFilters {
  const { limit, ...rest } = query;
  return { ...rest, limit: clampLimit(limit, LOGS_LIMIT), projection: projectionFor(principal) };
}

const logRoute = routeGroup({ tags: ['Logs'], family: 'bare', access: ANY_KEY_READ });
const listErrors = {
  400: 'Invalid filter (e.g. dateFrom or dateTo not ISO-8601)',
};

export const logStatsRoute = logRoute({
  method: 'get',
  path: '/api/v1/logs/stats',
  operationId: 'logStats',
  summary: 'Aggregates over the runs matching the filters (computed in SQL)',
  query: filterQuery,
  responses: { 200: { description: '`{ workspaceId, filters, generatedAt, stats }`', schema: logStatsSchema }, ...listErrors },
  handler: async (ctx, { principal, query }) => {
    const f = filters(principal, query);
    const stats = await logStats(ctx.state.em, principal, f, executionLinker(requestOrigin(ctx)));
    return { status: 200, body: { workspaceId: principal.workspaceId, filters: echoFilters(f), generatedAt: new Date(), stats } };
  },
});

export const logExportRoute = logRoute({
  method: 'get',
  path: '/api/v1/logs/export',
  operationId: 'logExport',
  summary: 'Runs matching the filters as a JSON or CSV attachment (`?format=csv`; anything else is JSON)',
  query: filterQuery.extend({ format: z.string().optional() }),
  responses: {
    200: {
      description:
        'JSON `{ workspaceId, exportedAt, filters, runCount, runs }` (schema below), or with `?format=csv` a CSV attachment (text/csv)',
      schema: logExportSchema,
    },
    ...listErrors,
  },
  handler: async (ctx, { principal, query }) => {
    const { format, ...rest } = query;
    const exported = await exportLogs(ctx.state.em, principal, filters(principal, rest), format === 'csv' ? 'csv' : 'json');
    const headers = { 'Content-Disposition': `attachment; filename=${exported.filename}`, 'Cache-Control': 'no-store' };
    if (exported.format === 'csv')
      return { status: 200, headers: { ...headers, 'Content-Type': 'text/csv; charset=utf-8' }, body: exported.csv };
    const { exportedAt, filters: echoed, runs } = exported;
    const origin = requestOrigin(ctx);
    return {
      status: 200,
      headers,
      body: {
        workspaceId: principal.workspaceId,
        exportedAt,
        filters: echoed,
        runCount: runs.length,
        runs: runs.map((v) => withRunUrls(v, origin)),
      },
    };
  },
});

export const executionDetailRoute = logRoute({
  method: 'get',
  path: '/api/v1/logs/executions/{executionId}',
  operationId: 'getExecution',
  summary: 'Execution detail of one run (the execution id is the run id), unwrapped',
  params: z.object({ executionId: pathId }),
  responses: {
    200: { description: 'Execution detail', schema: executionDetailSchema },
    404: '`Execution not found` (also for runs of other workspaces)',
  },
  handler: async (ctx, { principal, params, deps }) => {
    const origin = requestOrigin(ctx);
    const detail = await executionDetail(ctx.state.em, principal, params.executionId, executionLinker(origin), {
      namespace: deps.temporal.namespace,
      taskQueue: deps.services.runs.launcher.taskQueue,
    });
    return { status: 200, body: { ...detail, run: withRunUrls(detail.run, origin) } };
  },
});

export const sessionLogsRoute = logRoute({
  method: 'get',
  path: '/api/logs',
  operationId: 'sessionLogs',
  summary: "Runs of the session's workspace matching the shared logs filters",
  access: SESSION_READ,
  query: filterQuery,
  responses: {
    200: { description: '`{ runs }`: run summaries (GET /api/v1/runs/{id} has the full run)', schema: sessionLogsSchema },
    ...listErrors,
  },
  handler: async (ctx, { principal, query }) => {
    const runs = await sessionLogs(ctx.state.em, principal, filters(principal, query));
    return { status: 200, body: { runs } };
  },
});

export const logRoutes = [logStatsRoute, logExportRoute, executionDetailRoute, sessionLogsRoute];
