import { Migration } from '@mikro-orm/migrations';

/**
 * Organizations that group workspaces (organization keys belong to one; a workspace is in
 * exactly one, its own until it joins another), and smart-HTTP Git remotes for the workspace
 * repository (a remote URL or a local path, exactly one).
 */
export class Migration20261123133000_organizations_git_remotes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table organizations (
        id text primary key,
        name text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`
      create table organization_workspaces (
        workspace_id text primary key references workspaces(id) on delete cascade,
        organization_id text not null references organizations(id) on delete cascade,
        joined_at timestamptz not null
      );`);
    this.addSql(`create index organization_workspaces_organization_idx on organization_workspaces (organization_id);`);
    this.addSql(`alter table workspace_repositories alter column local_path drop not null;`);
    this.addSql(`alter table workspace_repositories add column remote_url text null;`);
    this.addSql(
      `alter table workspace_repositories add constraint workspace_repositories_location_ck check ((local_path is null) <> (remote_url is null));`,
    );
  }
}
