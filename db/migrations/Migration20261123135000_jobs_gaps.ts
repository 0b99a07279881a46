import { Migration } from '@mikro-orm/migrations';

/**
 * Chat messages of command threads (user messages of session sends and schedule firings, the
 * assistant's answer when such a job ends), the `chat` mark of jobs started from a chat
 * message, the research runs' optional model provider (a connected local AI CLI), and the
 * pinned data of imported external-tool workflows (used by the extflow smoke test's dry runs).
 */
export class Migration20261123135000_jobs_gaps extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table command_messages (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        thread_id text not null references command_threads(id) on delete cascade,
        position bigserial not null unique,
        role text not null check (role in ('user', 'assistant')),
        content text not null,
        job_id text null,
        job_status text null,
        created_by_id text null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index command_messages_thread_idx on command_messages (thread_id, position);`);
    this.addSql(`create unique index command_messages_job_role_idx on command_messages (job_id, role) where job_id is not null;`);
    this.addSql(`alter table command_jobs add column chat boolean not null default false;`);
    this.addSql(`alter table research_runs add column ai_provider text null, add column ai_model text null;`);
    this.addSql(`
      create table extflow_pinned_data (
        workspace_id text not null references workspaces(id) on delete cascade,
        external_id text not null,
        pin_data jsonb not null,
        updated_at timestamptz not null,
        primary key (workspace_id, external_id)
      );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists extflow_pinned_data;');
    this.addSql('alter table research_runs drop column if exists ai_provider, drop column if exists ai_model;');
    this.addSql('alter table command_jobs drop column if exists chat;');
    this.addSql('drop table if exists command_messages;');
  }
}
