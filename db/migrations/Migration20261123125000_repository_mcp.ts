import { Migration } from '@mikro-orm/migrations';

/** Workflows as code and as tools: workflow external ids (bundle upsert, repository artifacts) and stored workflow MCP servers. */
export class Migration20261123125000_repository_mcp extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table workflows add column external_id text null;`);
    this.addSql(
      `create unique index workflows_workspace_external_id_uq on workflows (workspace_id, external_id) where external_id is not null;`,
    );
    this.addSql(`
      create table workflow_mcp_servers (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null,
        slug text not null check (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
        tools jsonb not null default '[]',
        created_by_id text null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (workspace_id, slug)
      );`);
    this.addSql(`
      create table workspace_repositories (
        workspace_id text primary key references workspaces(id) on delete cascade,
        local_path text not null,
        branch text not null,
        path_prefix text not null,
        credential_id text not null references credentials(id) on delete restrict,
        pulls_repo text not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`
      create table workflow_reviews (
        workflow_id text primary key references workflows(id) on delete cascade,
        workspace_id text not null references workspaces(id) on delete cascade,
        external_id text not null,
        candidate_version_id text not null,
        branch text not null,
        head_sha text not null,
        pr_number integer not null,
        pr_url text null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
  }
}
