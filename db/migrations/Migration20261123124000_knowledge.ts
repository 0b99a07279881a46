import { Migration } from '@mikro-orm/migrations';

/**
 * Knowledge bases, documents, chunks (full-text tsvector with a GIN index; embeddings as
 * `real[]` everywhere and, where the server has pgvector, also as `vector`), connectors and
 * their sync runs.
 */
export class Migration20261123124000_knowledge extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table knowledge_bases (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null check (length(name) between 1 and 200),
        description text null,
        min_chunk_size_chars integer not null,
        max_chunk_size_tokens integer not null,
        overlap_tokens integer not null check (overlap_tokens < max_chunk_size_tokens),
        trashed_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index knowledge_bases_workspace_idx on knowledge_bases (workspace_id, created_at desc, id desc);`);
    this.addSql(`
      create table knowledge_connectors (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        knowledge_base_id text not null references knowledge_bases(id) on delete cascade,
        name text not null,
        provider_id text not null,
        status text not null check (status in ('idle', 'syncing', 'succeeded', 'failed')),
        config jsonb not null,
        cursor jsonb null,
        last_synced_at timestamptz null,
        next_sync_at timestamptz null,
        last_error text null,
        sync_lease_run_id text null,
        sync_lease_token text null,
        sync_lease_expires_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create unique index knowledge_connectors_name_uniq on knowledge_connectors (knowledge_base_id, name);`);
    this.addSql(`create index knowledge_connectors_workspace_idx on knowledge_connectors (workspace_id, created_at desc, id desc);`);
    this.addSql(`
      create table knowledge_sync_runs (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        connector_id text not null references knowledge_connectors(id) on delete cascade,
        status text not null check (status in ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
        options jsonb not null,
        request_fingerprint text not null,
        cursor_before jsonb null,
        cursor_after jsonb null,
        full_snapshot boolean not null default false,
        upserted_count integer not null default 0,
        tombstoned_count integer not null default 0,
        error text null,
        lease_token text null,
        lease_expires_at timestamptz null,
        started_at timestamptz null,
        finished_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index knowledge_sync_runs_connector_idx on knowledge_sync_runs (connector_id, created_at desc, id desc);`);
    this.addSql(`
      create table knowledge_documents (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        knowledge_base_id text not null references knowledge_bases(id) on delete cascade,
        connector_id text null references knowledge_connectors(id) on delete set null,
        external_id text null,
        external_version text null,
        external_url text null,
        source text not null check (source in ('upload', 'connector')),
        name text not null,
        mime_type text not null,
        size_bytes bigint not null,
        sha256 text not null,
        blob_key text null,
        content_text text null,
        metadata jsonb not null default '{}'::jsonb,
        enabled boolean not null default true,
        trashed_at timestamptz null,
        indexing_status text not null check (indexing_status in ('pending', 'processing', 'ready', 'failed')),
        indexing_error text null,
        content_version integer not null default 1,
        chunk_count integer not null default 0,
        last_sync_run_id text null,
        created_by_id text null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        indexed_at timestamptz null
      );`);
    this.addSql(
      `create unique index knowledge_documents_external_uniq on knowledge_documents (connector_id, external_id) where connector_id is not null;`,
    );
    this.addSql(`create index knowledge_documents_base_idx on knowledge_documents (knowledge_base_id, created_at desc, id desc);`);
    this.addSql(`create index knowledge_documents_run_idx on knowledge_documents (last_sync_run_id) where indexing_status = 'pending';`);
    this.addSql(`
      create table knowledge_chunks (
        id text primary key,
        workspace_id text not null,
        knowledge_base_id text not null,
        document_id text not null references knowledge_documents(id) on delete cascade,
        content_version integer not null,
        ordinal integer not null,
        heading text null,
        content text not null,
        token_count integer not null,
        char_start integer not null,
        char_end integer not null,
        tsv tsvector generated always as (to_tsvector('english', coalesce(heading, '') || ' ' || content)) stored,
        embedding real[] null,
        embedding_model text null,
        embedding_dims integer null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index knowledge_chunks_tsv_idx on knowledge_chunks using gin (tsv);`);
    this.addSql(`create index knowledge_chunks_document_idx on knowledge_chunks (document_id, ordinal);`);
    this.addSql(`create index knowledge_chunks_base_idx on knowledge_chunks (workspace_id, knowledge_base_id);`);
    // Exact cosine of unit vectors (embeddings are stored normalised): the dot product.
    this.addSql(`
      create or replace function knowledge_dot(a real[], b real[]) returns double precision
        language sql immutable parallel safe
        as $$ select sum(x::double precision * y) from unnest(a, b) as t(x, y) $$;`);
    // pgvector where the server ships it (docker-compose's image does); a server without it
    // keeps the real[] column only and search uses exact cosine over it.
    this.addSql(`
      do $$
      begin
        if exists (select 1 from pg_available_extensions where name = 'vector') then
          begin
            create extension if not exists vector;
          exception when others then
            raise notice 'pgvector is available but could not be created: %', sqlerrm;
          end;
        end if;
        if exists (select 1 from pg_extension where extname = 'vector') then
          execute 'alter table knowledge_chunks add column if not exists embedding_vec vector';
        end if;
      end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists knowledge_chunks cascade;');
    this.addSql('drop table if exists knowledge_documents cascade;');
    this.addSql('drop table if exists knowledge_sync_runs cascade;');
    this.addSql('drop table if exists knowledge_connectors cascade;');
    this.addSql('drop table if exists knowledge_bases cascade;');
    this.addSql('drop function if exists knowledge_dot(real[], real[]);');
  }
}
