/**
 * Hybrid retrieval over the chunks of a workspace's knowledge bases (one base, or all of them):
 *
 * - keyword: PostgreSQL full-text search on the chunks' generated tsvector (GIN index), ranked
 *   by `ts_rank_cd`. A query written with web-search syntax (quotes, `-`, `or`) is taken as
 *   `websearch_to_tsquery` means it; a plain query matches any of its terms, ranked by cover
 *   density and with chunks that contain all of them (`websearch_to_tsquery`) first;
 * - vector: exact cosine similarity of unit-length embeddings (`real[]`), or pgvector's HNSW
 *   index where the server has the extension, against the query's embedding (similarity above 0);
 * - hybrid: reciprocal rank fusion (Cormack et al., 2009) of the two lists, each cut at
 *   `max(4 × limit, 50)` candidates: score = Σ 1 / (60 + rank).
 *
 * Only chunks of ready, enabled, untrashed documents of untrashed bases are searched. Without an
 * embeddings endpoint (or when the query embedding fails) the search is keyword only and says so.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '../kernel/errors';
import type { QueryEmbedder } from '../kernel/ports';
import type { WorkspacePrincipal } from '../kernel/principal';
import { findKnowledgeBase } from './bases';
import { chunksWithDocuments, keywordMatches, type ChunkScope } from './store';
import { nearestChunks } from './vectors';

export type Provenance = 'vector' | 'hybrid' | 'keyword';

export const RRF_K = 60;
export const candidateCount = (limit: number) => Math.max(4 * limit, 50);

export interface SearchResult {
  chunk: { id: string; ordinal: number; heading: string | null; content: string; tokenCount: number };
  document: {
    id: string;
    knowledgeBaseId: string;
    name: string;
    mimeType: string;
    source: 'upload' | 'connector';
    connectorId: string | null;
    externalUrl: string | null;
  };
  score: number;
  provenance: Provenance;
  ranks: { keyword: number | null; vector: number | null };
}

export interface SearchResponse {
  results: SearchResult[];
  retrieval?: {
    mode: 'hybrid' | 'keyword';
    /** `used`; `not_configured`: no embeddings endpoint; `unavailable`: the query could not be embedded now. */
    vector: 'used' | 'not_configured' | 'unavailable';
    fusion: { method: 'rrf'; k: number; candidates: number } | null;
    note?: string;
  };
}

export interface SearchInput {
  knowledgeBaseId?: string;
  query: string;
  limit: number;
}

interface Ranked {
  id: string;
  score: number;
}

/** Web-search operators: quoted phrases, exclusions, explicit `or`. */
const OPERATORS = /"|(^|\s)-\S|\sor\s/i;

function scopeSql(input: { knowledgeBaseId?: string }): ChunkScope {
  return {
    sql: `c.workspace_id = ? ${input.knowledgeBaseId ? 'and c.knowledge_base_id = ?' : ''}
          and exists (select 1 from knowledge_documents d where d.id = c.document_id and d.content_version = c.content_version
                        and d.indexing_status = 'ready' and d.enabled and d.trashed_at is null)
          and exists (select 1 from knowledge_bases b where b.id = c.knowledge_base_id and b.trashed_at is null)`,
    params: input.knowledgeBaseId ? [input.knowledgeBaseId] : [],
  };
}

export async function keywordCandidates(em: EntityManager, workspaceId: string, input: SearchInput, n: number): Promise<Ranked[]> {
  const scope = scopeSql(input);
  const strict = OPERATORS.test(input.query);
  // Plain queries: any term matches (OR of the query's lexemes); all-terms matches rank first.
  const rows = await keywordMatches(em, { query: input.query, strict, scope, workspaceId, limit: n });
  return rows.map((r) => ({ id: r.id, score: Number(r.score) }));
}

export async function vectorCandidates(
  em: EntityManager,
  workspaceId: string,
  input: SearchInput,
  model: string,
  embedding: number[],
  n: number,
): Promise<Ranked[]> {
  const rows = await nearestChunks(em, { model, embedding, scope: scopeSql(input), workspaceId, limit: n });
  // Orthogonal (or opposed) vectors share nothing with the query: not a match.
  return rows.map((r) => ({ id: r.id, score: Number(r.score) })).filter((r) => r.score > 0);
}

/** Reciprocal rank fusion of ranked lists; provenance says which lists found each chunk. */
export function fuse(
  keyword: Ranked[],
  vector: Ranked[],
  limit: number,
  k = RRF_K,
): Array<{ id: string; score: number; provenance: Provenance; ranks: SearchResult['ranks'] }> {
  const byId = new Map<string, { score: number; ranks: SearchResult['ranks'] }>();
  const add = (list: Ranked[], which: 'keyword' | 'vector') =>
    list.forEach((r, i) => {
      const entry = byId.get(r.id) ?? { score: 0, ranks: { keyword: null, vector: null } };
      entry.score += 1 / (k + i + 1);
      entry.ranks[which] = i + 1;
      byId.set(r.id, entry);
    });
  add(keyword, 'keyword');
  add(vector, 'vector');
  return [...byId.entries()]
    .map(([id, e]) => {
      const provenance: Provenance = e.ranks.keyword && e.ranks.vector ? 'hybrid' : e.ranks.vector ? 'vector' : 'keyword';
      return { id, score: e.score, ranks: e.ranks, provenance };
    })
    .sort((a, b) => b.score - a.score || (a.ranks.vector ?? Infinity) - (b.ranks.vector ?? Infinity) || a.id.localeCompare(b.id))
    .slice(0, limit);
}

async function hydrate(em: EntityManager, ids: string[]): Promise<Map<string, Omit<SearchResult, 'score' | 'provenance' | 'ranks'>>> {
  if (ids.length === 0) return new Map();
  const rows = await chunksWithDocuments(em, JSON.stringify(ids));
  return new Map(
    rows.map((r) => [
      r.id,
      {
        chunk: { id: r.id, ordinal: r.ordinal, heading: r.heading, content: r.content, tokenCount: r.token_count },
        document: {
          id: r.document_id,
          knowledgeBaseId: r.knowledge_base_id,
          name: r.name,
          mimeType: r.mime_type,
          source: r.source,
          connectorId: r.connector_id,
          externalUrl: r.external_url,
        },
      },
    ]),
  );
}

/** Query embedding budget: an embeddings call through a Temporal activity. */
export const QUERY_EMBEDDING_BUDGET_MS = 15_000;

export type RetrievalMode = 'hybrid' | 'keyword' | 'vector';

/**
 * The ranked chunk ids of a search (no hydration), for the route and the retrieval benchmark.
 * `mode` forces one list (the benchmark compares them); the route always asks for hybrid.
 */
export async function rankChunks(
  em: EntityManager,
  embedder: QueryEmbedder,
  workspaceId: string,
  input: SearchInput,
  mode: RetrievalMode = 'hybrid',
): Promise<{ ranked: ReturnType<typeof fuse>; retrieval: NonNullable<SearchResponse['retrieval']> }> {
  const n = candidateCount(input.limit);
  const wantVector = mode !== 'keyword';
  let embedding: number[] | null = null;
  let vectorState: 'used' | 'not_configured' | 'unavailable' = 'not_configured';
  let note: string | undefined;
  if (wantVector && embedder.configured) {
    try {
      embedding = await embedder.embed(workspaceId, input.query, QUERY_EMBEDDING_BUDGET_MS);
      vectorState = 'used';
    } catch (err) {
      vectorState = 'unavailable';
      note = `Vector search is unavailable for this query (${(err as Error).message.slice(0, 200)}); results are keyword only.`;
    }
  } else if (wantVector) {
    note = 'No embeddings endpoint is configured (EMBEDDINGS_BASE_URL); results are keyword only.';
  }
  const [keyword, vector] = await Promise.all([
    mode === 'vector' ? Promise.resolve([]) : keywordCandidates(em, workspaceId, input, n),
    embedding ? vectorCandidates(em, workspaceId, input, embedder.model, embedding, n) : Promise.resolve([]),
  ]);
  const hybrid = embedding !== null && mode === 'hybrid';
  const ranked = hybrid
    ? fuse(keyword, vector, input.limit)
    : (mode === 'vector' ? vector : keyword).slice(0, input.limit).map((r, i) => {
        const provenance: Provenance = mode === 'vector' ? 'vector' : 'keyword';
        return {
          id: r.id,
          score: r.score,
          provenance,
          ranks: { keyword: mode === 'vector' ? null : i + 1, vector: mode === 'vector' ? i + 1 : null },
        };
      });
  return {
    ranked,
    retrieval: {
      mode: hybrid ? 'hybrid' : 'keyword',
      vector: vectorState,
      fusion: hybrid ? { method: 'rrf', k: RRF_K, candidates: n } : null,
      ...(note ? { note } : {}),
    },
  };
}

/** POST /knowledge-bases/search. An empty query answers `{ results: [] }`. */
export async function searchKnowledge(
  em: EntityManager,
  embedder: QueryEmbedder,
  principal: WorkspacePrincipal,
  input: SearchInput,
): Promise<SearchResponse> {
  const query = input.query.trim();
  if (input.knowledgeBaseId) {
    const kb = await findKnowledgeBase(em, principal.workspaceId, input.knowledgeBaseId).catch(() => null);
    if (!kb) throw notFound(`Knowledge base ${input.knowledgeBaseId} not found.`);
  }
  if (query === '') return { results: [] };
  const { ranked, retrieval } = await rankChunks(em, embedder, principal.workspaceId, { ...input, query });
  const details = await hydrate(
    em,
    ranked.map((r) => r.id),
  );
  const results = ranked.flatMap((r) => {
    const d = details.get(r.id);
    return d ? [{ ...d, score: r.score, provenance: r.provenance, ranks: r.ranks }] : [];
  });
  return { results, retrieval };
}
