/**
 * Where embeddings live: always `knowledge_chunks.embedding` (`real[]`, unit length, exact cosine
 * by `knowledge_dot`), and also `embedding_vec` (pgvector, with an HNSW index per dimension) on
 * servers that have the extension. Which one search uses is detected at run time, once per
 * process and database.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

const detected = new WeakMap<object, Promise<PgvectorInfo | null>>();

/** The pgvector column's presence and the extension's version (which search settings it knows). */
export interface PgvectorInfo {
  version: string;
}

/**
 * Whether the chunks table has the pgvector column (the migration adds it where the extension
 * can be created), with the extension's version; null on the `real[]` path.
 */
export function pgvectorInfo(em: EntityManager): Promise<PgvectorInfo | null> {
  const conn = em;
  let found = detected.get(conn);
  if (!found) {
    found = conn
      .execute<Array<{ present: boolean; version: string | null }>>(
        `select exists (select 1 from information_schema.columns where table_schema = current_schema() and table_name = 'knowledge_chunks' and column_name = 'embedding_vec') as present,
                (select extversion from pg_extension where extname = 'vector') as version`,
      )
      .then((rows) => (rows[0]?.present === true ? { version: rows[0].version ?? '0' } : null))
      .catch(() => null);
    detected.set(conn, found);
  }
  return found;
}

/** Whether the chunks table has the pgvector column. */
export const hasPgvector = async (em: EntityManager): Promise<boolean> => (await pgvectorInfo(em)) !== null;

const indexed = new WeakMap<object, Set<number>>();

/**
 * Creates the HNSW index for vectors of `dims` dimensions once per database (pgvector only;
 * indexes need a fixed dimension). Two workers embedding their first chunks at once both run
 * `create index if not exists`; the later one fails on the catalog's unique name once the first
 * commits, and then finds the index there.
 */
export async function ensureVectorIndex(em: EntityManager, dims: number): Promise<void> {
  if (!Number.isInteger(dims) || dims <= 0 || dims > 16000) return;
  const conn = em;
  let done = indexed.get(conn);
  if (!done) indexed.set(conn, (done = new Set()));
  if (done.has(dims)) return;
  try {
    await conn.execute(vectorIndexSql(dims));
  } catch (err) {
    const rows = await conn.execute<Array<{ present: boolean }>>(`select to_regclass(?) is not null as present`, [vectorIndexName(dims)]);
    if (!rows[0]?.present) throw err;
  }
  done.add(dims);
}

export const vectorIndexName = (dims: number) => `knowledge_chunks_embedding_hnsw_${dims}`;

/** The HNSW index (cosine distance) over the pgvector column for vectors of `dims` dimensions. */
export function vectorIndexSql(dims: number): string {
  if (!Number.isInteger(dims) || dims <= 0 || dims > 16000) throw new Error(`Invalid vector dimension ${dims}.`);
  return `create index if not exists ${vectorIndexName(dims)} on knowledge_chunks
         using hnsw ((embedding_vec::vector(${dims})) vector_cosine_ops) where embedding_dims = ${dims}`;
}

/**
 * The statement that stores a batch of embeddings (`?` 1: model, 2: dims, 3: JSON
 * `[{ id, e }]`): always into `real[]`, and into the pgvector column too when the server has it.
 */
export function embeddingUpdateSql(pgvector: boolean): string {
  return `update knowledge_chunks c
          set embedding = array(select x::real from jsonb_array_elements_text(v.e) with ordinality t(x, i) order by i), embedding_model = ?, embedding_dims = ?
              ${pgvector ? ', embedding_vec = (v.e::text)::vector' : ''}
         from jsonb_to_recordset(?::jsonb) as v(id text, e jsonb)
        where c.id = v.id`;
}

/**
 * The nearest chunks to `embedding` within `scope` (a where-clause on `c` and its parameters):
 * pgvector's cosine distance operator `<=>` (served by the HNSW index of that dimension), or
 * exact cosine by `knowledge_dot` over `real[]`. Scores are cosine similarities either way.
 */
export function vectorSearchQuery(
  pgvector: boolean,
  args: { model: string; embedding: number[]; scope: { sql: string; params: unknown[] }; workspaceId: string; limit: number },
): { sql: string; params: unknown[] } {
  const { model, embedding, scope, workspaceId, limit } = args;
  const dims = embedding.length;
  if (!Number.isInteger(dims) || dims <= 0 || dims > 16000) throw new Error(`Invalid vector dimension ${dims}.`);
  if (pgvector) {
    // The inner query is what the HNSW index serves (order by the indexed expression, limit);
    // the outer one breaks distance ties by id, as the real[] path does.
    return {
      sql: `select id, score from (
         select c.id, (1 - (c.embedding_vec::vector(${dims}) <=> ?::vector(${dims})))::float8 as score
           from knowledge_chunks c
          where c.embedding_model = ? and c.embedding_dims = ${dims} and ${scope.sql}
          order by c.embedding_vec::vector(${dims}) <=> ?::vector(${dims})
          limit ?) nearest
        order by score desc, id`,
      params: [vectorLiteral(embedding), model, workspaceId, ...scope.params, vectorLiteral(embedding), limit],
    };
  }
  return {
    sql: `select c.id, knowledge_dot(c.embedding, ?::real[]) as score
       from knowledge_chunks c
      where c.embedding_model = ? and c.embedding_dims = ? and ${scope.sql}
      order by score desc, c.id
      limit ?`,
    params: [`{${embedding.join(',')}}`, model, dims, workspaceId, ...scope.params, limit],
  };
}

/** A vector as a pgvector literal (also valid JSON). */
export const vectorLiteral = (v: number[]): string => `[${v.join(',')}]`;

/**
 * Session settings of an HNSW search for `limit` candidates (`set_config(name, value, true)`, for
 * the search's transaction): `hnsw.ef_search` at least `limit` (pgvector's default 40 would cap
 * the candidates below the 50 hybrid search asks for) and, from pgvector 0.8, iterative scans in
 * strict distance order, so that the workspace and base filters applied after the index scan
 * still yield `limit` rows in the exact order.
 */
export function hnswSearchSettings(version: string, limit: number): Array<[string, string]> {
  const settings: Array<[string, string]> = [['hnsw.ef_search', String(Math.min(1000, Math.max(40, limit)))]];
  const [major = 0, minor = 0] = version.split('.').map((x) => Number.parseInt(x, 10) || 0);
  if (major > 0 || minor >= 8) settings.push(['hnsw.iterative_scan', 'strict_order']);
  return settings;
}

/** Runs the nearest-chunks query of `vectorSearchQuery` on the path this database has. */
export async function nearestChunks(
  em: EntityManager,
  args: Parameters<typeof vectorSearchQuery>[1],
): Promise<Array<{ id: string; score: number }>> {
  const info = await pgvectorInfo(em);
  const query = vectorSearchQuery(info !== null, args);
  if (!info) return em.execute<Array<{ id: string; score: number }>>(query.sql, query.params);
  return em.transactional(async (tx) => {
    for (const [name, value] of hnswSearchSettings(info.version, args.limit))
      await tx.execute(`select set_config(?, ?, true)`, [name, value]);
    return tx.execute<Array<{ id: string; score: number }>>(query.sql, query.params);
  });
}
