import { Migration } from '@mikro-orm/migrations';

/** Research runs and the URLs each considered (stored snapshots, skips and refusals). */
export class Migration20261123128000_research extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table research_runs (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        created_by_id text not null,
        query text not null,
        source_urls jsonb not null,
        limits jsonb not null,
        status text not null check (status in ('queued', 'running', 'succeeded', 'failed', 'canceled')),
        result_document_id text null,
        error text null,
        request_fingerprint text not null,
        prompt_tokens integer not null default 0,
        completion_tokens integer not null default 0,
        cost_credits double precision not null default 0,
        cancel_requested_at timestamptz null,
        started_at timestamptz null,
        finished_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index research_runs_list_idx on research_runs (workspace_id, created_at desc, id desc);`);
    this.addSql(`create index research_runs_status_idx on research_runs (workspace_id, status, created_at desc, id desc);`);
    this.addSql(`
      create table research_sources (
        id text primary key,
        run_id text not null references research_runs(id) on delete cascade,
        workspace_id text not null,
        url text not null,
        outcome text not null check (outcome in ('stored', 'skipped', 'refused', 'failed')),
        reason text null,
        canonical_url text not null,
        title text null,
        fetched_at timestamptz null,
        sha256 text null check (sha256 ~ '^[0-9a-f]{64}$'),
        snapshot_text text null,
        snapshot_file_id text null,
        links jsonb not null default '[]',
        bytes integer not null default 0,
        created_at timestamptz not null,
        unique (run_id, url)
      );`);
    this.addSql(`create index research_sources_run_idx on research_sources (run_id, created_at, id);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists research_sources cascade;');
    this.addSql('drop table if exists research_runs cascade;');
  }
}
