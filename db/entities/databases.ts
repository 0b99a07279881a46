import { EntitySchema } from '@mikro-orm/core';

/** Column types of user tables (spec: Database, table, column, row). */
export const COLUMN_TYPES = ['text', 'number', 'status', 'date', 'json'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export interface TableColumn {
  name: string;
  type: ColumnType;
  /** Text column whose cells hold ids of managed tables of the same workspace (managed configuration). */
  tableReference?: true;
}

/**
 * A user database: a PostgreSQL schema of its own (`schemaName`) and a role (`roleName`) that
 * holds USAGE on that schema and SELECT on its live tables, nothing else; the read-only SQL
 * sandbox runs as that role. Both names carry the database id, so they are unique in the cluster.
 */
export interface UserDatabase {
  id: string;
  workspaceId: string;
  name: string;
  schemaName: string;
  roleName: string;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A user table: a real table `schemaName.physicalName` of its database with one typed column
 * per entry of `columns` and the identity column `"rowIndex"`. `physicalName` equals `name`
 * while the table is live; a trashed table is renamed out of the way (`_trash_<id>`) and its
 * SELECT grant revoked, so its name is free and SQL cannot reach it.
 */
export interface UserTable {
  id: string;
  workspaceId: string;
  databaseId: string;
  name: string;
  physicalName: string;
  columns: TableColumn[];
  trashed: boolean;
  trashedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const UserDatabaseSchema = new EntitySchema<UserDatabase>({
  name: 'UserDatabase',
  tableName: 'user_databases',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    name: { type: 'string' },
    schemaName: { type: 'string', fieldName: 'schema_name' },
    roleName: { type: 'string', fieldName: 'role_name' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

export const UserTableSchema = new EntitySchema<UserTable>({
  name: 'UserTable',
  tableName: 'user_tables',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    databaseId: { type: 'string', fieldName: 'database_id' },
    name: { type: 'string' },
    physicalName: { type: 'string', fieldName: 'physical_name' },
    columns: { type: 'json' },
    trashed: { type: 'boolean' },
    trashedAt: { type: 'Date', fieldName: 'trashed_at', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

/**
 * A table declared as non-sensitive configuration (permanent). Its rows have a stable textual
 * key (`keyColumn`, immutable), lifecycle values (`active`, `retired`) and a revision (the
 * physical column `_revision`); they are written through managed-rows or applied packages only.
 */
export interface ManagedTable {
  tableId: string;
  workspaceId: string;
  /** Logical key of the table in configuration packages. */
  tableKey: string;
  keyColumn: string;
  classification: 'non_sensitive';
  /** The package whose apply last wrote the table; null until one does. */
  ownerPackageKey: string | null;
  declaredBy: string;
  declaredAt: Date;
}

/** A successful apply of a configuration package: who, which package, which actions. No row values. */
export interface ConfigurationReceipt {
  id: string;
  workspaceId: string;
  requestId: string;
  inputDigest: string;
  actorId: string;
  packageKey: string;
  actionIds: string[];
  status: 'applied';
  createdAt: Date;
}

export const ManagedTableSchema = new EntitySchema<ManagedTable>({
  name: 'ManagedTable',
  tableName: 'managed_tables',
  properties: {
    tableId: { type: 'string', primary: true, fieldName: 'table_id' },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    tableKey: { type: 'string', fieldName: 'table_key' },
    keyColumn: { type: 'string', fieldName: 'key_column' },
    classification: { type: 'string' },
    ownerPackageKey: { type: 'string', fieldName: 'owner_package_key', nullable: true },
    declaredBy: { type: 'string', fieldName: 'declared_by' },
    declaredAt: { type: 'Date', fieldName: 'declared_at', columnType: 'timestamptz' },
  },
});

export const ConfigurationReceiptSchema = new EntitySchema<ConfigurationReceipt>({
  name: 'ConfigurationReceipt',
  tableName: 'configuration_receipts',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    requestId: { type: 'string', fieldName: 'request_id' },
    inputDigest: { type: 'string', fieldName: 'input_digest' },
    actorId: { type: 'string', fieldName: 'actor_id' },
    packageKey: { type: 'string', fieldName: 'package_key' },
    actionIds: { type: 'json', fieldName: 'action_ids' },
    status: { type: 'string' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
  },
});

/** What the last successful apply of a package wrote to one of its tables: row key → values. */
export interface ConfigurationBaseline {
  workspaceId: string;
  packageKey: string;
  tableKey: string;
  rows: Record<string, Record<string, unknown>>;
  receiptId: string;
  updatedAt: Date;
}

/** A prepared package awaiting (or past) a person's confirmation in a session. */
export interface ConfigurationProposal {
  id: string;
  workspaceId: string;
  packageKey: string;
  package: unknown;
  packageDigest: string;
  status: 'pending' | 'confirmed' | 'applied';
  createdBy: string;
  createdAt: Date;
  expiresAt: Date;
  confirmedBy: string | null;
  confirmedAt: Date | null;
}

export const ConfigurationBaselineSchema = new EntitySchema<ConfigurationBaseline>({
  name: 'ConfigurationBaseline',
  tableName: 'configuration_baselines',
  properties: {
    workspaceId: { type: 'string', primary: true, fieldName: 'workspace_id' },
    packageKey: { type: 'string', primary: true, fieldName: 'package_key' },
    tableKey: { type: 'string', primary: true, fieldName: 'table_key' },
    rows: { type: 'json' },
    receiptId: { type: 'string', fieldName: 'receipt_id' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

export const ConfigurationProposalSchema = new EntitySchema<ConfigurationProposal>({
  name: 'ConfigurationProposal',
  tableName: 'configuration_proposals',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    packageKey: { type: 'string', fieldName: 'package_key' },
    package: { type: 'json' },
    packageDigest: { type: 'string', fieldName: 'package_digest' },
    status: { type: 'string' },
    createdBy: { type: 'string', fieldName: 'created_by' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    expiresAt: { type: 'Date', fieldName: 'expires_at', columnType: 'timestamptz' },
    confirmedBy: { type: 'string', fieldName: 'confirmed_by', nullable: true },
    confirmedAt: { type: 'Date', fieldName: 'confirmed_at', columnType: 'timestamptz', nullable: true },
  },
});
