import { Migration } from '@mikro-orm/migrations';

/**
 * Command jobs: chat threads, the jobs queued on them (first in, first out per thread) and
 * command schedules (each mirrored by a Temporal Schedule).
 */
export class Migration20261123129000_commands extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table command_threads (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        created_by_id text not null,
        title text not null,
        next_sequence integer not null default 1,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index command_threads_workspace_idx on command_threads (workspace_id, created_at desc, id desc);`);
    this.addSql(`
      create table command_jobs (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        thread_id text not null references command_threads(id) on delete cascade,
        sequence integer not null,
        created_by_id text not null,
        status text not null check (status in ('queued', 'running', 'waiting_confirmation', 'succeeded', 'failed', 'canceled', 'blocked')),
        message text not null,
        assistant_context jsonb null,
        ai_provider text null,
        ai_model text null,
        attachments jsonb not null default '[]',
        artifacts jsonb not null default '[]',
        plan jsonb null,
        plan_id text null,
        confirmation_id text null,
        confirmation_expires_at timestamptz null,
        confirmation_state text null check (confirmation_state in ('pending', 'consumed', 'resumed', 'expired')),
        traces jsonb not null default '[]',
        progress_message text null,
        progress_run_id text null,
        result jsonb null,
        error text null,
        attempt integer not null default 1,
        retry_of_job_id text null,
        cost_credits double precision not null default 0,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (thread_id, sequence)
      );`);
    this.addSql(`create index command_jobs_workspace_idx on command_jobs (workspace_id, created_at desc, id desc);`);
    this.addSql(`create index command_jobs_thread_idx on command_jobs (thread_id, sequence);`);
    this.addSql(`create unique index command_jobs_confirmation_idx on command_jobs (confirmation_id) where confirmation_id is not null;`);
    this.addSql(`
      create table command_schedules (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        created_by_id text not null,
        title text not null,
        prompt text not null,
        cron text not null,
        timezone text not null,
        enabled boolean not null default true,
        thread_id text null,
        next_run_at timestamptz null,
        last_run_at timestamptz null,
        run_count integer not null default 0,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index command_schedules_workspace_idx on command_schedules (workspace_id, created_at desc, id desc);`);
    this.addSql(`
      create table command_schedule_firings (
        schedule_id text not null references command_schedules(id) on delete cascade,
        firing_id text not null,
        job_id text not null,
        created_at timestamptz not null,
        primary key (schedule_id, firing_id)
      );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists command_schedule_firings;');
    this.addSql('drop table if exists command_schedules;');
    this.addSql('drop table if exists command_jobs;');
    this.addSql('drop table if exists command_threads;');
  }
}
