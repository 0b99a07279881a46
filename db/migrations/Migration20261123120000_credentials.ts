import { Migration } from '@mikro-orm/migrations';

/** Workspace credentials: encrypted values only; names are unique per workspace, case-insensitively. */
export class Migration20261123120000_credentials extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table credentials (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null check (length(name) between 1 and 200),
        type text not null,
        secret_encrypted text not null,
        source text not null default 'inline' check (source in ('inline', 'env')),
        env_var text null,
        created_by_id text null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create unique index credentials_workspace_name_uniq on credentials (workspace_id, lower(name));`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists credentials cascade;');
  }
}
