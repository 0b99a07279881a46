import { z } from 'zod';
import { COLUMN_TYPES } from '../../engine/statuses';
import { bareErrorSchema, isoDate, timestampFields, url } from './index';

/** Response schemas of the databases area: databases, tables, rows, imports and read-only SQL. */

export const columnSchema = z
  .strictObject({
    name: z.string(),
    type: z.enum(COLUMN_TYPES),
    tableReference: z.literal(true).optional().describe('Cells hold ids of managed tables of the workspace'),
  })
  .meta({ id: 'TableColumn' });

export const databaseSchema = z
  .strictObject({ id: z.string(), name: z.string(), tableCount: z.number().int(), createdAt: isoDate, updatedAt: isoDate })
  .meta({ id: 'UserDatabase' });

export const tableSchema = z
  .strictObject({
    id: z.string(),
    databaseId: z.string(),
    databaseName: z.string(),
    name: z.string().describe('Also the table name in read-only SQL'),
    columns: z.array(columnSchema),
    rowCount: z.number().int(),
    trashed: z.boolean(),
    ...timestampFields,
  })
  .meta({ id: 'UserTable' });

export const rowSchema = z
  .strictObject({ rowIndex: z.number().int().describe('Stable identity of the row'), values: z.record(z.string(), z.unknown()) })
  .meta({ id: 'TableRow' });

export const databaseListSchema = z.strictObject({ databases: z.array(databaseSchema), tables: z.array(tableSchema) });

export const createdSchema = z.union([
  z.strictObject({ database: databaseSchema }).describe('`databaseName` alone: the new database'),
  z
    .strictObject({ database: databaseSchema, table: tableSchema, rowsInserted: z.number().int() })
    .describe('A new table (and its database when it was new)'),
]);

export const tableEnvelopeSchema = z.strictObject({ table: tableSchema });

export const rowPageSchema = z.strictObject({
  table: tableSchema,
  rows: z.array(rowSchema),
  pagination: z.strictObject({ limit: z.number().int(), offset: z.number().int(), returned: z.number().int(), total: z.number().int() }),
});

export const rowResultSchema = z.strictObject({ tableId: z.string(), row: rowSchema });
export const rowDeletedSchema = z.strictObject({ tableId: z.string(), rowIndex: z.number().int(), deleted: z.literal(true) });

/** A 400 that names the offending column (or field). */
export const valueErrorSchema = bareErrorSchema.describe('`{ error, column? , field? }`: the offending column is named');

export const importResultSchema = z.strictObject({
  table: tableSchema,
  stats: z.strictObject({
    rowsInserted: z.number().int(),
    columns: z.number().int(),
    bytes: z.number().int(),
    delimiter: z.string(),
    hasHeader: z.boolean(),
    createdTable: z.boolean().describe('false when the rows were appended to an existing table of that name'),
    createdDatabase: z.boolean(),
    inferredTypes: z.record(z.string(), z.enum(COLUMN_TYPES)),
  }),
  rowsUrl: url,
});

/** The JSON export: one object per row, column → value (the CSV export has the same columns). */
export const tableExportSchema = z.array(z.record(z.string(), z.unknown())).meta({ id: 'TableExport' });

export const queryResultSchema = z.strictObject({
  columns: z.array(z.string()),
  rows: z.array(z.record(z.string(), z.unknown())),
  truncated: z.boolean(),
  durationMs: z.number(),
});

export const availableTablesSchema = z.array(z.strictObject({ name: z.string(), columns: z.array(columnSchema) }));

export const slowQuerySchema = bareErrorSchema.and(z.object({ availableTables: availableTablesSchema }));

export const managedRowSchema = z
  .strictObject({ key: z.string(), revision: z.number().int(), values: z.record(z.string(), z.unknown()) })
  .meta({ id: 'ManagedRow' });

export const managedRowResultSchema = z.strictObject({ tableId: z.string(), row: managedRowSchema });

export const declaredTableSchema = z
  .strictObject({
    tableId: z.string(),
    tableKey: z.string(),
    databaseId: z.string(),
    databaseName: z.string(),
    name: z.string(),
    keyColumn: z.string(),
    columns: z.array(columnSchema),
    classification: z.literal('non_sensitive'),
    ownerPackageKey: z.string().nullable(),
    rowCount: z.number().int(),
    declaredAt: isoDate,
  })
  .meta({ id: 'DeclaredConfigurationTable' });

export const catalogSchema = z.strictObject({
  applyEnabled: z.boolean(),
  applyDisabledReason: z.enum(['writes_disabled']).nullable(),
  databases: z.array(z.strictObject({ id: z.string(), name: z.string() })),
  tables: z.array(declaredTableSchema),
});

export const historySchema = z.strictObject({
  receipts: z.array(
    z.strictObject({
      id: z.string(),
      requestId: z.string(),
      actorId: z.string(),
      packageKey: z.string(),
      actionIds: z.array(z.string()),
      status: z.literal('applied'),
      createdAt: isoDate,
    }),
  ),
});

export const storageUnavailableSchema = bareErrorSchema.and(
  z.object({ applyEnabled: z.literal(false), applyDisabledReason: z.literal('storage_unavailable') }),
);

const packageRowSchema = z.strictObject({ key: z.string(), values: z.record(z.string(), z.unknown()) });
export const configurationPackageSchema = z
  .strictObject({
    schema: z.literal('svc.configuration-artifact.v1'),
    packageKey: z.string(),
    tables: z.array(
      z.strictObject({ tableKey: z.string(), name: z.string(), columns: z.array(columnSchema), rows: z.array(packageRowSchema) }),
    ),
  })
  .meta({ id: 'ConfigurationPackage' });

export const blockerSchema = z.strictObject({
  tableKey: z.string(),
  rowKey: z.string().max(256).nullable(),
  kind: z.enum(['schema', 'ownership', 'classification', 'missing', 'unexpected', 'changed', 'reference']),
  reason: z.string(),
});

export const planSchema = z
  .strictObject({
    packageKey: z.string(),
    applyable: z.boolean(),
    actions: z.array(
      z.strictObject({ id: z.string(), tableKey: z.string(), rowKey: z.string(), action: z.enum(['create', 'update', 'unchanged']) }),
    ),
    blockers: z.array(blockerSchema),
  })
  .meta({ id: 'ConfigurationPlan' });

export const proposalSchema = z
  .strictObject({
    id: z.string(),
    packageKey: z.string(),
    status: z.enum(['pending', 'confirmed', 'applied']),
    createdBy: z.string(),
    createdAt: isoDate,
    expiresAt: isoDate,
    confirmedBy: z.string().nullable(),
    confirmedAt: isoDate.nullable(),
  })
  .meta({ id: 'ConfigurationProposal' });

export const receiptSchema = historySchema.shape.receipts.element;

export const configurationOperationResultSchema = z.union([
  z.strictObject({ table: declaredTableSchema }).describe('declare'),
  z
    .strictObject({
      package: configurationPackageSchema,
      stats: z.strictObject({ tables: z.number().int(), rows: z.number().int(), bytes: z.number().int() }),
    })
    .describe('export'),
  z.strictObject({ valid: z.boolean(), issues: z.array(z.string()), bytes: z.number().int() }).describe('validate'),
  planSchema.describe('preview'),
  z.strictObject({ proposal: proposalSchema, preview: planSchema, reviewUrl: url }).describe('prepare'),
  z.strictObject({ receipt: receiptSchema, replayed: z.boolean() }).describe('apply'),
]);
