import { Migration } from '@mikro-orm/migrations';

/**
 * Workspace invitations (issue 10, item 7): adding someone to a workspace offers membership;
 * the invitee's own session accepts or declines it. At most one pending invitation per
 * workspace and user.
 */
export class Migration20261123110000_invitations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table workspace_invitations (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        user_id text not null references users(id) on delete cascade,
        role varchar(16) not null check (role in ('admin', 'member', 'viewer')),
        status varchar(16) not null check (status in ('pending', 'accepted', 'declined')),
        invited_by_id text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        decided_at timestamptz
      );`);
    this.addSql(
      `create unique index workspace_invitations_one_pending on workspace_invitations (workspace_id, user_id) where status = 'pending';`,
    );
    this.addSql(`create index workspace_invitations_user on workspace_invitations (user_id, status);`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists workspace_invitations;');
  }
}
