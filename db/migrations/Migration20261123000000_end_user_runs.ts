import { Migration } from '@mikro-orm/migrations';

/** Runs remember the end user a gateway key ran them for (customer erasure finds them by it). */
export class Migration20261123000000_end_user_runs extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table runs add column end_user_external_id text null;`);
    this.addSql(`create index runs_end_user_idx on runs (workspace_id, end_user_external_id) where end_user_external_id is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists runs_end_user_idx;`);
    this.addSql(`alter table runs drop column if exists end_user_external_id;`);
  }
}
