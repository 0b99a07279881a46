import { Migration } from '@mikro-orm/migrations';

/**
 * Mailer, second part: Google domain-wide delegation bindings of routes (one per route; polling
 * groups with `googleDwdConfigId` and replies on the route use it).
 */
export class Migration20261123132000_mailer_polling extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table mailer_google_dwd_configs (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        route_id text not null unique references mailer_routes(id) on delete cascade,
        credential_id text not null,
        subject text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index mailer_google_dwd_configs_workspace_idx on mailer_google_dwd_configs (workspace_id);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists mailer_google_dwd_configs cascade;');
  }
}
