import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox dispatcher takes pending entries fairly across workspaces (services/webhooks/store.ts,
 * `lockPendingOutbox`): it finds the workspaces with pending entries and the oldest entries of
 * each through this index.
 */
export class Migration20261128160000_outbox_fairness extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index webhook_outbox_pending_workspace_idx on webhook_outbox (workspace_id, created_at) where status = 'pending';`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists webhook_outbox_pending_workspace_idx;');
  }
}
