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
  await em
    .getConnection()
    .execute(
      `create index if not exists knowledge_chunks_embedding_hnsw_${dims} on knowledge_chunks
         using hnsw ((embedding_vec::vector(${dims})) vector_cosine_ops) where embedding_dims = ${dims}`,
    );
  indexed.add(dims);
}

/** A vector as a pgvector literal (also valid JSON). */
export const vectorLiteral = (v: number[]): string => `[${v.join(',')}]`;
