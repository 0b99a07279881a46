import { Migration } from '@mikro-orm/migrations';

/**
 * The mailer: inbound routes (each backed by a `mailer` webhook row, so accepted messages go
 * through the webhook outbox), threads, messages and reply reservations.
 */
export class Migration20261123126000_mailer extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table webhooks drop constraint if exists webhooks_kind_check;`);
    this.addSql(
      `alter table webhooks add constraint webhooks_kind_check check (kind in ('generic', 'errtracker', 'mailer', 'rss', 'ci'));`,
    );
    this.addSql(`
      create table mailer_routes (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        workflow_id text not null references workflows(id) on delete cascade,
        target_id text not null,
        target_bound boolean not null,
        webhook_id text not null references webhooks(id) on delete cascade,
        address text not null,
        description text null,
        enabled boolean not null default true,
        signing_secret_encrypted text null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (target_id, address)
      );`);
    this.addSql(`create index mailer_routes_workspace_idx on mailer_routes (workspace_id, created_at desc, id desc);`);
    this.addSql(`create index mailer_routes_address_idx on mailer_routes (workspace_id, address);`);
    this.addSql(`
      create table mailer_threads (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        route_id text not null references mailer_routes(id) on delete cascade,
        external_thread_id text null,
        subject text not null,
        subject_key text not null,
        participants_key text not null,
        message_count integer not null default 0,
        last_message_at timestamptz not null,
        created_at timestamptz not null
      );`);
    this.addSql(`create index mailer_threads_list_idx on mailer_threads (workspace_id, created_at desc, id desc);`);
    this.addSql(
      `create unique index mailer_threads_external_uniq on mailer_threads (route_id, external_thread_id) where external_thread_id is not null;`,
    );
    this.addSql(`create index mailer_threads_subject_idx on mailer_threads (route_id, subject_key, participants_key);`);
    this.addSql(`
      create table mailer_messages (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        route_id text not null references mailer_routes(id) on delete cascade,
        thread_id text not null references mailer_threads(id) on delete cascade,
        external_message_id text null,
        message_id_header text null,
        direction text not null check (direction in ('inbound', 'outbound')),
        from_address text not null,
        to_addresses jsonb not null default '[]',
        subject text not null,
        text text null,
        html text null,
        attachment_file_ids jsonb not null default '[]',
        provider_metadata jsonb not null default '{}',
        outbox_id text null,
        created_at timestamptz not null
      );`);
    this.addSql(
      `create unique index mailer_messages_external_uniq on mailer_messages (route_id, external_message_id) where external_message_id is not null;`,
    );
    this.addSql(`create index mailer_messages_header_idx on mailer_messages (workspace_id, message_id_header);`);
    this.addSql(`create index mailer_messages_list_idx on mailer_messages (workspace_id, thread_id, created_at desc, id desc);`);
    this.addSql(`
      create table mailer_reply_reservations (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        message_id text not null references mailer_messages(id) on delete cascade,
        idempotency_key text not null,
        fingerprint text not null,
        status text not null check (status in ('sending', 'sent', 'unknown', 'retry_authorized')),
        credential_id text null,
        provider text null,
        attempts integer not null default 1,
        reply_message_id text null,
        provider_message_id text null,
        last_error text null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        unique (message_id, idempotency_key)
      );`);
    this.addSql(`
      create table mailer_polling_groups (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        provider text not null check (provider in ('mailA', 'mailB')),
        credential_id text null,
        google_dwd_config_id text null,
        principal_id text not null,
        identity_key text not null unique,
        interval_seconds integer not null check (interval_seconds between 60 and 86400),
        enabled boolean not null,
        cursor text null,
        next_poll_at timestamptz null,
        last_polled_at timestamptz null,
        last_error text null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );`);
    this.addSql(`create index mailer_polling_groups_workspace_idx on mailer_polling_groups (workspace_id, created_at desc, id desc);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists mailer_polling_groups cascade;');
    this.addSql('drop table if exists mailer_reply_reservations cascade;');
    this.addSql('drop table if exists mailer_messages cascade;');
    this.addSql('drop table if exists mailer_threads cascade;');
    this.addSql('drop table if exists mailer_routes cascade;');
  }
}
