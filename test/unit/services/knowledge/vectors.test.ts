/**
 * The SQL of the two vector paths: the cosine operator with a fixed dimension (what the HNSW
 * index serves), placeholders matching the parameters, the index definition, the dual write of
 * embeddings and the HNSW search settings. Both paths also run against PostgreSQL in
 * test/integration/knowledge/vectorStorage.test.ts (the pgvector half where the server has it).
 */
import {
  embeddingUpdateSql,
  hnswSearchSettings,
  vectorIndexSql,
  vectorLiteral,
  vectorSearchQuery,
} from '../../../../services/knowledge/vectors';

const placeholders = (sql: string) => (sql.match(/\?/g) ?? []).length;
const scope = { sql: 'c.workspace_id = ? and c.knowledge_base_id = ?', params: ['kb_1'] };
const args = { model: 'm', embedding: [0.6, 0.8, 0], scope, workspaceId: 'ws_1', limit: 7 };

test('pgvector search: cosine distance on vector(dims), ordered by the indexed expression', () => {
  const q = vectorSearchQuery(true, args);
  expect(q.sql).toContain('c.embedding_vec::vector(3) <=> ?::vector(3)');
  expect(q.sql).toMatch(/order by c\.embedding_vec::vector\(3\) <=> \?::vector\(3\)\s+limit \?\) nearest\s+order by score desc, id$/);
  expect(q.sql).toContain('c.embedding_dims = 3');
  expect(q.sql).not.toContain('knowledge_dot');
  expect(placeholders(q.sql)).toBe(q.params.length);
  expect(q.params).toEqual(['[0.6,0.8,0]', 'm', 'ws_1', 'kb_1', '[0.6,0.8,0]', 7]);
});

test('real[] search: exact cosine by knowledge_dot, no pgvector type anywhere', () => {
  const q = vectorSearchQuery(false, args);
  expect(q.sql).toContain('knowledge_dot(c.embedding, ?::real[])');
  expect(q.sql).not.toMatch(/vector\(|<=>|embedding_vec/);
  expect(placeholders(q.sql)).toBe(q.params.length);
  expect(q.params).toEqual(['{0.6,0.8,0}', 'm', 3, 'ws_1', 'kb_1', 7]);
});

test('the HNSW index is per dimension, on the same expression the search orders by', () => {
  const sql = vectorIndexSql(1536);
  expect(sql).toContain('using hnsw ((embedding_vec::vector(1536)) vector_cosine_ops) where embedding_dims = 1536');
  expect(vectorSearchQuery(true, { ...args, embedding: new Array(1536).fill(0.01) }).sql).toContain('embedding_vec::vector(1536) <=>');
  expect(() => vectorIndexSql(0)).toThrow();
  expect(() => vectorIndexSql(1.5)).toThrow();
  expect(() => vectorSearchQuery(true, { ...args, embedding: [] })).toThrow();
});

test('embeddings are written to real[] always, and to the vector column only with pgvector', () => {
  expect(embeddingUpdateSql(true)).toContain('embedding_vec = (v.e::text)::vector');
  expect(embeddingUpdateSql(false)).not.toContain('embedding_vec');
  for (const pg of [true, false]) expect(placeholders(embeddingUpdateSql(pg))).toBe(3);
  expect(vectorLiteral([1, -0.5])).toBe('[1,-0.5]');
});

test('HNSW searches ask for at least the candidate count, and strict iterative scans from pgvector 0.8', () => {
  expect(hnswSearchSettings('0.8.6', 50)).toEqual([
    ['hnsw.ef_search', '50'],
    ['hnsw.iterative_scan', 'strict_order'],
  ]);
  expect(hnswSearchSettings('0.7.4', 200)).toEqual([['hnsw.ef_search', '200']]);
  expect(hnswSearchSettings('1.0.0', 5000)).toEqual([
    ['hnsw.ef_search', '1000'],
    ['hnsw.iterative_scan', 'strict_order'],
  ]);
  expect(hnswSearchSettings('0.8.0', 10)[0]).toEqual(['hnsw.ef_search', '40']);
});
