import { Migration } from '@mikro-orm/migrations';

/** Worker processes' heartbeats: the API's /readyz needs a fresh one (issue 26). */
export class Migration20261127160000_worker_heartbeats extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table worker_heartbeats (
        id text primary key,
        host text not null,
        pid integer not null,
        state text not null check (state in ('starting', 'running', 'draining', 'failed', 'stopped')),
        last_error text,
        started_at timestamptz not null default now(),
        beat_at timestamptz not null default now()
      );`);
    this.addSql(`create index worker_heartbeats_beat_idx on worker_heartbeats (beat_at desc);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists worker_heartbeats cascade;');
  }
}
