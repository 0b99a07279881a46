import { z } from 'zod';
import { defineRoute } from '../http/route';
import { requestOrigin } from '../http/urls';
import { bareAuthErrors, bareErrorSchema, runFiltersQuery } from '../schemas';
import type { AppContext } from '../context';
import { echoFilters, executionDetail, exportFilename, logStats, LOGS_LIMIT, queryLogRuns, runsCsv } from '../../services/logs';
import { clampLimit } from '../../services/pagination';
import { projectionFor, type WorkspacePrincipal } from '../../services/principal';
import { queryRuns, type RunFilters } from '../../services/runQueries';
import { loadRunViews, projectRun } from '../../services/runs';

const anyObject = z.looseObject({});
const base = (ctx: AppContext) => ({ origin: requestOrigin(ctx) });

const filterQuery = runFiltersQuery;
type FilterQuery = z.output<typeof filterQuery>;

function filters(principal: WorkspacePrincipal, query: FilterQuery): RunFilters {
  const { limit, ...rest } = query;
  return { ...rest, limit: clampLimit(limit, LOGS_LIMIT), projection: projectionFor(principal) };
}

const listErrors = { ...bareAuthErrors, 400: { description: 'Invalid filter (e.g. dateFrom or dateTo not ISO-8601)', schema: bareErrorSchema } };

export const logStatsRoute = defineRoute({
  method: 'get',
  path: '/api/v1/logs/stats',
  operationId: 'logStats',
  summary: 'Aggregates over the runs matching the filters (computed in SQL)',
  tags: ['Logs'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  query: filterQuery,
  responses: { 200: { description: '`{ workspaceId, filters, generatedAt, stats }`', schema: anyObject }, ...listErrors },
  handler: async (ctx, { principal, query }) => {
    const f = filters(principal, query);
    const stats = await logStats(ctx.state.em, principal, f, base(ctx));
    return { status: 200, body: { workspaceId: principal.workspaceId, filters: echoFilters(f), generatedAt: new Date(), stats } };
  },
});

export const logExportRoute = defineRoute({
  method: 'get',
  path: '/api/v1/logs/export',
  operationId: 'logExport',
  summary: 'Runs matching the filters as a JSON or CSV attachment (`?format=csv`; anything else is JSON)',
  tags: ['Logs'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  query: filterQuery.extend({ format: z.string().optional() }),
  responses: { 200: { description: 'JSON `{ workspaceId, exportedAt, filters, runCount, runs }` or CSV' }, ...listErrors },
  handler: async (ctx, { principal, query }) => {
    const { format, ...rest } = query;
    const f = filters(principal, rest);
    const workspaceId = principal.workspaceId;
    const runs = await queryLogRuns(ctx.state.em, workspaceId, f);
    const views = await loadRunViews(ctx.state.em, runs, base(ctx));
    const exportedAt = new Date();
    const csv = format === 'csv';
    const headers = {
      'Content-Disposition': `attachment; filename=${exportFilename(workspaceId, exportedAt, csv ? 'csv' : 'json')}`,
      'Cache-Control': 'no-store',
    };
    if (csv) {
      return { status: 200, headers: { ...headers, 'Content-Type': 'text/csv; charset=utf-8' }, body: runsCsv(views, projectionFor(principal) === 'full') };
    }
    const body = { workspaceId, exportedAt, filters: echoFilters(f), runCount: views.length, runs: views.map((v) => projectRun(principal, v)) };
    return { status: 200, headers, body };
  },
});

export const executionDetailRoute = defineRoute({
  method: 'get',
  path: '/api/v1/logs/executions/{executionId}',
  operationId: 'getExecution',
  summary: 'Execution detail of one run (the execution id is the run id), unwrapped',
  tags: ['Logs'],
  family: 'bare',
  access: { kind: 'apiKey', scopes: 'safe-read' },
  params: z.object({ executionId: z.string().min(1).max(100) }),
  responses: {
    200: { description: 'Execution detail', schema: anyObject },
    ...bareAuthErrors,
    404: { description: '`Execution not found` (also for runs of other workspaces)', schema: bareErrorSchema },
  },
  handler: async (ctx, { principal, params, deps }) => {
    const detail = await executionDetail(ctx.state.em, principal, params.executionId, base(ctx), { namespace: deps.temporal.namespace });
    return { status: 200, body: detail };
  },
});

export const sessionLogsRoute = defineRoute({
  method: 'get',
  path: '/api/logs',
  operationId: 'sessionLogs',
  summary: "Runs of the session's workspace matching the shared logs filters",
  tags: ['Logs'],
  family: 'bare',
  access: { kind: 'session' },
  query: filterQuery,
  responses: { 200: { description: '`{ runs }`', schema: z.object({ runs: z.array(anyObject) }) }, ...listErrors },
  handler: async (ctx, { principal, query }) => {
    const f = filters(principal, query);
    const runs = await queryRuns(ctx.state.em, principal.workspaceId, f);
    const views = await loadRunViews(ctx.state.em, runs, base(ctx));
    return { status: 200, body: { runs: views.map((v) => projectRun(principal, v)) } };
  },
});

export const logRoutes = [logStatsRoute, logExportRoute, executionDetailRoute, sessionLogsRoute];
