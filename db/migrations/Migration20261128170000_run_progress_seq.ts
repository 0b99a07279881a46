import { Migration } from '@mikro-orm/migrations';

/**
 * Run progress leaves workflows through a sink (issue 30 point 1): batches are numbered per run,
 * and a batch older than the one already written is refused by this column.
 */
export class Migration20261128170000_run_progress_seq extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table runs add column progress_seq integer not null default 0;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table runs drop column if exists progress_seq;');
  }
}
