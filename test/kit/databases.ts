/**
 * The databases area for tests: answer types derived from `api/schemas/databases` and the
 * one setup step most database tests share, creating a table with rows over HTTP.
 */
import type { z } from 'zod';
import type {
  availableTablesSchema,
  blockerSchema,
  catalogSchema,
  configurationPackageSchema,
  createdSchema,
  databaseListSchema,
  declaredTableSchema,
  historySchema,
  importResultSchema,
  managedRowResultSchema,
  planSchema,
  proposalSchema,
  queryResultSchema,
  receiptSchema,
  rowPageSchema,
  rowResultSchema,
  rowSchema,
  tableEnvelopeSchema,
  tableSchema,
} from '../../api/schemas/databases';
import { client, expectStatus, type ApiError, type Refusable } from './client';
import type { WorkspaceTarget } from './workflows';

export type UserTable = z.infer<typeof tableSchema>;
export type TableRow = z.infer<typeof rowSchema>;
export type TableEnvelope = z.infer<typeof tableEnvelopeSchema>;
export type RowPage = z.infer<typeof rowPageSchema>;
export type RowResult = z.infer<typeof rowResultSchema>;
export type DatabaseList = z.infer<typeof databaseListSchema>;
export type ImportResult = z.infer<typeof importResultSchema>;
/** POST /api/v1/databases with a table: the table, its database and the rows inserted. */
export type CreatedTable = Extract<z.infer<typeof createdSchema>, { table: unknown }>;
/**
 * POST /api/v1/databases/query: the result, or on a refusal `{ error, code }` (and on a timeout
 * `availableTables`); check `status` first.
 */
export type QueryAnswer = Refusable<z.infer<typeof queryResultSchema>> & { availableTables?: z.infer<typeof availableTablesSchema> };

/** A table definition as POST /api/v1/databases takes it. */
export interface TableBody {
  databaseName?: string;
  databaseId?: string;
  tableName: string;
  columns: object[];
  rows?: object[];
  [field: string]: unknown;
}

/** Creates a table (and its database when new) in `on`'s workspace; fails the test unless the answer is 201. */
export async function createTable(on: WorkspaceTarget, body: TableBody): Promise<CreatedTable> {
  const res = await client(on.app, on.ws.token).post<CreatedTable>('/api/v1/databases', body);
  return expectStatus(res, 201, `create table ${body.tableName}`).body;
}

/** Read-only SQL against `databaseId` as `on`'s workspace (POST /api/v1/databases/query). */
export function queryDatabase(on: WorkspaceTarget, databaseId: string, sql: string) {
  return client(on.app, on.ws.token).post<QueryAnswer>('/api/v1/databases/query', { databaseId, sql });
}

/** Managed configuration tables (`/api/v1/configuration/*`): the answers of each operation. */
export type ConfigurationBlocker = z.infer<typeof blockerSchema>;
export type ConfigurationPackage = z.infer<typeof configurationPackageSchema>;
export type ConfigurationPlan = z.infer<typeof planSchema>;
export type ConfigurationProposal = z.infer<typeof proposalSchema>;
export type ConfigurationCatalog = z.infer<typeof catalogSchema>;
export type ConfigurationHistory = z.infer<typeof historySchema>;
/** GET and PUT managed-rows; a refusal names the `column` or the `code`. */
export type ManagedRowAnswer = z.infer<typeof managedRowResultSchema> & Partial<ApiError>;
/** The answer of each `POST /api/v1/configuration/{operation}`. */
export interface ConfigurationOperations {
  declare: { table: z.infer<typeof declaredTableSchema> };
  export: { package: ConfigurationPackage; stats: { tables: number; rows: number; bytes: number } };
  validate: { valid: boolean; issues: string[]; bytes: number };
  preview: ConfigurationPlan;
  prepare: { proposal: ConfigurationProposal; preview: ConfigurationPlan; reviewUrl: string };
  apply: { receipt: z.infer<typeof receiptSchema>; replayed: boolean };
}
/** An operation's answer, or its refusal (`{ error, code?, blockers? }`); check `status` first. */
export type ConfigurationAnswer<K extends keyof ConfigurationOperations> = Refusable<ConfigurationOperations[K]> & {
  blockers?: ConfigurationBlocker[];
};
