/**
 * Where embeddings live: always `knowledge_chunks.embedding` (`real[]`, unit length, exact cosine
 * by `knowledge_dot`), and also `embedding_vec` (pgvector, with an HNSW index per dimension) on
 * servers that have the extension. Which one search uses is detected at run time, once per
 * process and database.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

const detected = new WeakMap<object, Promise<boolean>>();

/** Whether the chunks table has the pgvector column (the migration adds it where the extension exists). */
export function hasPgvector(em: EntityManager): Promise<boolean> {
  const conn = em.getConnection();
  let found = detected.get(conn);
  if (!found) {
    found = conn
      .execute<Array<{ present: boolean }>>(
        `select exists (select 1 from information_schema.columns where table_name = 'knowledge_chunks' and column_name = 'embedding_vec') as present`,
      )
      .then((rows) => rows[0]?.present === true)
      .catch(() => false);
    detected.set(conn, found);
  }
  return found;
}

const indexed = new Set<number>();

/** Creates the HNSW index for vectors of `dims` dimensions once (pgvector only; indexes need a fixed dimension). */
export async function ensureVectorIndex(em: EntityManager, dims: number): Promise<void> {
  if (!Number.isInteger(dims) || dims <= 0 || dims > 16000 || indexed.has(dims)) return;
  await em.getConnection().execute(vectorIndexSql(dims));
  indexed.add(dims);
}

/** The HNSW index (cosine distance) over the pgvector column for vectors of `dims` dimensions. */
export function vectorIndexSql(dims: number): string {
  if (!Number.isInteger(dims) || dims <= 0 || dims > 16000) throw new Error(`Invalid vector dimension ${dims}.`);
  return `create index if not exists knowledge_chunks_embedding_hnsw_${dims} on knowledge_chunks
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
    return {
      sql: `select c.id, (1 - (c.embedding_vec::vector(${dims}) <=> ?::vector(${dims})))::float8 as score
         from knowledge_chunks c
        where c.embedding_model = ? and c.embedding_dims = ${dims} and ${scope.sql}
        order by c.embedding_vec::vector(${dims}) <=> ?::vector(${dims})
        limit ?`,
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
