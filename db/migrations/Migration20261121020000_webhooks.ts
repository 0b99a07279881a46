import { Migration } from '@mikro-orm/migrations';

/** Webhooks (token digests only) and the durable outbox of accepted webhook requests. */
export class Migration20261121020000_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table webhooks (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        workflow_id text not null references workflows(id) on delete cascade,
        node_id text not null,
        kind text not null check (kind in ('generic', 'errtracker')),
        token_digest text not null unique,
        enabled boolean not null default true,
        config jsonb not null default '{}',
        signing_secret_encrypted text null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (workflow_id, node_id, kind)
      );`);
    this.addSql(`create index webhooks_workspace_idx on webhooks (workspace_id, created_at desc);`);
    this.addSql(`
      create table webhook_outbox (
        id text primary key,
        workspace_id text not null,
        webhook_id text not null references webhooks(id) on delete cascade,
        workflow_id text not null,
        payload jsonb not null,
        dedupe_key text null,
        status text not null check (status in ('pending', 'dispatched', 'failed')),
        run_id text not null unique,
        attempts integer not null default 0,
        last_error text null,
        created_at timestamptz not null,
        dispatched_at timestamptz null
      );`);
    this.addSql(`create unique index webhook_outbox_dedupe_uniq on webhook_outbox (webhook_id, dedupe_key) where dedupe_key is not null;`);
    this.addSql(`create index webhook_outbox_pending_idx on webhook_outbox (created_at) where status = 'pending';`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists webhook_outbox cascade;');
    this.addSql('drop table if exists webhooks cascade;');
  }
}
