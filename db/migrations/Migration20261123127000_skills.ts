import { Migration } from '@mikro-orm/migrations';

/**
 * Skills: one row per version. Partial unique indexes keep the lineage rules under concurrent
 * requests: one working version (draft or pending) and one published version per lineage, one
 * active private draft per owner and name, one published skill per name in a workspace.
 */
export class Migration20261123127000_skills extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table skills (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        owner_id text null,
        lineage_id text not null,
        name text not null check (length(name) between 1 and 120),
        description text not null default '',
        instructions text not null,
        enabled boolean not null default true,
        visibility text not null check (visibility in ('private', 'workspace')),
        publication_status text not null check (publication_status in ('draft', 'pending', 'published', 'archived')),
        version integer not null check (version >= 1),
        parent_version_id text null,
        file_ids jsonb not null default '[]'::jsonb,
        reviewer_id text null,
        review_requested_at timestamptz null,
        reviewed_at timestamptz null,
        published_at timestamptz null,
        archived_at timestamptz null,
        usage_count integer not null default 0 check (usage_count >= 0),
        last_used_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        check ((publication_status = 'published') = (visibility = 'workspace'))
      );`);
    this.addSql(`create unique index skills_lineage_version_uniq on skills (lineage_id, version);`);
    this.addSql(`create unique index skills_lineage_working_uniq on skills (lineage_id) where publication_status in ('draft', 'pending');`);
    this.addSql(`create unique index skills_lineage_published_uniq on skills (lineage_id) where publication_status = 'published';`);
    this.addSql(
      `create unique index skills_owner_draft_name_uniq on skills (workspace_id, owner_id, lower(name)) where publication_status in ('draft', 'pending');`,
    );
    this.addSql(
      `create unique index skills_published_name_uniq on skills (workspace_id, lower(name)) where publication_status = 'published';`,
    );
    this.addSql(`create index skills_workspace_idx on skills (workspace_id, lower(name));`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists skills cascade;');
  }
}
