import { Migration } from '@mikro-orm/migrations';

/**
 * Loops (issue 29 point 4): a node in a loop runs once per iteration, and each run is its own
 * step row, `<runId>:<nodeId>#<iteration>` from the second on. The first keeps the old id
 * `<runId>:<nodeId>`, so rows written before loops existed are iteration 0.
 */
export class Migration20261128140000_run_step_iterations extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table run_steps add column iteration integer not null default 0;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table run_steps drop column if exists iteration;');
  }
}
