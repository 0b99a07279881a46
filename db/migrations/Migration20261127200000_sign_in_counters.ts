import { Migration } from '@mikro-orm/migrations';

/**
 * Sign-in counters per (account, address) and per account (services/signInLimits.ts), in place
 * of rate-limiter-flexible's `sign_in_limits`, whose separate read and write let parallel
 * guesses through and whose lock count grew with every refused attempt of a burst. The old
 * counts are dropped: at worst a locked address may try again at once.
 */
export class Migration20261127200000_sign_in_counters extends Migration {
  override async up(): Promise<void> {
    this.addSql('drop table if exists sign_in_limits;');
    this.addSql(`
      create table sign_in_counters (
        key char(64) primary key,
        attempts integer not null default 0,
        window_ends_at timestamptz,
        locked_until timestamptz,
        locks integer not null default 0,
        forget_at timestamptz not null default now()
      );`);
    this.addSql('create index sign_in_counters_forget_at_idx on sign_in_counters (forget_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists sign_in_counters;');
    this.addSql(`
      create table sign_in_limits (
        key varchar(255) primary key,
        points integer not null default 0,
        expire bigint
      );`);
  }
}
