import { Migration } from '@mikro-orm/migrations';

/** Workflows, their versions, runs with steps and logs, and event resume tokens. */
export class Migration20261121010000_workflows extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table workflows (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null,
        description text not null default '',
        status text not null check (status in ('draft', 'deployed', 'disabled')),
        trashed boolean not null default false,
        nodes jsonb not null default '[]',
        edges jsonb not null default '[]',
        active_version_id text null,
        template_key text null,
        source_workflow_id text null,
        created_by_id text null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index workflows_workspace_idx on workflows (workspace_id, created_at desc, id desc);`);
    this.addSql(`
      create table workflow_versions (
        id text primary key,
        workflow_id text not null references workflows(id) on delete cascade,
        workspace_id text not null,
        version integer not null check (version >= 1),
        name text not null,
        description text not null default '',
        nodes jsonb not null,
        edges jsonb not null,
        created_by_id text null,
        created_at timestamptz not null,
        unique (workflow_id, version)
      );`);
    // Runs outlive their workflow (history stays readable after a delete), so no FK on workflow_id.
    this.addSql(`
      create table runs (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        workflow_id text not null,
        version_id text null,
        workflow_name text not null,
        trigger text not null check (trigger in ('manual', 'webhook', 'schedule', 'copilot', 'api', 'email', 'rss')),
        status text not null check (status in ('queued', 'running', 'waiting', 'succeeded', 'failed', 'canceled')),
        input jsonb null,
        output jsonb null,
        error text null,
        error_node_id text null,
        start_node_id text null,
        dry_run boolean not null default false,
        execution_evidence jsonb not null,
        waits jsonb not null default '[]',
        graph_snapshot jsonb null,
        parent_run_id text null,
        parent_node_id text null,
        cost_credits double precision not null default 0,
        cancel_reason text null,
        created_by_key_id text null,
        created_by_user_id text null,
        started_at timestamptz null,
        finished_at timestamptz null,
        duration_ms integer null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index runs_workspace_created_idx on runs (workspace_id, created_at desc, id desc);`);
    this.addSql(`create index runs_workspace_workflow_idx on runs (workspace_id, workflow_id, created_at desc);`);
    this.addSql(`create index runs_workspace_status_idx on runs (workspace_id, status);`);
    this.addSql(`create index runs_parent_idx on runs (parent_run_id) where parent_run_id is not null;`);
    this.addSql(`
      create table run_steps (
        id text primary key,
        run_id text not null references runs(id) on delete cascade,
        workspace_id text not null,
        node_id text not null,
        node_type text not null,
        node_name text null,
        seq integer not null,
        status text not null check (status in ('running', 'waiting', 'succeeded', 'failed', 'skipped', 'canceled')),
        attempts integer not null default 0,
        input jsonb null,
        output jsonb null,
        error text null,
        started_at timestamptz null,
        finished_at timestamptz null,
        duration_ms integer null
      );`);
    this.addSql(`create index run_steps_run_idx on run_steps (run_id, seq);`);
    this.addSql(`
      create table run_logs (
        id text primary key,
        run_id text not null references runs(id) on delete cascade,
        workspace_id text not null,
        seq integer not null,
        node_id text null,
        level text not null check (level in ('debug', 'info', 'warn', 'error')),
        message text not null,
        data jsonb null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index run_logs_run_idx on run_logs (run_id, seq);`);
    this.addSql(`create index run_logs_workspace_level_idx on run_logs (workspace_id, level, run_id);`);
    this.addSql(`
      create table resume_tokens (
        id text primary key,
        token text not null unique,
        workspace_id text not null,
        run_id text not null references runs(id) on delete cascade,
        node_id text not null,
        created_at timestamptz not null,
        expires_at timestamptz null,
        used_at timestamptz null,
        unique (run_id, node_id)
      );`);
  }

  override async down(): Promise<void> {
    for (const table of ['resume_tokens', 'run_logs', 'run_steps', 'runs', 'workflow_versions', 'workflows']) {
      this.addSql(`drop table if exists ${table} cascade;`);
    }
  }
}
