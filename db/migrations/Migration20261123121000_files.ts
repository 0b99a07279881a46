import { Migration } from '@mikro-orm/migrations';

/** Files (upload metadata and the internal reference to their encrypted blob) and scan verdicts. */
export class Migration20261123121000_files extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table files (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null,
        mime_type text not null,
        size_bytes integer not null check (size_bytes between 0 and 104857600),
        declared_sha256 text null check (declared_sha256 ~ '^[0-9a-f]{64}$'),
        sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
        status text not null check (status in ('pending', 'pending_scan', 'ready', 'quarantined', 'deletion_requested', 'deleted')),
        blob_key text null,
        blob_id text null,
        blob_size integer null,
        blob_sha256 text null,
        scan_lease_until timestamptz null,
        created_by_id text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        deletion_requested_at timestamptz null,
        deleted_at timestamptz null
      );`);
    this.addSql(`create index files_workspace_list_idx on files (workspace_id, created_at desc, id desc);`);
    this.addSql(`
      create table file_scans (
        id text primary key,
        workspace_id text not null,
        file_id text not null references files(id) on delete cascade,
        scanner text not null,
        verdict text not null check (verdict in ('clean', 'infected', 'error')),
        detail text null,
        blob_sha256 text not null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index file_scans_file_idx on file_scans (file_id, created_at);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists file_scans cascade;');
    this.addSql('drop table if exists files cascade;');
  }
}
