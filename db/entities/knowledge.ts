import { EntitySchema } from '@mikro-orm/core';

/**
 * Knowledge: bases (chunking settings, trash), documents (uploaded or synced by a connector,
 * indexed into chunks), connectors (a provider, its config and cursor) and their sync runs.
 * Chunks (`knowledge_chunks`: text, a generated tsvector, embeddings) are written and read with
 * SQL only (services/knowledge/indexing.ts, search.ts) and have no entity.
 */

export const INDEXING_STATUSES = ['pending', 'processing', 'ready', 'failed'] as const;
export type IndexingStatus = (typeof INDEXING_STATUSES)[number];

export const CONNECTOR_PROVIDER_IDS = ['drive', 'wiki', 'chat', 'repo'] as const;
export type ConnectorProviderId = (typeof CONNECTOR_PROVIDER_IDS)[number];

export const CONNECTOR_STATUSES = ['idle', 'syncing', 'succeeded', 'failed'] as const;
export type ConnectorStatus = (typeof CONNECTOR_STATUSES)[number];

export const SYNC_RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type SyncRunStatus = (typeof SYNC_RUN_STATUSES)[number];

export interface KnowledgeBase {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  minChunkSizeChars: number;
  maxChunkSizeTokens: number;
  overlapTokens: number;
  trashedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface KnowledgeDocument {
  id: string;
  workspaceId: string;
  knowledgeBaseId: string;
  /** The connector that synced it; null for uploads and after the connector was deleted. */
  connectorId: string | null;
  /** The provider's id of the item (unique per connector). */
  externalId: string | null;
  /** The provider's version of the item (modified time, version number, blob sha), to skip unchanged items. */
  externalVersion: string | null;
  externalUrl: string | null;
  source: 'upload' | 'connector';
  name: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  /** Uploads: the encrypted blob of the original bytes. */
  blobKey: string | null;
  /** Connector items: the text the provider returned (already extracted). */
  contentText: string | null;
  metadata: Record<string, unknown>;
  /** Tombstoned connector items are disabled and trashed; both are excluded from search. */
  enabled: boolean;
  trashedAt: Date | null;
  indexingStatus: IndexingStatus;
  indexingError: string | null;
  /** Bumped whenever the content changes; an indexing pass only writes chunks of the version it read. */
  contentVersion: number;
  chunkCount: number;
  lastSyncRunId: string | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
  indexedAt: Date | null;
}

export interface KnowledgeConnector {
  id: string;
  workspaceId: string;
  knowledgeBaseId: string;
  name: string;
  providerId: ConnectorProviderId;
  status: ConnectorStatus;
  config: Record<string, unknown>;
  cursor: unknown;
  lastSyncedAt: Date | null;
  nextSyncAt: Date | null;
  lastError: string | null;
  syncLeaseRunId: string | null;
  syncLeaseToken: string | null;
  syncLeaseExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface KnowledgeSyncRun {
  id: string;
  workspaceId: string;
  connectorId: string;
  status: SyncRunStatus;
  /** The bounded options, defaults applied. */
  options: Record<string, number>;
  requestFingerprint: string;
  cursorBefore: unknown;
  cursorAfter: unknown;
  fullSnapshot: boolean;
  upsertedCount: number;
  tombstonedCount: number;
  error: string | null;
  leaseToken: string | null;
  leaseExpiresAt: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const ts = (fieldName: string, nullable = false) => ({ type: 'Date', fieldName, columnType: 'timestamptz', nullable }) as const;

export const KnowledgeBaseSchema = new EntitySchema<KnowledgeBase>({
  name: 'KnowledgeBase',
  tableName: 'knowledge_bases',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    name: { type: 'text' },
    description: { type: 'text', nullable: true },
    minChunkSizeChars: { type: 'integer', fieldName: 'min_chunk_size_chars' },
    maxChunkSizeTokens: { type: 'integer', fieldName: 'max_chunk_size_tokens' },
    overlapTokens: { type: 'integer', fieldName: 'overlap_tokens' },
    trashedAt: ts('trashed_at', true),
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});

export const KnowledgeDocumentSchema = new EntitySchema<KnowledgeDocument>({
  name: 'KnowledgeDocument',
  tableName: 'knowledge_documents',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    knowledgeBaseId: { type: 'string', fieldName: 'knowledge_base_id' },
    connectorId: { type: 'string', fieldName: 'connector_id', nullable: true },
    externalId: { type: 'text', fieldName: 'external_id', nullable: true },
    externalVersion: { type: 'text', fieldName: 'external_version', nullable: true },
    externalUrl: { type: 'text', fieldName: 'external_url', nullable: true },
    source: { type: 'string' },
    name: { type: 'text' },
    mimeType: { type: 'text', fieldName: 'mime_type' },
    sizeBytes: { type: 'integer', fieldName: 'size_bytes' },
    sha256: { type: 'string' },
    blobKey: { type: 'text', fieldName: 'blob_key', nullable: true, hidden: true },
    contentText: { type: 'text', fieldName: 'content_text', nullable: true, hidden: true, lazy: true },
    metadata: { type: 'json' },
    enabled: { type: 'boolean' },
    trashedAt: ts('trashed_at', true),
    indexingStatus: { type: 'string', fieldName: 'indexing_status' },
    indexingError: { type: 'text', fieldName: 'indexing_error', nullable: true },
    contentVersion: { type: 'integer', fieldName: 'content_version' },
    chunkCount: { type: 'integer', fieldName: 'chunk_count' },
    lastSyncRunId: { type: 'string', fieldName: 'last_sync_run_id', nullable: true },
    createdById: { type: 'string', fieldName: 'created_by_id', nullable: true },
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
    indexedAt: ts('indexed_at', true),
  },
});

export const KnowledgeConnectorSchema = new EntitySchema<KnowledgeConnector>({
  name: 'KnowledgeConnector',
  tableName: 'knowledge_connectors',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    knowledgeBaseId: { type: 'string', fieldName: 'knowledge_base_id' },
    name: { type: 'text' },
    providerId: { type: 'string', fieldName: 'provider_id' },
    status: { type: 'string' },
    config: { type: 'json' },
    cursor: { type: 'json', nullable: true },
    lastSyncedAt: ts('last_synced_at', true),
    nextSyncAt: ts('next_sync_at', true),
    lastError: { type: 'text', fieldName: 'last_error', nullable: true },
    syncLeaseRunId: { type: 'string', fieldName: 'sync_lease_run_id', nullable: true, hidden: true },
    syncLeaseToken: { type: 'string', fieldName: 'sync_lease_token', nullable: true, hidden: true },
    syncLeaseExpiresAt: { ...ts('sync_lease_expires_at', true), hidden: true },
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});

export const KnowledgeSyncRunSchema = new EntitySchema<KnowledgeSyncRun>({
  name: 'KnowledgeSyncRun',
  tableName: 'knowledge_sync_runs',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    connectorId: { type: 'string', fieldName: 'connector_id' },
    status: { type: 'string' },
    options: { type: 'json' },
    requestFingerprint: { type: 'string', fieldName: 'request_fingerprint', hidden: true },
    cursorBefore: { type: 'json', fieldName: 'cursor_before', nullable: true },
    cursorAfter: { type: 'json', fieldName: 'cursor_after', nullable: true },
    fullSnapshot: { type: 'boolean', fieldName: 'full_snapshot' },
    upsertedCount: { type: 'integer', fieldName: 'upserted_count' },
    tombstonedCount: { type: 'integer', fieldName: 'tombstoned_count' },
    error: { type: 'text', nullable: true },
    leaseToken: { type: 'string', fieldName: 'lease_token', nullable: true, hidden: true },
    leaseExpiresAt: { ...ts('lease_expires_at', true), hidden: true },
    startedAt: ts('started_at', true),
    finishedAt: ts('finished_at', true),
    createdAt: ts('created_at'),
    updatedAt: ts('updated_at'),
  },
});
