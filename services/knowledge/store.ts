/**
 * Raw SQL of the knowledge area: bases, documents, indexing, search, vectors and sync runs.
 * Batches travel as one JSON parameter (`jsonb_to_recordset`, `jsonb_array_elements_text`), so
 * a statement's parameter count does not grow with the batch. Indexing and sync moves are
 * keyed by the document's content version or the run's lease token, so a retried activity
 * never applies a step twice or over a newer one. Functions taking `tx` run on the caller's
 * transaction (`em.execute` of a transactional EntityManager runs on its connection).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { wellFormedParams } from '../kernel/storableText';

// ---------------------------------------------------------------------------------------------
// Bases and documents

/** Waits for the transaction-scoped advisory lock of a base name in a workspace, so two callers never create two bases of one name. */
export async function lockKnowledgeBaseName(tx: EntityManager, workspaceId: string, name: string): Promise<void> {
  await tx.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`knowledge-base:${workspaceId}:${name}`], 'all');
}

/** A document whose text is kept on the row (no blob), as `insertTextDocument` writes it. */
export interface TextDocumentRow {
  id: string;
  workspaceId: string;
  knowledgeBaseId: string;
  name: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  text: string;
  /** The metadata as storable JSON text. */
  metadataJson: string;
  createdById: string | null;
  now: Date;
}

/**
 * Inserts an uploaded text document pending indexing at content version 1; a document of that
 * id already there is left as it is. Runs on `tx`'s transaction context, with every text
 * parameter made well-formed (PostgreSQL refuses lone surrogates).
 */
export async function insertTextDocument(tx: EntityManager, d: TextDocumentRow): Promise<void> {
  await tx.execute(
    `insert into knowledge_documents (id, workspace_id, knowledge_base_id, connector_id, external_id, external_version, external_url, source, name, mime_type, size_bytes, sha256,
                                      blob_key, content_text, metadata, enabled, trashed_at, indexing_status, indexing_error, content_version, chunk_count, last_sync_run_id,
                                      created_by_id, created_at, updated_at, indexed_at)
     values (?, ?, ?, null, null, null, null, 'upload', ?, ?, ?, ?, null, ?, ?::jsonb, true, null, 'pending', null, 1, 0, null, ?, ?, ?, null)
     on conflict (id) do nothing`,
    wellFormedParams([
      d.id,
      d.workspaceId,
      d.knowledgeBaseId,
      d.name,
      d.mimeType,
      d.sizeBytes,
      d.sha256,
      d.text,
      d.metadataJson,
      d.createdById,
      d.now,
      d.now,
    ]),
    'all',
    tx.getTransactionContext(),
  );
}

// ---------------------------------------------------------------------------------------------
// Indexing. `pairs` is the JSON `[{ id, v }]` of document ids and the content versions indexed.

/** Moves the pending documents of `pairs` (at those versions) to processing; other states are left alone. */
export async function markDocumentsProcessing(em: EntityManager, pairs: string, now: Date): Promise<void> {
  await em.execute(
    `update knowledge_documents d set indexing_status = 'processing', updated_at = ?
       from jsonb_to_recordset(?::jsonb) as x(id text, v integer)
      where d.id = x.id and d.content_version = x.v and d.indexing_status = 'pending'`,
    [now, pairs],
  );
}

/** How many chunks each document of `pairs` already has for its version (an earlier attempt may have written them); `n` is a bigint as text. */
export async function writtenChunkCounts(em: EntityManager, pairs: string): Promise<Array<{ document_id: string; n: string }>> {
  return em.execute<Array<{ document_id: string; n: string }>>(
    `select c.document_id, count(*) as n from knowledge_chunks c join jsonb_to_recordset(?::jsonb) as x(id text, v integer) on c.document_id = x.id and c.content_version = x.v group by c.document_id`,
    [pairs],
  );
}

/** Deletes every chunk of the documents whose ids `documentIds` (JSON array) lists, whatever their version. */
export async function deleteDocumentChunks(tx: EntityManager, documentIds: string): Promise<void> {
  await tx.execute(`delete from knowledge_chunks where document_id in (select jsonb_array_elements_text(?::jsonb))`, [documentIds]);
}

/**
 * Inserts chunks, each row `[id, workspace, base, document, version, ordinal, heading, content,
 * tokens, charStart, charEnd, createdAt]`. One statement: the caller keeps a batch far below
 * PostgreSQL's 65 535 parameters.
 */
export async function insertChunks(tx: EntityManager, rows: unknown[][]): Promise<void> {
  await tx.execute(
    `insert into knowledge_chunks (id, workspace_id, knowledge_base_id, document_id, content_version, ordinal, heading, content, token_count, char_start, char_end, created_at)
         values ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
    wellFormedParams(rows.flat()),
  );
}

/** Records the chunk count of each document of `counts` (JSON `[{ id, v, n }]`) at its version. */
export async function setChunkCounts(tx: EntityManager, counts: string, now: Date): Promise<void> {
  await tx.execute(
    `update knowledge_documents d set chunk_count = x.n, updated_at = ?
         from jsonb_to_recordset(?::jsonb) as x(id text, v integer, n integer)
        where d.id = x.id and d.content_version = x.v`,
    [now, counts],
  );
}

/**
 * Chunks of the documents `documentIds` (JSON array) still without an embedding of `model`, of
 * the version being indexed (document processing); a document indexed again meanwhile drops out.
 */
const PENDING_CHUNKS = `c.workspace_id = ? and c.document_id in (select jsonb_array_elements_text(?::jsonb)) and (c.embedding is null or c.embedding_model is distinct from ?)
       and exists (select 1 from knowledge_documents d where d.id = c.document_id and d.content_version = c.content_version and d.indexing_status = 'processing')`;

/** Up to `limit` chunks waiting for an embedding of `model` (see PENDING_CHUNKS), in document and ordinal order. */
export async function pendingChunks(
  em: EntityManager,
  workspaceId: string,
  documentIds: string,
  model: string,
  limit: number,
): Promise<Array<{ id: string; heading: string | null; content: string }>> {
  return em.execute<Array<{ id: string; heading: string | null; content: string }>>(
    `select c.id, c.heading, c.content from knowledge_chunks c where ${PENDING_CHUNKS} order by c.document_id, c.ordinal limit ?`,
    [workspaceId, documentIds, model, limit],
  );
}

/** How many chunks still wait for an embedding of `model` (see PENDING_CHUNKS). */
export async function countPendingChunks(em: EntityManager, workspaceId: string, documentIds: string, model: string): Promise<number> {
  const left = await em.execute<Array<{ n: string }>>(`select count(*) as n from knowledge_chunks c where ${PENDING_CHUNKS}`, [
    workspaceId,
    documentIds,
    model,
  ]);
  return Number(left[0]?.n ?? 0); // count(*) always yields one row
}

/**
 * Stores a batch of embeddings with `updateSql`, the statement `embeddingUpdateSql` (vectors.ts)
 * builds for this database's path; `embeddings` is the JSON `[{ id, e }]`.
 */
export async function storeEmbeddings(
  em: EntityManager,
  updateSql: string,
  model: string,
  dims: number,
  embeddings: string,
): Promise<void> {
  await em.execute(updateSql, [model, dims, embeddings]);
}

/** Marks the processing documents of `pairs` ready at their versions; the ids it moved (a newer version is left alone). */
export async function markDocumentsReady(em: EntityManager, workspaceId: string, pairs: string, now: Date): Promise<Array<{ id: string }>> {
  return em.execute<Array<{ id: string }>>(
    `update knowledge_documents d set indexing_status = 'ready', indexing_error = null, indexed_at = ?, updated_at = ?
       from jsonb_to_recordset(?::jsonb) as x(id text, v integer)
      where d.id = x.id and d.workspace_id = ? and d.content_version = x.v and d.indexing_status = 'processing'
      returning d.id`,
    [now, now, pairs, workspaceId],
  );
}

/** Marks the pending or processing documents of `pairs` failed with `error` (already storable) at their versions. */
export async function markDocumentsFailed(em: EntityManager, workspaceId: string, pairs: string, error: string, now: Date): Promise<void> {
  await em.execute(
    `update knowledge_documents d set indexing_status = 'failed', indexing_error = ?, updated_at = ?
       from jsonb_to_recordset(?::jsonb) as x(id text, v integer)
      where d.id = x.id and d.workspace_id = ? and d.content_version = x.v and d.indexing_status in ('pending', 'processing')`,
    [error, now, pairs, workspaceId],
  );
}

// ---------------------------------------------------------------------------------------------
// Search

/** A where-clause on the chunks `c` of a search and its parameters (after the workspace id). */
export interface ChunkScope {
  sql: string;
  params: unknown[];
}

/**
 * Up to `limit` chunks of `scope` matching the query by full text, best first. `strict` (the
 * query has web-search operators) matches the query as written; otherwise any of its lexemes
 * matches and chunks matching all of them rank first. `score` may come back as text.
 */
export async function keywordMatches(
  em: EntityManager,
  args: { query: string; strict: boolean; scope: ChunkScope; workspaceId: string; limit: number },
): Promise<Array<{ id: string; score: number }>> {
  const { query, strict, scope, workspaceId, limit } = args;
  return em.execute<Array<{ id: string; score: number }>>(
    `with q as (
       select websearch_to_tsquery('english', ?) as all_terms,
              ${
                strict
                  ? `websearch_to_tsquery('english', ?)`
                  : `coalesce(nullif(array_to_string(array(select '''' || replace(replace(l, '\\', '\\\\'), '''', '''''') || '''' from unnest(tsvector_to_array(to_tsvector('english', ?))) l), ' | '), '')::tsquery, ''::tsquery)`
              } as any_terms
     )
     select c.id, (ts_rank_cd(c.tsv, q.any_terms, 1) + case when c.tsv @@ q.all_terms then 1 else 0 end)::float8 as score
       from knowledge_chunks c, q
      where c.tsv @@ q.any_terms and ${scope.sql}
      order by score desc, c.id
      limit ?`,
    [query, query, workspaceId, ...scope.params, limit],
  );
}

/** A chunk with what a search result shows of its document. */
export interface ChunkWithDocumentRow {
  id: string;
  ordinal: number;
  heading: string | null;
  content: string;
  token_count: number;
  document_id: string;
  knowledge_base_id: string;
  name: string;
  mime_type: string;
  source: 'upload' | 'connector';
  connector_id: string | null;
  external_url: string | null;
}

/** The chunks of `ids` (JSON array) with their documents, in no particular order; a deleted chunk is missing. */
export async function chunksWithDocuments(em: EntityManager, ids: string): Promise<ChunkWithDocumentRow[]> {
  return em.execute<ChunkWithDocumentRow[]>(
    `select c.id, c.ordinal, c.heading, c.content, c.token_count, c.document_id, c.knowledge_base_id, d.name, d.mime_type, d.source, d.connector_id, d.external_url
       from knowledge_chunks c join knowledge_documents d on d.id = c.document_id
      where c.id in (select jsonb_array_elements_text(?::jsonb))`,
    [ids],
  );
}

// ---------------------------------------------------------------------------------------------
// Vectors

/** Whether the chunks table has the pgvector column, and the extension's version (null when not installed). */
export async function pgvectorColumn(em: EntityManager): Promise<Array<{ present: boolean; version: string | null }>> {
  return em.execute<Array<{ present: boolean; version: string | null }>>(
    `select exists (select 1 from information_schema.columns where table_schema = current_schema() and table_name = 'knowledge_chunks' and column_name = 'embedding_vec') as present,
                (select extversion from pg_extension where extname = 'vector') as version`,
  );
}

/** Runs `vectorIndexSql` (vectors.ts): DDL, outside any transaction of ours; it throws when another worker's identical index won the race. */
export async function createVectorIndex(em: EntityManager, indexSql: string): Promise<void> {
  await em.execute(indexSql);
}

/** Whether a relation (an index) named `name` exists in the search path. */
export async function relationExists(em: EntityManager, name: string): Promise<boolean> {
  const rows = await em.execute<Array<{ present: boolean }>>(`select to_regclass(?) is not null as present`, [name]);
  return Boolean(rows[0]?.present);
}

/** Runs the nearest-chunks query `vectorSearchQuery` (vectors.ts) built; `score` may come back as text. */
export async function selectNearestChunks(
  em: EntityManager,
  query: { sql: string; params: unknown[] },
): Promise<Array<{ id: string; score: number }>> {
  return em.execute<Array<{ id: string; score: number }>>(query.sql, query.params);
}

/**
 * Runs the nearest-chunks query in a transaction of its own after setting `settings` for that
 * transaction only (`set_config(…, true)`): the HNSW search settings must not leak into the pool
 * connection's next user.
 */
export async function selectNearestChunksWith(
  em: EntityManager,
  settings: Array<[string, string]>,
  query: { sql: string; params: unknown[] },
): Promise<Array<{ id: string; score: number }>> {
  return em.transactional(async (tx) => {
    for (const [name, value] of settings) await tx.execute(`select set_config(?, ?, true)`, [name, value]);
    return tx.execute<Array<{ id: string; score: number }>>(query.sql, query.params);
  });
}

// ---------------------------------------------------------------------------------------------
// Sync runs. The connector's lease (`sync_lease_*`) and the run's (`lease_token`) move together.

/** Inserts a queued sync run; a run of that id already there (a replay) is left as it is. */
export async function insertQueuedSyncRun(
  em: EntityManager,
  run: { id: string; workspaceId: string; connectorId: string; optionsJson: string; fingerprint: string; now: Date },
): Promise<void> {
  await em.execute(
    `insert into knowledge_sync_runs (id, workspace_id, connector_id, status, options, request_fingerprint, full_snapshot, upserted_count, tombstoned_count, created_at, updated_at)
     values (?, ?, ?, 'queued', ?::jsonb, ?, false, 0, 0, ?, ?) on conflict (id) do nothing`,
    [run.id, run.workspaceId, run.connectorId, run.optionsJson, run.fingerprint, run.now, run.now],
  );
}

/** Queues a failed or cancelled run again, its results cleared; false when it was no longer failed or cancelled. */
export async function requeueSyncRun(em: EntityManager, runId: string, now: Date): Promise<boolean> {
  const requeued = await em.execute<Array<{ id: string }>>(
    `update knowledge_sync_runs set status = 'queued', error = null, started_at = null, finished_at = null, upserted_count = 0, tombstoned_count = 0,
              cursor_before = null, cursor_after = null, lease_token = null, lease_expires_at = null, updated_at = ?
        where id = ? and status in ('failed', 'cancelled') returning id`,
    [now, runId],
  );
  return requeued.length > 0;
}

/** Cancels a queued or running run, its lease dropped; false when it had already ended. */
export async function markSyncRunCancelled(tx: EntityManager, runId: string, now: Date): Promise<boolean> {
  const rows = await tx.execute<Array<{ id: string }>>(
    `update knowledge_sync_runs set status = 'cancelled', finished_at = ?, updated_at = ?, lease_token = null, lease_expires_at = null
        where id = ? and status in ('queued', 'running') returning id`,
    [now, now, runId],
  );
  return rows.length > 0;
}

/** Sets the connector idle and releases its lease, only while `runId` holds it. */
export async function releaseConnectorLeaseIdle(tx: EntityManager, connectorId: string, runId: string, now: Date): Promise<void> {
  await tx.execute(
    `update knowledge_connectors set status = 'idle', sync_lease_run_id = null, sync_lease_token = null, sync_lease_expires_at = null, updated_at = ?
        where id = ? and sync_lease_run_id = ?`,
    [now, connectorId, runId],
  );
}

/** The run's status and lease token, the row locked until `tx` ends; undefined when the run is gone. */
export async function lockSyncRunForClaim(
  tx: EntityManager,
  runId: string,
): Promise<{ status: string; lease_token: string | null } | undefined> {
  const [run] = await tx.execute<Array<{ status: string; lease_token: string | null }>>(
    `select status, lease_token from knowledge_sync_runs where id = ? for update`,
    [runId],
  );
  return run;
}

/** The connector's lease and cursor, the row locked until `tx` ends; undefined when the connector is gone. */
export async function lockConnectorLease(
  tx: EntityManager,
  connectorId: string,
): Promise<{ sync_lease_run_id: string | null; sync_lease_expires_at: Date | null; cursor: unknown } | undefined> {
  const [connector] = await tx.execute<Array<{ sync_lease_run_id: string | null; sync_lease_expires_at: Date | null; cursor: unknown }>>(
    `select sync_lease_run_id, sync_lease_expires_at, cursor from knowledge_connectors where id = ? for update`,
    [connectorId],
  );
  return connector;
}

/** Fails a queued or running run whose lease expired and was taken over by a newer run, with `error`. */
export async function failTakenOverSyncRun(tx: EntityManager, runId: string, error: string, now: Date): Promise<void> {
  await tx.execute(
    `update knowledge_sync_runs set status = 'failed', error = ?, finished_at = ?, updated_at = ?, lease_token = null, lease_expires_at = null
          where id = ? and status in ('queued', 'running')`,
    [error, now, now, runId],
  );
}

/** Gives the connector's lease to `runId` (status syncing) until `expiresAt`; unconditional: the caller holds the row lock. */
export async function takeConnectorLease(
  tx: EntityManager,
  lease: { connectorId: string; runId: string; token: string; expiresAt: Date; now: Date },
): Promise<void> {
  await tx.execute(
    `update knowledge_connectors set status = 'syncing', sync_lease_run_id = ?, sync_lease_token = ?, sync_lease_expires_at = ?, updated_at = ? where id = ?`,
    [lease.runId, lease.token, lease.expiresAt, lease.now, lease.connectorId],
  );
}

/** Marks the run running with its lease and the connector's cursor at its start (JSON, or null); unconditional: the caller holds the row lock. */
export async function startSyncRunLease(
  tx: EntityManager,
  lease: { runId: string; token: string; expiresAt: Date; now: Date; cursorBefore: string | null },
): Promise<void> {
  await tx.execute(
    `update knowledge_sync_runs set status = 'running', started_at = ?, updated_at = ?, lease_token = ?, lease_expires_at = ?, cursor_before = ?::jsonb where id = ?`,
    [lease.now, lease.now, lease.token, lease.expiresAt, lease.cursorBefore, lease.runId],
  );
}

/** Extends a running run's lease to `expiresAt`; false when the run no longer holds `token`. */
export async function extendSyncRunLease(em: EntityManager, runId: string, token: string, expiresAt: Date): Promise<boolean> {
  const rows = await em.execute<Array<{ id: string }>>(
    `update knowledge_sync_runs set lease_expires_at = ? where id = ? and status = 'running' and lease_token = ? returning id`,
    [expiresAt, runId, token],
  );
  return rows.length > 0;
}

/** Extends the connector's lease to `expiresAt` while `runId` holds it with `token`. */
export async function extendConnectorLease(
  em: EntityManager,
  connectorId: string,
  runId: string,
  token: string,
  expiresAt: Date,
): Promise<void> {
  await em.execute(
    `update knowledge_connectors set sync_lease_expires_at = ? where id = ? and sync_lease_run_id = ? and sync_lease_token = ?`,
    [expiresAt, connectorId, runId, token],
  );
}

/** The external version of each enabled document of the connector among `externalIds` (JSON array, storable). */
export async function connectorDocumentVersions(
  em: EntityManager,
  connectorId: string,
  externalIds: string,
): Promise<Array<{ external_id: string; external_version: string | null }>> {
  return em.execute<Array<{ external_id: string; external_version: string | null }>>(
    `select external_id, external_version from knowledge_documents
      where connector_id = ? and enabled and external_id in (select jsonb_array_elements_text(?::jsonb))`,
    [connectorId, externalIds],
  );
}

/** The external ids of the connector's enabled documents starting with `prefix`. */
export async function connectorDocumentIds(
  em: EntityManager,
  connectorId: string,
  prefix: string,
): Promise<Array<{ external_id: string }>> {
  return em.execute<Array<{ external_id: string }>>(
    `select external_id from knowledge_documents where connector_id = ? and enabled and starts_with(external_id, ?)`,
    [connectorId, prefix],
  );
}

/** The run's status, lease and starting cursor, the row locked until `tx` ends; undefined when the run is gone. */
export async function lockSyncRunForApply(
  tx: EntityManager,
  runId: string,
): Promise<{ status: string; lease_token: string | null; lease_expires_at: Date | null; cursor_before: unknown } | undefined> {
  const [run] = await tx.execute<
    Array<{ status: string; lease_token: string | null; lease_expires_at: Date | null; cursor_before: unknown }>
  >(`select status, lease_token, lease_expires_at, cursor_before from knowledge_sync_runs where id = ? for update`, [runId]);
  return run;
}

/**
 * Upserts a slice of a batch's documents (`rows`: the storable JSON of `[{ id, external_id,
 * version, url, title, mime_type, size_bytes, sha256, content, metadata }]`), keyed by the
 * connector and external id: a document seen again is re-enabled, moved to the next content
 * version and queued for indexing. One external id at most once per slice.
 */
export async function upsertConnectorDocuments(
  tx: EntityManager,
  connector: { workspaceId: string; knowledgeBaseId: string; id: string },
  runId: string,
  now: Date,
  rows: string,
): Promise<void> {
  await tx.execute(
    `insert into knowledge_documents (id, workspace_id, knowledge_base_id, connector_id, external_id, external_version, external_url, source, name, mime_type, size_bytes,
                                          sha256, blob_key, content_text, metadata, enabled, trashed_at, indexing_status, indexing_error, content_version, chunk_count,
                                          last_sync_run_id, created_by_id, created_at, updated_at, indexed_at)
         select x.id, ?, ?, ?, x.external_id, x.version, x.url, 'connector', x.title, x.mime_type, x.size_bytes,
                x.sha256, null, x.content, x.metadata, true, null, 'pending', null, 1, 0,
                ?, null, ?, ?, null
           from jsonb_to_recordset(?::jsonb) as x(id text, external_id text, version text, url text, title text, mime_type text, size_bytes bigint, sha256 text, content text, metadata jsonb)
         on conflict (connector_id, external_id) where connector_id is not null do update set
           knowledge_base_id = excluded.knowledge_base_id, external_version = excluded.external_version, external_url = excluded.external_url,
           name = excluded.name, mime_type = excluded.mime_type, size_bytes = excluded.size_bytes, sha256 = excluded.sha256,
           content_text = excluded.content_text, metadata = excluded.metadata, enabled = true, trashed_at = null,
           indexing_status = 'pending', indexing_error = null, content_version = knowledge_documents.content_version + 1,
           last_sync_run_id = excluded.last_sync_run_id, updated_at = excluded.updated_at`,
    [connector.workspaceId, connector.knowledgeBaseId, connector.id, runId, now, now, rows],
  );
}

/** Disables and trashes the connector's documents of `externalIds` (JSON array, storable); a document trashed earlier keeps its date. */
export async function tombstoneConnectorDocuments(tx: EntityManager, connectorId: string, externalIds: string, now: Date): Promise<void> {
  await tx.execute(
    `update knowledge_documents set enabled = false, trashed_at = coalesce(trashed_at, ?), updated_at = ?
          where connector_id = ? and external_id in (select jsonb_array_elements_text(?::jsonb))`,
    [now, now, connectorId, externalIds],
  );
}

/** Marks the run succeeded with its counts and cursor after (JSON, or null); unconditional: the caller holds the row lock. */
export async function finishSyncRun(
  tx: EntityManager,
  run: { runId: string; upserted: number; tombstoned: number; cursorAfter: string | null; fullSnapshot: boolean; now: Date },
): Promise<void> {
  await tx.execute(
    `update knowledge_sync_runs set status = 'succeeded', upserted_count = ?, tombstoned_count = ?, cursor_after = ?::jsonb, full_snapshot = ?,
              finished_at = ?, updated_at = ?, lease_expires_at = null where id = ?`,
    [run.upserted, run.tombstoned, run.cursorAfter, run.fullSnapshot, run.now, run.now, run.runId],
  );
}

/**
 * Marks the connector synced and releases its lease while `runId` holds it. `cursor` is the new
 * cursor's JSON; undefined keeps the stored cursor (the provider sent none).
 */
export async function finishConnectorSync(
  tx: EntityManager,
  connectorId: string,
  runId: string,
  cursor: string | undefined,
  now: Date,
): Promise<void> {
  await tx.execute(
    `update knowledge_connectors set status = 'succeeded', last_error = null, last_synced_at = ?, updated_at = ?,
              cursor = ${cursor === undefined ? 'cursor' : '?::jsonb'},
              sync_lease_run_id = null, sync_lease_token = null, sync_lease_expires_at = null
        where id = ? and sync_lease_run_id = ?`,
    [now, now, ...(cursor === undefined ? [] : [cursor]), connectorId, runId],
  );
}

/** Fails the run with `error` (storable) while it runs under `token`; false when it no longer does. */
export async function failRunningSyncRun(tx: EntityManager, runId: string, token: string, error: string, now: Date): Promise<boolean> {
  const rows = await tx.execute<Array<{ id: string }>>(
    `update knowledge_sync_runs set status = 'failed', error = ?, finished_at = ?, updated_at = ?, lease_expires_at = null
        where id = ? and status = 'running' and lease_token = ? returning id`,
    [error, now, now, runId, token],
  );
  return rows.length > 0;
}

/** Marks the connector failed with `error` as lastError and releases its lease while `runId` holds it. */
export async function failConnectorSync(tx: EntityManager, connectorId: string, runId: string, error: string, now: Date): Promise<void> {
  await tx.execute(
    `update knowledge_connectors set status = 'failed', last_error = ?, updated_at = ?, sync_lease_run_id = null, sync_lease_token = null, sync_lease_expires_at = null
        where id = ? and sync_lease_run_id = ?`,
    [error, now, connectorId, runId],
  );
}
