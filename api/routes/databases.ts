import { z } from 'zod';
import { routeGroup, WORKSPACE_READ, WORKSPACE_WRITE } from '../http/route';
import { pathId } from '../schemas';
import {
  createdSchema,
  databaseListSchema,
  importResultSchema,
  queryResultSchema,
  slowQuerySchema,
  tableExportSchema,
  rowDeletedSchema,
  rowPageSchema,
  rowResultSchema,
  tableEnvelopeSchema,
  valueErrorSchema,
} from '../schemas/databases';
import { clampLimit } from '../../services/kernel/pagination';
import { invalidInput } from '../../services/kernel/errors';
import {
  CSV_MAX_BYTES,
  createDatabaseOrTable,
  deleteRow,
  exportTable,
  importCsv,
  insertRow,
  isCsvUpload,
  listDatabases,
  listRows,
  patchTable,
  runQuery,
  updateRow,
} from '../../services/databases';
import { readMultipart } from '../http/multipart';
import { tableRowsUrl } from '../http/links';
import { requestOrigin } from '../http/urls';

/** Databases through a workspace key; writes need a role above viewer. */
const databaseRoute = routeGroup({ tags: ['Databases'], family: 'bare', access: WORKSPACE_READ, pathPrefix: '/api/v1/databases' });
const tableParams = z.object({ tableId: pathId });
const notFoundDoc = (what: string) => ({ 404: `${what} not found, or in another workspace` });
const valueErrors = { 400: { description: 'Invalid input; the offending column is named', schema: valueErrorSchema } };

/** Rows pagination (spec Limits: limit and offset). */
export const ROWS_LIMIT = { default: 100, min: 1, max: 1000 };

export const listDatabasesRoute = databaseRoute({
  method: 'get',
  path: '',
  operationId: 'listDatabases',
  summary: 'Databases and live tables of the workspace',
  responses: { 200: { description: '`{ databases, tables }`', schema: databaseListSchema } },
  handler: async (ctx, { principal }) => ({ status: 200, body: await listDatabases(ctx.state.em, principal.workspaceId) }),
});

export const createDatabaseRoute = databaseRoute({
  method: 'post',
  path: '',
  operationId: 'createDatabaseOrTable',
  summary: '`databaseName` alone creates a database; with `tableName` and `columns` (and optional `rows`) a table in it',
  access: WORKSPACE_WRITE,
  body: z.strictObject({
    databaseName: z.string({ error: 'databaseName is required' }),
    tableName: z.string().optional(),
    columns: z.array(z.unknown()).optional(),
    rows: z.array(z.unknown()).optional(),
  }),
  responses: {
    201: { description: '`{ database }` or `{ database, table, rowsInserted }`', schema: createdSchema },
    ...valueErrors,
    409: 'A database or table of that name exists',
  },
  handler: async (ctx, { principal, body }) => {
    const result = await createDatabaseOrTable(ctx.state.em, principal.workspaceId, body);
    const { kind, ...rest } = result;
    return { status: 201, body: kind === 'database' ? { database: rest.database } : rest };
  },
});

export const patchTableRoute = databaseRoute({
  method: 'patch',
  path: '/{tableId}',
  operationId: 'patchTable',
  summary: '`{ trashed }` trashes or restores a table; `{ column, defaultValue }` adds a column, filling existing rows',
  access: WORKSPACE_WRITE,
  params: tableParams,
  body: z
    .strictObject({ trashed: z.boolean().optional(), column: z.unknown().optional(), defaultValue: z.unknown().optional() })
    .refine((b) => (b.trashed === undefined) !== (b.column === undefined), {
      message: 'Send either { trashed } or { column, defaultValue }.',
    })
    .refine((b) => b.trashed === undefined || b.defaultValue === undefined, { message: 'defaultValue goes with column.' }),
  responses: {
    200: { description: '`{ table }`', schema: tableEnvelopeSchema },
    ...valueErrors,
    ...notFoundDoc('Table'),
    409: 'Restoring a table whose name is taken',
  },
  handler: async (ctx, { principal, params, body }) => {
    const input = body.trashed !== undefined ? { trashed: body.trashed } : { column: body.column, defaultValue: body.defaultValue };
    return { status: 200, body: { table: await patchTable(ctx.state.em, principal.workspaceId, params.tableId, input) } };
  },
});

export const listRowsRoute = databaseRoute({
  method: 'get',
  path: '/{tableId}/rows',
  operationId: 'listTableRows',
  summary: 'Rows in rowIndex order, paged by limit (default 100, clamped 1 to 1000) and offset',
  params: tableParams,
  query: z.object({
    limit: z.string().optional(),
    offset: z
      .string()
      .regex(/^\d{1,9}$/, 'offset must be a non-negative integer')
      .optional(),
  }),
  responses: { 200: { description: '`{ table, rows, pagination }`', schema: rowPageSchema }, ...notFoundDoc('Table') },
  handler: async (ctx, { principal, params, query }) => {
    const page = { limit: clampLimit(query.limit, ROWS_LIMIT), offset: query.offset ? Number(query.offset) : 0 };
    return { status: 200, body: await listRows(ctx.state.em, principal.workspaceId, params.tableId, page) };
  },
});

export const insertRowRoute = databaseRoute({
  method: 'post',
  path: '/{tableId}/rows',
  operationId: 'insertTableRow',
  summary: 'Insert a row `{ values }`',
  access: WORKSPACE_WRITE,
  params: tableParams,
  body: z.strictObject({ values: z.record(z.string(), z.unknown(), { error: 'values must be an object of column name to value' }) }),
  responses: { 201: { description: '`{ tableId, row }`', schema: rowResultSchema }, ...valueErrors, ...notFoundDoc('Table') },
  handler: async (ctx, { principal, params, body }) => ({
    status: 201,
    body: await insertRow(ctx.state.em, principal.workspaceId, params.tableId, body.values),
  }),
});

const rowIndex = z
  .number({ error: 'rowIndex must be a positive integer' })
  .int('rowIndex must be a positive integer')
  .min(1, 'rowIndex must be a positive integer')
  .max(2_147_483_647);

export const updateRowRoute = databaseRoute({
  method: 'patch',
  path: '/{tableId}/rows',
  operationId: 'updateTableRow',
  summary: 'Update a row `{ rowIndex, values }`: only supplied keys change; absent keys and JSON null cells are left untouched',
  access: WORKSPACE_WRITE,
  params: tableParams,
  body: z.strictObject({
    rowIndex,
    values: z.record(z.string(), z.unknown(), { error: 'values must be an object of column name to value' }),
  }),
  responses: { 200: { description: '`{ tableId, row }`', schema: rowResultSchema }, ...valueErrors, ...notFoundDoc('Table or row') },
  handler: async (ctx, { principal, params, body }) => ({
    status: 200,
    body: await updateRow(ctx.state.em, principal.workspaceId, params.tableId, body.rowIndex, body.values),
  }),
});

export const deleteRowRoute = databaseRoute({
  method: 'delete',
  path: '/{tableId}/rows',
  operationId: 'deleteTableRow',
  summary: 'Delete a row `{ rowIndex }`',
  access: WORKSPACE_WRITE,
  params: tableParams,
  body: z.strictObject({ rowIndex }),
  responses: {
    200: { description: '`{ tableId, rowIndex, deleted: true }`', schema: rowDeletedSchema },
    ...notFoundDoc('Table or row'),
  },
  handler: async (ctx, { principal, params, body }) => ({
    status: 200,
    body: await deleteRow(ctx.state.em, principal.workspaceId, params.tableId, body.rowIndex),
  }),
});

const IMPORT_FIELDS = ['databaseId', 'databaseName', 'tableName', 'hasHeader', 'delimiter', 'columns'] as const;

export const importCsvRoute = databaseRoute({
  method: 'post',
  path: '/import',
  operationId: 'importCsv',
  summary:
    'CSV import (multipart/form-data): `file` (.csv or a CSV MIME type, at most 5 MB), `databaseId` or `databaseName`, `tableName` (default: the cleaned file name), `hasHeader` (default true), `delimiter` (detected when omitted), `columns` (JSON array of name/type overrides). Appends when the table exists.',
  access: WORKSPACE_WRITE,
  responses: {
    201: { description: '`{ table, stats, rowsUrl }`', schema: importResultSchema },
    ...valueErrors,
    404: 'databaseId not found in this workspace',
    409: 'A concurrent import created the same table',
    413: 'File over 5 MB',
    415: 'Not multipart/form-data, or the file is not CSV',
    422: 'Malformed CSV: `{ error, code: csv_malformed, line }`',
  },
  handler: async (ctx, { principal }) => {
    const { fields, file } = await readMultipart(ctx, {
      fileField: 'file',
      maxFileBytes: CSV_MAX_BYTES,
      fields: IMPORT_FIELDS,
      accept: isCsvUpload,
      messages: {
        tooLarge: 'The CSV file is over the 5 MB limit.',
        unsupported: 'The file must be CSV (a .csv name or a CSV MIME type such as text/csv).',
      },
    });
    if (!file) throw invalidInput('file is required: send the CSV as the multipart field "file".', { details: { field: 'file' } });
    const result = await importCsv(ctx.state.em, principal.workspaceId, { ...fields, fileName: file.fileName, data: file.data });
    return { status: 201, body: { ...result, rowsUrl: tableRowsUrl(requestOrigin(ctx), result.table.id) } };
  },
});

export const exportTableRoute = databaseRoute({
  method: 'get',
  path: '/{tableId}/export',
  operationId: 'exportTable',
  summary: 'Download the rows as JSON (default; structure kept) or CSV (json cells as compact JSON text), streamed as an attachment',
  params: tableParams,
  query: z.object({ format: z.enum(['csv', 'json'], { error: 'format must be csv or json' }).default('json') }),
  responses: {
    200: {
      description: 'The file, with `Content-Disposition: attachment`: JSON (schema below) or, with `?format=csv`, text/csv',
      schema: tableExportSchema,
    },
    ...notFoundDoc('Table'),
  },
  handler: async (ctx, { principal, params, query }) => {
    const file = await exportTable(ctx.state.em, principal.workspaceId, params.tableId, query.format);
    return {
      status: 200,
      body: file.stream,
      headers: {
        'Content-Type': file.contentType,
        'Content-Disposition': `attachment; filename="${file.fileName}"`,
        'Cache-Control': 'no-store',
      },
    };
  },
});

export const queryRoute = databaseRoute({
  method: 'post',
  path: '/query',
  operationId: 'queryDatabase',
  summary:
    "Read-only SQL over one database: a single SELECT over its tables, parsed by the PostgreSQL parser, run READ ONLY as the database's own role with a statement timeout, rows and bytes capped",
  body: z.strictObject({
    databaseId: z.string({ error: 'databaseId is required' }).min(1),
    sql: z.string({ error: 'sql is required' }).min(1, 'sql is required'),
  }),
  responses: {
    200: { description: '`{ columns, rows, truncated, durationMs }`', schema: queryResultSchema },
    400: 'Refused by the checker (`sql_not_allowed`) or by PostgreSQL (`sql_error`, its message)',
    404: 'Database not found, or in another workspace',
    408: { description: 'Over the statement timeout: `{ error, code: query_timeout, availableTables }`', schema: slowQuerySchema },
  },
  handler: async (ctx, { principal, body, deps }) => ({
    status: 200,
    body: await runQuery(ctx.state.em, principal.workspaceId, body, deps.config.databaseQuery),
  }),
});

export const databaseRoutes = [
  queryRoute,
  listDatabasesRoute,
  createDatabaseRoute,
  importCsvRoute,
  patchTableRoute,
  listRowsRoute,
  insertRowRoute,
  updateRowRoute,
  deleteRowRoute,
  exportTableRoute,
];
