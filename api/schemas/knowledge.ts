import { z } from 'zod';
import { INDEXING_STATUSES } from '../../engine/statuses';
import { bareErrorSchema, isoDate, timestampFields } from './index';

/** Response schemas of the knowledge area (bases, documents, search; connectors in the envelope family). */

export const chunkingSchema = z.strictObject({
  minChunkSizeChars: z.number().int(),
  maxChunkSizeTokens: z.number().int(),
  overlapTokens: z.number().int(),
});

export const knowledgeBaseSchema = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    chunking: chunkingSchema,
    trashed: z.boolean(),
    trashedAt: isoDate.nullable(),
    ...timestampFields,
  })
  .meta({ id: 'KnowledgeBase' });

export const knowledgeBaseEnvelope = z.strictObject({ knowledgeBase: knowledgeBaseSchema });
export const knowledgeBaseList = z.strictObject({ knowledgeBases: z.array(knowledgeBaseSchema) });

export const knowledgeDocumentSchema = z
  .strictObject({
    id: z.string(),
    knowledgeBaseId: z.string(),
    connectorId: z.string().nullable(),
    source: z.enum(['upload', 'connector']),
    name: z.string(),
    mimeType: z.string(),
    sizeBytes: z.number().int(),
    sha256: z.string(),
    externalId: z.string().nullable(),
    externalUrl: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    enabled: z.boolean(),
    trashed: z.boolean(),
    indexingStatus: z.enum(INDEXING_STATUSES),
    indexingError: z.string().nullable(),
    chunkCount: z.number().int(),
    ...timestampFields,
    indexedAt: isoDate.nullable(),
  })
  .meta({ id: 'KnowledgeDocument' });

export const knowledgeDocumentEnvelope = z.strictObject({ document: knowledgeDocumentSchema });
export const knowledgeDocumentList = z.strictObject({ documents: z.array(knowledgeDocumentSchema), nextCursor: z.string().nullable() });
export const knowledgeDocumentDeleted = z.strictObject({ deleted: z.literal(true), documentId: z.string() });

const provenance = z.enum(['vector', 'hybrid', 'keyword']);

export const searchResultSchema = z.strictObject({
  chunk: z.strictObject({
    id: z.string(),
    ordinal: z.number().int(),
    heading: z.string().nullable(),
    content: z.string(),
    tokenCount: z.number().int(),
  }),
  document: z.strictObject({
    id: z.string(),
    knowledgeBaseId: z.string(),
    name: z.string(),
    mimeType: z.string(),
    source: z.enum(['upload', 'connector']),
    connectorId: z.string().nullable(),
    externalUrl: z.string().nullable(),
  }),
  score: z.number(),
  provenance,
  ranks: z
    .strictObject({ keyword: z.number().int().nullable(), vector: z.number().int().nullable() })
    .describe('1-based rank in each candidate list; null when that list did not find the chunk'),
});

export const searchResponseSchema = z.strictObject({
  results: z.array(searchResultSchema),
  retrieval: z
    .strictObject({
      mode: z.enum(['hybrid', 'keyword']),
      vector: z.enum(['used', 'not_configured', 'unavailable']),
      fusion: z.strictObject({ method: z.literal('rrf'), k: z.number().int(), candidates: z.number().int() }).nullable(),
      note: z.string().optional(),
    })
    .optional()
    .describe('How the results were retrieved; absent for an empty query'),
});

export const knowledgeNotFound = {
  404: { description: 'Knowledge base (or document) not found in this workspace', schema: bareErrorSchema },
};

// Connectors and sync runs (the `data` of envelope answers)

export const providerEntrySchema = z.strictObject({
  id: z.enum(['drive', 'wiki', 'chat', 'repo']),
  label: z.string(),
  scopes: z.array(z.string()),
  certified: z.boolean(),
  capabilities: z.array(z.string()),
});

export const connectorSchema = z
  .strictObject({
    id: z.string(),
    workspaceId: z.string(),
    knowledgeBaseId: z.string(),
    name: z.string(),
    providerId: z.enum(['drive', 'wiki', 'chat', 'repo']),
    status: z.enum(['idle', 'syncing', 'succeeded', 'failed']),
    config: z.record(z.string(), z.unknown()),
    cursor: z.unknown().describe('Opaque JSON or null'),
    lastSyncedAt: isoDate.nullable(),
    nextSyncAt: isoDate.nullable(),
    lastError: z.string().nullable(),
    ...timestampFields,
  })
  .meta({ id: 'KnowledgeConnector' });

export const syncRunSchema = z
  .strictObject({
    id: z.string(),
    workspaceId: z.string(),
    connectorId: z.string(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    cursorBefore: z.unknown(),
    cursorAfter: z.unknown(),
    fullSnapshot: z.boolean(),
    upsertedCount: z.number().int(),
    tombstonedCount: z.number().int(),
    error: z.string().nullable(),
    startedAt: isoDate.nullable(),
    finishedAt: isoDate.nullable(),
    ...timestampFields,
  })
  .meta({ id: 'KnowledgeSyncRun' });

export const connectorEnvelope = z.strictObject({ connector: connectorSchema });
export const connectorListSchema = z.strictObject({
  connectors: z.array(connectorSchema),
  nextCursor: z.string().nullable(),
  providers: z.array(providerEntrySchema),
});
export const connectorDeletedSchema = z.strictObject({ deleted: z.literal(true), connectorId: z.string() });
export const syncRunEnvelope = z.strictObject({ run: syncRunSchema });
export const syncRunListSchema = z.strictObject({ runs: z.array(syncRunSchema), nextCursor: z.string().nullable() });
