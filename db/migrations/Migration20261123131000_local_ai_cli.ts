import { Migration } from '@mikro-orm/migrations';

/** Local AI CLI sessions: one row per workspace and CLI kind; secrets live in credentials, never here. */
export class Migration20261123131000_local_ai_cli extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table local_ai_cli_sessions (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        kind text not null check (kind in ('cliA', 'cliB')),
        status text not null,
        auth_method text check (auth_method in ('token', 'login')),
        credential_id text references credentials(id) on delete set null,
        version text,
        login_state_hash text,
        login_expires_at timestamptz,
        last_verified_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (workspace_id, kind)
      );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists local_ai_cli_sessions cascade;');
  }
}
