import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, timestamps, timestamptz, workspaceScoped } from './columns';
import type { ColumnType } from '../../engine/statuses';
export type { ColumnType } from '../../engine/statuses';

export interface TableColumn {
  name: string;
  type: ColumnType;
  /** Text column whose cells hold ids of managed tables of the same workspace (managed configuration). */
  tableReference?: true;
}

export const UserDatabaseSchema = entity('UserDatabase', 'user_databases', {
  ...workspaceScoped(),
  name: p.string(),
  schemaName: p.string(),
  roleName: p.string(),
  ...timestamps(),
});
/**
 * A user database: a PostgreSQL schema of its own (`schemaName`) and a role (`roleName`) that
 * holds USAGE on that schema and SELECT on its live tables, nothing else; the read-only SQL
 * sandbox runs as that role. Both names carry the database id, so they are unique in the cluster.
 */
export type UserDatabase = InferEntity<typeof UserDatabaseSchema>;

export const UserTableSchema = entity('UserTable', 'user_tables', {
  ...workspaceScoped(),
  databaseId: p.string(),
  name: p.string(),
  physicalName: p.string(),
  columns: p.json<TableColumn[]>(),
  trashed: p.boolean(),
  trashedAt: timestamptz('trashed_at').nullable(),
  ...timestamps(),
});
/**
 * A user table: a real table `schemaName.physicalName` of its database with one typed column
 * per entry of `columns` and the identity column `"rowIndex"`. `physicalName` equals `name`
 * while the table is live; a trashed table is renamed out of the way (`_trash_<id>`) and its
 * SELECT grant revoked, so its name is free and SQL cannot reach it.
 */
export type UserTable = InferEntity<typeof UserTableSchema>;

export const ManagedTableSchema = entity('ManagedTable', 'managed_tables', {
  tableId: p.string().primary(),
  workspaceId: p.string(),
  /** Logical key of the table in configuration packages. */
  tableKey: p.string(),
  keyColumn: p.string(),
  classification: p.string().$type<'non_sensitive'>(),
  /** The package whose apply last wrote the table; null until one does. */
  ownerPackageKey: p.string().nullable(),
  declaredBy: p.string(),
  declaredAt: timestamptz('declared_at'),
});
/**
 * A table declared as non-sensitive configuration (permanent). Its rows have a stable textual
 * key (`keyColumn`, immutable), lifecycle values (`active`, `retired`) and a revision (the
 * physical column `_revision`); they are written through managed-rows or applied packages only.
 */
export type ManagedTable = InferEntity<typeof ManagedTableSchema>;

export const ConfigurationReceiptSchema = entity('ConfigurationReceipt', 'configuration_receipts', {
  ...workspaceScoped(),
  requestId: p.string(),
  inputDigest: p.string(),
  actorId: p.string(),
  packageKey: p.string(),
  actionIds: p.json<string[]>(),
  status: p.string().$type<'applied'>(),
  ...createdAt(),
});
/** A successful apply of a configuration package: who, which package, which actions. No row values. */
export type ConfigurationReceipt = InferEntity<typeof ConfigurationReceiptSchema>;

export const ConfigurationBaselineSchema = entity('ConfigurationBaseline', 'configuration_baselines', {
  workspaceId: p.string().primary(),
  packageKey: p.string().primary(),
  tableKey: p.string().primary(),
  rows: p.json<Record<string, Record<string, unknown>>>(),
  receiptId: p.string(),
  updatedAt: timestamptz('updated_at'),
});
/** What the last successful apply of a package wrote to one of its tables: row key → values. */
export type ConfigurationBaseline = InferEntity<typeof ConfigurationBaselineSchema>;

export const ConfigurationProposalSchema = entity('ConfigurationProposal', 'configuration_proposals', {
  ...workspaceScoped(),
  packageKey: p.string(),
  package: p.json<unknown>(),
  packageDigest: p.string(),
  status: p.string().$type<'pending' | 'confirmed' | 'applied'>(),
  createdBy: p.string(),
  ...createdAt(),
  expiresAt: timestamptz('expires_at'),
  confirmedBy: p.string().nullable(),
  confirmedAt: timestamptz('confirmed_at').nullable(),
});
/** A prepared package awaiting (or past) a person's confirmation in a session. */
export type ConfigurationProposal = InferEntity<typeof ConfigurationProposalSchema>;
