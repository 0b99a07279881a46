import { Migration } from '@mikro-orm/migrations';

/**
 * The catalogue of user databases and tables. The data itself lives in one PostgreSQL schema
 * per user database (`udb_<id>`), created by services/databases at run time, not here.
 */
export class Migration20261123122000_databases extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table user_databases (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null,
        schema_name text not null unique,
        role_name text not null unique,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create unique index user_databases_name_uniq on user_databases (workspace_id, lower(name));`);
    this.addSql(`
      create table user_tables (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        database_id text not null references user_databases(id) on delete cascade,
        name text not null,
        physical_name text not null,
        columns jsonb not null,
        trashed boolean not null default false,
        trashed_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (database_id, physical_name)
      );`);
    this.addSql(`create unique index user_tables_live_name_uniq on user_tables (database_id, name) where not trashed;`);
    this.addSql(`create index user_tables_workspace_idx on user_tables (workspace_id, created_at);`);
    // Managed configuration: declared tables (permanent) and the receipts of applied packages.
    this.addSql(`
      create table managed_tables (
        table_id text primary key references user_tables(id) on delete cascade,
        workspace_id text not null references workspaces(id) on delete cascade,
        table_key text not null,
        key_column text not null,
        classification text not null check (classification = 'non_sensitive'),
        owner_package_key text null,
        declared_by text not null,
        declared_at timestamptz not null,
        unique (workspace_id, table_key)
      );`);
    this.addSql(`
      create table configuration_receipts (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        request_id text not null,
        input_digest text not null,
        actor_id text not null,
        package_key text not null,
        action_ids jsonb not null,
        status text not null check (status = 'applied'),
        created_at timestamptz not null,
        unique (workspace_id, request_id)
      );`);
    this.addSql(`create index configuration_receipts_recent_idx on configuration_receipts (workspace_id, created_at desc);`);
    // What the last successful apply of a package wrote to each of its tables: the reference
    // against which preview and apply tell convergence from drift.
    this.addSql(`
      create table configuration_baselines (
        workspace_id text not null references workspaces(id) on delete cascade,
        package_key text not null,
        table_key text not null,
        rows jsonb not null,
        receipt_id text not null references configuration_receipts(id) on delete cascade,
        updated_at timestamptz not null,
        primary key (workspace_id, package_key, table_key)
      );`);
    // Prepared plans awaiting (or past) a person's confirmation in a session.
    this.addSql(`
      create table configuration_proposals (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        package_key text not null,
        package jsonb not null,
        package_digest text not null,
        status text not null check (status in ('pending', 'confirmed', 'applied')),
        created_by text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        confirmed_by text null,
        confirmed_at timestamptz null
      );`);
    // Read-only SQL runs as a database's reader role after SET LOCAL ROLE. A role switch is a
    // statement (refused by the checker and by the cursor the query runs in) or set_config('role', …)
    // inside a SELECT (refused by the checker's function allowlist); and, as a guard of its own,
    // set_config is not executable by PUBLIC in this database. Only a superuser can change the
    // privileges of pg_catalog functions; a service running as another role keeps the first two guards.
    this.addSql(`
      do $$ begin
        if (select rolsuper from pg_roles where rolname = current_user) then
          revoke execute on function pg_catalog.set_config(text, text, boolean) from public;
          execute format('grant execute on function pg_catalog.set_config(text, text, boolean) to %I', current_user);
        end if;
      end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      do $$ begin
        if (select rolsuper from pg_roles where rolname = current_user) then
          grant execute on function pg_catalog.set_config(text, text, boolean) to public;
        end if;
      end $$;`);
    this.addSql('drop table if exists configuration_proposals;');
    this.addSql('drop table if exists configuration_baselines;');
    this.addSql('drop table if exists configuration_receipts;');
    this.addSql('drop table if exists managed_tables;');
    this.addSql('drop table if exists user_tables;');
    this.addSql('drop table if exists user_databases;');
  }
}
