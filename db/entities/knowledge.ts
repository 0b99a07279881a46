import { p, type InferEntity } from '@mikro-orm/core';
import { entity, executionSpan, HIDDEN, timestamps, timestamptz, workspaceScoped } from './columns';
import type { IndexingStatus, ConnectorProviderId, ConnectorStatus, SyncRunStatus } from '../../engine/statuses';
export type { IndexingStatus, ConnectorProviderId, ConnectorStatus, SyncRunStatus } from '../../engine/statuses';

/**
 * Knowledge: bases (chunking settings, trash), documents (uploaded or synced by a connector,
 * indexed into chunks), connectors (a provider, its config and cursor) and their sync runs.
 * Chunks (`knowledge_chunks`: text, a generated tsvector, embeddings) are written and read with
 * SQL only (services/knowledge/indexing.ts, search.ts) and have no entity.
 */

export const KnowledgeBaseSchema = entity('KnowledgeBase', 'knowledge_bases', {
  ...workspaceScoped(),
  name: p.text(),
  description: p.text().nullable(),
  minChunkSizeChars: p.integer(),
  maxChunkSizeTokens: p.integer(),
  overlapTokens: p.integer(),
  trashedAt: timestamptz('trashed_at').nullable(),
  ...timestamps(),
});
export type KnowledgeBase = InferEntity<typeof KnowledgeBaseSchema>;

export const KnowledgeDocumentSchema = entity('KnowledgeDocument', 'knowledge_documents', {
  ...workspaceScoped(),
  knowledgeBaseId: p.string(),
  /** The connector that synced it; null for uploads and after the connector was deleted. */
  connectorId: p.string().nullable(),
  /** The provider's id of the item (unique per connector). */
  externalId: p.text().nullable(),
  /** The provider's version of the item (modified time, version number, blob sha), to skip unchanged items. */
  externalVersion: p.text().nullable(),
  externalUrl: p.text().nullable(),
  source: p.string().$type<'upload' | 'connector'>(),
  name: p.text(),
  mimeType: p.text(),
  sizeBytes: p.integer(),
  sha256: p.string(),
  /** Uploads: the encrypted blob of the original bytes. */
  blobKey: p.text().nullable().hidden(HIDDEN),
  /** Connector items: the text the provider returned (already extracted). */
  contentText: p.text().nullable().hidden(HIDDEN).lazy(true, false),
  metadata: p.json<Record<string, unknown>>(),
  /** Tombstoned connector items are disabled and trashed; both are excluded from search. */
  enabled: p.boolean(),
  trashedAt: timestamptz('trashed_at').nullable(),
  indexingStatus: p.string().$type<IndexingStatus>(),
  indexingError: p.text().nullable(),
  /** Bumped whenever the content changes; an indexing pass only writes chunks of the version it read. */
  contentVersion: p.integer(),
  chunkCount: p.integer(),
  lastSyncRunId: p.string().nullable(),
  createdById: p.string().nullable(),
  ...timestamps(),
  indexedAt: timestamptz('indexed_at').nullable(),
});
export type KnowledgeDocument = InferEntity<typeof KnowledgeDocumentSchema>;

export const KnowledgeConnectorSchema = entity('KnowledgeConnector', 'knowledge_connectors', {
  ...workspaceScoped(),
  knowledgeBaseId: p.string(),
  name: p.text(),
  providerId: p.string().$type<ConnectorProviderId>(),
  status: p.string().$type<ConnectorStatus>(),
  config: p.json<Record<string, unknown>>(),
  cursor: p.json<unknown>().nullable(),
  lastSyncedAt: timestamptz('last_synced_at').nullable(),
  nextSyncAt: timestamptz('next_sync_at').nullable(),
  lastError: p.text().nullable(),
  syncLeaseRunId: p.string().nullable().hidden(HIDDEN),
  syncLeaseToken: p.string().nullable().hidden(HIDDEN),
  syncLeaseExpiresAt: timestamptz('sync_lease_expires_at').nullable().hidden(HIDDEN),
  ...timestamps(),
});
export type KnowledgeConnector = InferEntity<typeof KnowledgeConnectorSchema>;

export const KnowledgeSyncRunSchema = entity('KnowledgeSyncRun', 'knowledge_sync_runs', {
  ...workspaceScoped(),
  connectorId: p.string(),
  status: p.string().$type<SyncRunStatus>(),
  /** The bounded options, defaults applied. */
  options: p.json<Record<string, number>>(),
  requestFingerprint: p.string().hidden(HIDDEN),
  cursorBefore: p.json<unknown>().nullable(),
  cursorAfter: p.json<unknown>().nullable(),
  fullSnapshot: p.boolean(),
  upsertedCount: p.integer(),
  tombstonedCount: p.integer(),
  error: p.text().nullable(),
  leaseToken: p.string().nullable().hidden(HIDDEN),
  leaseExpiresAt: timestamptz('lease_expires_at').nullable().hidden(HIDDEN),
  ...executionSpan(),
  ...timestamps(),
});
export type KnowledgeSyncRun = InferEntity<typeof KnowledgeSyncRunSchema>;
