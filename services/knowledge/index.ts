/**
 * The knowledge area: bases (bases.ts), documents and uploads (documents.ts), text extraction
 * (extraction.ts), token chunking (chunking.ts), indexing steps run by Temporal activities
 * (indexing.ts), hybrid search (search.ts), connectors with their provider clients
 * (connectors.ts, providers/) and bounded sync runs (sync.ts).
 */
export * from './bases';
export * from './connectors';
export * from './credentials';
export { PROVIDERS, providerRegistry, SyncError, SYNC_CAPABILITY, type ProviderRegistryEntry, type SyncOptions } from './providers';
export * from './sync';
export * from './chunking';
export * from './documents';
export * from './extraction';
export * from './indexing';
export * from './runtime';
export * from './search';
