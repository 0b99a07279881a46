import { Migration } from '@mikro-orm/migrations';

/** Statement triggers that announce a change of who a credential is, on channel `svc_auth_changed`. */
const AUTH_TRIGGERS: Array<{ table: string; columns: string }> = [
  // Not last_used_at (written on use) nor name/name_key (a rename changes no principal).
  { table: 'api_keys', columns: 'revoked_at, scope, token_hash, workspace_id, created_by_id, organization, allowed_workflow_ids' },
  { table: 'memberships', columns: 'role, workspace_id, user_id' },
  { table: 'users', columns: 'status' },
  { table: 'sessions', columns: 'revoked_at, expires_at, token_hash, user_id, workspace_id' },
];

/**
 * The API's hot path (docs/architecture.md, "The hot path"):
 * - `svc_auth_changed`: every API process caches verified credentials
 *   (services/accounts/credentialCache.ts) and LISTENs on this channel. Triggers on the tables
 *   a principal is read from notify it on commit, whoever changed them (a route, another
 *   process, an operator's SQL). Statement triggers: one notification per statement, and
 *   PostgreSQL folds identical ones of a transaction.
 * - `svc_insert_run(row, cap)`: writes a `queued` run row in one statement; with `cap`, only
 *   while the workspace has fewer than `cap` runs queued or running, decided under the
 *   workspace's advisory lock. The count is a statement of its own inside the function, so it
 *   reads a snapshot taken after the lock was granted and sees every run committed by the
 *   admission before it (a single SQL statement would count from a snapshot taken before it
 *   waited). The lock is released when the caller's implicit transaction commits the row.
 */
export class Migration20261128130000_hot_path extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create or replace function svc_notify_auth_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('svc_auth_changed', tg_table_name);
        return null;
      end $$;`);
    for (const { table, columns } of AUTH_TRIGGERS) {
      this.addSql(`
        create trigger ${table}_auth_changed after update of ${columns} or delete on ${table}
          for each statement execute function svc_notify_auth_changed();`);
      this.addSql(`
        create trigger ${table}_auth_truncated after truncate on ${table}
          for each statement execute function svc_notify_auth_changed();`);
    }
    this.addSql(`
      create or replace function svc_insert_run(p_row jsonb, p_cap integer) returns setof runs language plpgsql as $$
      declare
        active integer;
      begin
        if p_cap is not null then
          perform pg_advisory_xact_lock(hashtext('run-admission:' || (p_row->>'workspace_id')));
          select count(*) into active from runs
           where workspace_id = p_row->>'workspace_id' and status in ('queued', 'running');
          if active >= p_cap then
            return;
          end if;
        end if;
        return query
          insert into runs select * from jsonb_populate_record(null::runs, p_row)
          on conflict (id) do nothing
          returning *;
      end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists svc_insert_run(jsonb, integer);');
    for (const { table } of AUTH_TRIGGERS) {
      this.addSql(`drop trigger if exists ${table}_auth_changed on ${table};`);
      this.addSql(`drop trigger if exists ${table}_auth_truncated on ${table};`);
    }
    this.addSql('drop function if exists svc_notify_auth_changed();');
  }
}
