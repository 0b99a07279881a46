import { Migration } from '@mikro-orm/migrations';

/** Workspaces, users, memberships, sessions, API keys, audit log and idempotency records. */
export class Migration20261121000000_platform extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table workspaces (
        id text primary key,
        name text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`
      create table users (
        id text primary key,
        email text not null unique,
        name text null,
        password_hash text null,
        status text not null check (status in ('active', 'invited', 'banned')),
        default_workspace_id text null references workspaces(id) on delete set null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`
      create table memberships (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        user_id text not null references users(id) on delete cascade,
        role text not null check (role in ('owner', 'admin', 'member', 'viewer')),
        created_at timestamptz not null,
        unique (workspace_id, user_id)
      );`);
    this.addSql(`create index memberships_user_idx on memberships (user_id);`);
    // scope is deliberately unconstrained text: a stored unknown scope must fail auth, not the insert of a future scope.
    this.addSql(`
      create table api_keys (
        id text primary key,
        name text not null,
        name_key text not null,
        scope text not null,
        token_hash text not null unique,
        token_prefix text not null,
        workspace_id text null references workspaces(id) on delete cascade,
        created_by_id text not null references users(id),
        organization jsonb null,
        allowed_workflow_ids jsonb null,
        created_at timestamptz not null,
        last_used_at timestamptz null,
        revoked_at timestamptz null
      );`);
    // One active key per (workspace or creator for organization keys, scope, trimmed lowercase name).
    this.addSql(`
      create unique index api_keys_active_name_uniq on api_keys
        (coalesce(workspace_id, 'org:' || created_by_id), scope, name_key) where revoked_at is null;`);
    this.addSql(`create index api_keys_workspace_idx on api_keys (workspace_id, created_at desc);`);
    this.addSql(`
      create table sessions (
        id text primary key,
        token_hash text not null unique,
        user_id text not null references users(id) on delete cascade,
        workspace_id text not null references workspaces(id) on delete cascade,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        revoked_at timestamptz null
      );`);
    this.addSql(`
      create table audit_logs (
        id text primary key,
        workspace_id text null references workspaces(id) on delete set null,
        action text not null,
        severity text not null check (severity in ('info', 'warning', 'critical')),
        actor_user_id text null,
        actor_api_key_id text null,
        target_type text null,
        target_id text null,
        metadata jsonb not null default '{}',
        created_at timestamptz not null
      );`);
    this.addSql(`create index audit_logs_workspace_idx on audit_logs (workspace_id, created_at desc);`);
    this.addSql(`
      create table idempotency_records (
        id text primary key,
        workspace_id text not null,
        key text not null,
        principal_id text not null,
        fingerprint text not null,
        state text not null check (state in ('in_progress', 'completed')),
        response_status integer null,
        response_body jsonb null,
        response_headers jsonb null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        unique (workspace_id, key)
      );`);
    this.addSql(`create index idempotency_records_expiry_idx on idempotency_records (expires_at);`);
  }

  override async down(): Promise<void> {
    for (const table of ['idempotency_records', 'audit_logs', 'sessions', 'api_keys', 'memberships', 'users', 'workspaces']) {
      this.addSql(`drop table if exists ${table} cascade;`);
    }
  }
}
