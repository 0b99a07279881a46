import { Migration } from '@mikro-orm/migrations';

/**
 * Workflow destinations (issue 14): one Production destination and named previews per
 * workflow, each with candidate and active version pointers and a revision for optimistic
 * concurrency; their activations (the production history), session approvals and event
 * sources. Webhooks and runs learn which destination they belong to; versions get an optional
 * display label. Existing workflows get their Production destination, pointing at the deployed
 * version, with one `deploy` activation.
 */
export class Migration20261123123000_destinations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table workflow_versions add column display_label text null;`);
    this.addSql(`
      create table workflow_targets (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        workflow_id text not null references workflows(id) on delete cascade,
        kind text not null check (kind in ('production', 'preview')),
        name text not null check (length(name) between 1 and 100),
        revision integer not null default 1 check (revision >= 1),
        enabled boolean not null default false,
        candidate_version_id text null references workflow_versions(id) on delete set null,
        active_version_id text null references workflow_versions(id) on delete set null,
        active_activation_id text null,
        generation integer not null default 0,
        connection_bindings jsonb not null default '{}',
        child_dependencies jsonb not null default '{}',
        allow_production_reactivation boolean not null default false,
        prepared jsonb null,
        created_by_id text null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create unique index workflow_targets_one_production on workflow_targets (workflow_id) where kind = 'production';`);
    this.addSql(`create unique index workflow_targets_name_uniq on workflow_targets (workflow_id, lower(name));`);
    this.addSql(`create index workflow_targets_workspace_idx on workflow_targets (workspace_id, workflow_id);`);
    this.addSql(`
      create table workflow_target_approvals (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        workflow_id text not null references workflows(id) on delete cascade,
        target_id text not null references workflow_targets(id) on delete cascade,
        version_id text not null references workflow_versions(id) on delete cascade,
        permits_reactivation boolean not null default false,
        approved_by_id text not null,
        consumed_by_activation_id text null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index workflow_target_approvals_idx on workflow_target_approvals (target_id, version_id, created_at desc);`);
    this.addSql(`
      create table workflow_target_activations (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        workflow_id text not null references workflows(id) on delete cascade,
        target_id text not null references workflow_targets(id) on delete cascade,
        version_id text not null references workflow_versions(id) on delete cascade,
        generation integer not null check (generation >= 1),
        source text not null check (source in ('deploy', 'publish', 'promotion', 'rollback', 'resume')),
        approval_id text null references workflow_target_approvals(id) on delete set null,
        request_id uuid null,
        connection_bindings jsonb not null default '{}',
        created_by_id text null,
        created_at timestamptz not null,
        unique (target_id, generation)
      );`);
    this.addSql(
      `create unique index workflow_target_activations_request_uniq on workflow_target_activations (workspace_id, request_id) where request_id is not null;`,
    );
    this.addSql(
      `create index workflow_target_activations_history_idx on workflow_target_activations (target_id, created_at desc, generation desc);`,
    );
    this.addSql(`
      create table workflow_target_sources (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        workflow_id text not null references workflows(id) on delete cascade,
        target_id text not null references workflow_targets(id) on delete cascade,
        kind text not null check (kind in ('rss', 'ci')),
        source_key text not null,
        config jsonb not null,
        state jsonb not null default '{}',
        created_by_id text null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (target_id, kind, source_key)
      );`);
    this.addSql(`create index workflow_target_sources_workflow_idx on workflow_target_sources (workflow_id);`);

    // Webhooks belong to one destination: previews and production never share a URL.
    this.addSql(`alter table webhooks add column target_id text null references workflow_targets(id) on delete cascade;`);
    this.addSql(`alter table webhooks drop constraint if exists webhooks_workflow_id_node_id_kind_key;`);
    this.addSql(`create unique index webhooks_target_node_kind_uniq on webhooks (workflow_id, coalesce(target_id, ''), node_id, kind);`);

    // Runs of a named destination: the live destination, or the destination a simulation selected.
    this.addSql(`alter table runs add column execution_target jsonb null;`);
    this.addSql(`alter table runs add column simulation_target_id text null;`);

    // Every existing workflow gets its Production destination at its deployed version.
    this.addSql(`
      insert into workflow_targets (id, workspace_id, workflow_id, kind, name, revision, enabled, candidate_version_id, active_version_id, generation, created_by_id, created_at, updated_at)
      select 'tgt_' || replace(gen_random_uuid()::text, '-', ''), w.workspace_id, w.id, 'production', 'Production', 1,
             w.status = 'deployed' and w.active_version_id is not null, w.active_version_id, w.active_version_id,
             case when w.active_version_id is null then 0 else 1 end, w.created_by_id, w.created_at, now()
        from workflows w;`);
    this.addSql(`
      insert into workflow_target_activations (id, workspace_id, workflow_id, target_id, version_id, generation, source, created_by_id, created_at)
      select 'act_' || replace(gen_random_uuid()::text, '-', ''), t.workspace_id, t.workflow_id, t.id, t.active_version_id, 1, 'deploy', v.created_by_id, v.created_at
        from workflow_targets t join workflow_versions v on v.id = t.active_version_id
       where t.kind = 'production';`);
    this.addSql(`
      update workflow_targets t set active_activation_id = a.id
        from workflow_target_activations a where a.target_id = t.id and a.generation = 1;`);
    this.addSql(`
      update webhooks h set target_id = t.id
        from workflow_targets t where t.workflow_id = h.workflow_id and t.kind = 'production';`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists webhooks_target_node_kind_uniq;');
    this.addSql('alter table webhooks drop column if exists target_id;');
    this.addSql('alter table webhooks add constraint webhooks_workflow_id_node_id_kind_key unique (workflow_id, node_id, kind);');
    this.addSql('alter table runs drop column if exists execution_target;');
    this.addSql('alter table runs drop column if exists simulation_target_id;');
    for (const table of ['workflow_target_sources', 'workflow_target_activations', 'workflow_target_approvals', 'workflow_targets']) {
      this.addSql(`drop table if exists ${table} cascade;`);
    }
    this.addSql('alter table workflow_versions drop column if exists display_label;');
  }
}
