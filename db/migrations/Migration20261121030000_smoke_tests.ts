import { Migration } from '@mikro-orm/migrations';

/** Worker smoke tests, newest per workspace reported as its latest. */
export class Migration20261121030000_smoke_tests extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table smoke_tests (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        status text not null check (status in ('passed', 'attention', 'failed')),
        message text not null,
        duration_ms integer not null,
        details jsonb not null default '{}',
        created_at timestamptz not null
      );`);
    this.addSql(`create index smoke_tests_workspace_idx on smoke_tests (workspace_id, created_at desc);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists smoke_tests cascade;');
  }
}
