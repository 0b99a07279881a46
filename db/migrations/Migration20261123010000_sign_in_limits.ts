import { Migration } from '@mikro-orm/migrations';

/**
 * Failed sign-in counters shared by all API processes (services/sessions.ts SignInLimiter).
 * The shape is the one rate-limiter-flexible's PostgreSQL store reads and writes: `key`
 * (prefix + sha256 of the email and client address), `points` (failures or locks so far),
 * `expire` (window or lock end, epoch ms).
 */
export class Migration20261123010000_sign_in_limits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table sign_in_limits (
        key varchar(255) primary key,
        points integer not null default 0,
        expire bigint
      );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists sign_in_limits;');
  }
}
