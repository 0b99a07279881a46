/**
 * Raw SQL of the accounts area: credential lookups joined across keys, users and memberships
 * in one statement (they run on every authenticated request), the advisory lock of an
 * invitation, and the organization rows a workspace is made part of on first use.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { MembershipRole, OrganizationGrant } from '../../db/entities';

/** An unrevoked API key with its creator's status and role in the key's workspace (null for none, or an organization key). */
export interface ApiKeyRow {
  id: string;
  scope: string;
  workspace_id: string | null;
  created_by_id: string;
  organization: OrganizationGrant | null;
  allowed_workflow_ids: string[] | null;
  user_status: string;
  role: MembershipRole | null;
}

/** The unrevoked key whose token hashes to `tokenHash` (at most one row); the caller judges scope, ban and membership. */
export async function activeApiKeyByHash(em: EntityManager, tokenHash: string): Promise<ApiKeyRow[]> {
  return em.execute<ApiKeyRow[]>(
    `select k.id, k.scope, k.workspace_id, k.created_by_id, k.organization, k.allowed_workflow_ids,
            u.status as user_status, m.role
       from api_keys k
       join users u on u.id = k.created_by_id
       left join memberships m on m.workspace_id = k.workspace_id and m.user_id = k.created_by_id
      where k.token_hash = ? and k.revoked_at is null`,
    [tokenHash],
  );
}

/** Sets `lastUsedAt` of keys `ids` to `at`, never back in time (writes of several processes may cross). */
export async function touchApiKeys(em: EntityManager, ids: string[], at: Date): Promise<void> {
  await em.execute(
    'update api_keys set last_used_at = greatest(last_used_at, ?) where id in (select jsonb_array_elements_text(?::jsonb))',
    [at, JSON.stringify(ids)],
  );
}

/**
 * The live session whose token hashes to `tokenHash`, with the role of its user (not banned) in
 * its workspace; no row when unknown, expired, revoked, banned or no longer a member. Runs on
 * a pool connection of its own, outside any transaction of `em`.
 */
export async function liveSessionByHash(
  em: EntityManager,
  tokenHash: string,
): Promise<Array<{ id: string; user_id: string; workspace_id: string; role: MembershipRole; expires_at: Date }>> {
  return em.getConnection().execute(
    `select s.id, s.user_id, s.workspace_id, m.role, s.expires_at
         from sessions s
         join users u on u.id = s.user_id and u.status <> 'banned'
         join memberships m on m.workspace_id = s.workspace_id and m.user_id = s.user_id
        where s.token_hash = ? and s.revoked_at is null and s.expires_at > now()`,
    [tokenHash],
  );
}

/** A user's email; undefined when the user is gone. */
export async function userEmail(em: EntityManager, userId: string): Promise<string | undefined> {
  const rows: Array<{ email: string }> = await em.execute('select email from users where id = ?', [userId]);
  return rows[0]?.email;
}

/** Waits for the transaction-scoped advisory lock of inviting a user to a workspace: concurrent invitations of one person are serialised. */
export async function lockInvitation(tx: EntityManager, workspaceId: string, userId: string): Promise<void> {
  await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`invite:${workspaceId}:${userId}`]);
}

/** The organization a workspace is in; undefined before its first use. */
export async function workspaceOrganization(em: EntityManager, workspaceId: string): Promise<string | undefined> {
  const found = await em.execute<Array<{ organization_id: string }>>(
    `select organization_id from organization_workspaces where workspace_id = ?`,
    [workspaceId],
  );
  return found[0]?.organization_id;
}

/** A workspace's name; undefined when there is no such workspace. */
export async function workspaceName(em: EntityManager, workspaceId: string): Promise<string | undefined> {
  const [ws] = await em.execute<Array<{ name: string }>>(`select name from workspaces where id = ?`, [workspaceId]);
  return ws?.name;
}

/**
 * Inserts an organization and puts the workspace in it, two statements with no transaction
 * around them; false when the workspace joined another organization meanwhile (a concurrent
 * first use), in which case the caller deletes the organization it made.
 */
export async function insertOrganizationOf(
  em: EntityManager,
  workspaceId: string,
  org: { id: string; name: string; now: Date },
): Promise<boolean> {
  await em.execute(`insert into organizations (id, name, created_at, updated_at) values (?, ?, ?, ?)`, [
    org.id,
    org.name,
    org.now,
    org.now,
  ]);
  const joined = await em.execute<Array<{ organization_id: string }>>(
    `insert into organization_workspaces (workspace_id, organization_id, joined_at) values (?, ?, ?)
     on conflict (workspace_id) do nothing returning organization_id`,
    [workspaceId, org.id, org.now],
  );
  return joined.length > 0;
}

/** Deletes an organization (one that lost the race of `insertOrganizationOf`). */
export async function deleteOrganization(em: EntityManager, organizationId: string): Promise<void> {
  await em.execute(`delete from organizations where id = ?`, [organizationId]);
}

/** Whether a workspace of that id exists. */
export async function workspaceExists(em: EntityManager, workspaceId: string): Promise<boolean> {
  const [exists] = await em.execute<Array<{ id: string }>>(`select id from workspaces where id = ?`, [workspaceId]);
  return exists !== undefined;
}

/**
 * Ids of the active organization keys of organization `org`: those naming it, and those stored
 * before organizations existed whose first selected workspace is in it.
 */
export async function activeOrganizationKeyIds(em: EntityManager, org: string): Promise<Array<{ id: string }>> {
  return em.execute<Array<{ id: string }>>(
    `select k.id from api_keys k
      where k.workspace_id is null and k.scope = 'organization' and k.revoked_at is null
        and (k.organization->>'organizationId' = ?
             or (k.organization->>'organizationId' is null
                 and k.organization->'workspaceIds'->>0 in (select w.workspace_id from organization_workspaces w where w.organization_id = ?)))`,
    [org, org],
  );
}

/** Renames an organization. */
export async function renameOrganizationRow(em: EntityManager, organizationId: string, name: string, now: Date): Promise<void> {
  await em.execute(`update organizations set name = ?, updated_at = ? where id = ?`, [name, now, organizationId]);
}

/** Moves a workspace into organization `organizationId`, on `tx` (with `deleteEmptiedOrganization` and the key revocation). */
export async function moveWorkspaceToOrganization(
  tx: EntityManager,
  workspaceId: string,
  organizationId: string,
  now: Date,
): Promise<void> {
  await tx.execute(`update organization_workspaces set organization_id = ?, joined_at = ? where workspace_id = ?`, [
    organizationId,
    now,
    workspaceId,
  ]);
}

/** Deletes the organization if no workspace is left in it; whether it did. */
export async function deleteEmptiedOrganization(tx: EntityManager, organizationId: string): Promise<boolean> {
  const emptied = await tx.execute<Array<{ id: string }>>(
    `delete from organizations o where o.id = ? and not exists (select 1 from organization_workspaces w where w.organization_id = o.id) returning id`,
    [organizationId],
  );
  return emptied.length > 0;
}

/** Revokes every unrevoked key of an organization (one that no longer exists: its keys would reach nothing, managed by nobody). */
export async function revokeOrganizationKeys(tx: EntityManager, organizationId: string, now: Date): Promise<void> {
  await tx.execute(
    `update api_keys set revoked_at = ? where scope = 'organization' and revoked_at is null and organization->>'organizationId' = ?`,
    [now, organizationId],
  );
}
