import { Migration } from '@mikro-orm/migrations';

/**
 * Which workflow drafts an extflow import wrote (issue 29 point 6): one row per workspace and
 * externalId, with the candidate version id of the draft the import wrote. A later import of
 * that externalId updates the workflow only while its draft is still that one; a workflow whose
 * draft was edited since, or that got its externalId otherwise, is refused as a conflict.
 *
 * Workflows already imported (an `extflow-` externalId) get a row with a null draft version:
 * their next import updates them as before, then records the draft it wrote.
 */
export class Migration20261128090000_extflow_imports extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table extflow_imports (
        workspace_id text not null references workspaces(id) on delete cascade,
        external_id text not null,
        workflow_id text not null,
        draft_version_id text null,
        imported_at timestamptz not null,
        primary key (workspace_id, external_id)
      );`);
    this.addSql(`
      insert into extflow_imports (workspace_id, external_id, workflow_id, draft_version_id, imported_at)
      select workspace_id, external_id, id, null, updated_at from workflows where external_id like 'extflow-%'
      on conflict do nothing;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists extflow_imports;');
  }
}
