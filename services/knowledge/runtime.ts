import type { BlobStore } from '../kernel/blobs';
import type { KnowledgeConfig } from '../kernel/config';
import type { KnowledgeIndexer, KnowledgeSyncLauncher, QueryEmbedder } from '../kernel/ports';

/** What the knowledge area needs besides the database, built by the composition roots. */
export interface KnowledgeRuntime {
  config: KnowledgeConfig;
  /** Where uploaded documents' bytes are kept (the same encrypted blob store as files). */
  blobs: BlobStore;
  indexer: KnowledgeIndexer;
  queryEmbedder: QueryEmbedder;
  syncLauncher: KnowledgeSyncLauncher;
}
