/**
 * The knowledge area: bases (bases.ts), documents and uploads (documents.ts), text extraction
 * (extraction.ts), token chunking (chunking.ts), indexing steps run by Temporal activities
 * (indexing.ts), hybrid search (search.ts), connectors with their provider clients
 * (connectors.ts, providers/) and bounded sync runs (sync.ts).
 */
export {
  chunkingOf,
  createKnowledgeBase,
  type CreateKnowledgeBaseInput,
  findActiveKnowledgeBase,
  findKnowledgeBase,
  findOrCreateKnowledgeBase,
  getKnowledgeBase,
  knowledgeBaseView,
  type KnowledgeBaseView,
  listKnowledgeBases,
  setKnowledgeBaseTrashed,
} from './bases';
export {
  connectorView,
  type ConnectorView,
  createConnector,
  type CreateConnectorInput,
  deleteConnector,
  findConnector,
  getConnector,
  listConnectors,
  updateConnector,
} from './connectors';
export { type ConnectorCredential, type ConnectorCredentialResolution, resolveConnectorCredential } from './credentials';
export { PROVIDERS, providerRegistry, SyncError, SYNC_CAPABILITY, type ProviderRegistryEntry, type SyncOptions } from './providers';
export {
  cancelSyncRun,
  claimSyncRun,
  connectorCredential,
  executeSyncRun,
  failSyncRun,
  getSyncRun,
  invokeSyncCapability,
  listSyncRuns,
  renewSyncLease,
  startSyncRun,
  SYNC_CAPABILITY_MESSAGES,
  SYNC_MESSAGES,
  SYNC_OPTION_BOUNDS,
  type SyncCapabilityRequest,
  syncRunId,
  type SyncRunRef,
  syncRunView,
  type SyncRunView,
  type SyncWorkerDeps,
} from './sync';
export { type ChunkingSettings, chunkText, countTokens, DEFAULT_CHUNKING, normaliseText, type TextChunk, tokenizer } from './chunking';
export {
  addTextDocument,
  BlobSizeError,
  createUploadedDocument,
  deleteDocument,
  documentBlobKey,
  documentView,
  type DocumentView,
  getDocument,
  listDocuments,
  MAX_DOCUMENT_BYTES,
  type StagedDocument,
  stageDocumentUpload,
  type TextDocumentInput,
  type UploadFields,
} from './documents';
export { DOCUMENT_KINDS, type DocumentKind, documentKindOf, ExtractionError, extractText, htmlToText, mimeTypeOfKind } from './extraction';
export {
  type DocumentRef,
  documentText,
  EMBED_BATCH,
  embeddingInput,
  embedPendingChunks,
  failDocuments,
  finishDocuments,
  nextRunDocuments,
  prepareDocuments,
  type PrepareResult,
} from './indexing';
export type { KnowledgeRuntime } from './runtime';
export {
  candidateCount,
  fuse,
  keywordCandidates,
  type Provenance,
  QUERY_EMBEDDING_BUDGET_MS,
  rankChunks,
  type RetrievalMode,
  RRF_K,
  type SearchInput,
  searchKnowledge,
  type SearchResponse,
  type SearchResult,
  vectorCandidates,
} from './search';
