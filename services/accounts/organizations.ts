import type { EntityManager } from '@mikro-orm/postgresql';
import {
  MembershipSchema,
  OrganizationSchema,
  OrganizationWorkspaceSchema,
  WorkspaceSchema,
  type Organization,
  type OrganizationGrant,
} from '../../db/entities';
import { recordAudit } from '../kernel/audit';
import { AUTH_MESSAGES, forbidden, invalidInput, notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { isAdminRole, type SessionPrincipal } from '../kernel/principal';
import {
  activeOrganizationKeyIds,
  deleteEmptiedOrganization,
  deleteOrganization,
  insertOrganizationOf,
  moveWorkspaceToOrganization,
  renameOrganizationRow,
  revokeOrganizationKeys,
  workspaceExists,
  workspaceName,
  workspaceOrganization,
} from './store';

/**
 * Organizations group workspaces. Every workspace is in exactly one: its own (made on first
 * use, named after it) until an Owner brings it into another. Organization API keys belong to
 * the organization of the workspace they were created in; their reach is decided at use time
 * against the organization's current workspaces (`keyReachesWorkspace`), and any Admin or
 * Owner of a workspace in the organization manages them.
 */
export interface OrganizationView extends Pick<Organization, 'id' | 'name' | 'updatedAt'> {
  workspaces: Array<{ id: string; name: string }>;
  createdAt: Date;
}

/** The organization of a workspace (made for it on first use). */
export async function organizationIdOf(em: EntityManager, workspaceId: string): Promise<string> {
  const found = await workspaceOrganization(em, workspaceId);
  if (found !== undefined) return found;
  const name = await workspaceName(em, workspaceId);
  if (name === undefined) throw notFound('Workspace not found');
  const id = newId('org');
  if (await insertOrganizationOf(em, workspaceId, { id, name, now: new Date() })) return id;
  // A concurrent first use won: drop ours and use theirs.
  await deleteOrganization(em, id);
  return organizationIdOf(em, workspaceId);
}

/** The workspaces of an organization. */
export async function organizationWorkspaceIds(em: EntityManager, organizationId: string): Promise<string[]> {
  const rows = await em.fork().find(OrganizationWorkspaceSchema, { organizationId }, { orderBy: { joinedAt: 'asc', workspaceId: 'asc' } });
  return rows.map((r) => r.workspaceId);
}

/**
 * The organization of a grant: its own `organizationId`, or, for grants stored before
 * organizations existed, that of the first selected workspace.
 */
async function grantOrganization(em: EntityManager, grant: OrganizationGrant): Promise<string | null> {
  if (grant.organizationId) return grant.organizationId;
  return grant.workspaceIds[0] ? organizationIdOf(em, grant.workspaceIds[0]).catch(() => null) : null;
}

/**
 * Whether an organization key reaches `workspaceId` now: the workspace is in the key's
 * organization and in its selection (every workspace of the organization for `organization`).
 * The user's live role there still decides what the key may do.
 */
export async function keyReachesWorkspace(em: EntityManager, grant: OrganizationGrant | null, workspaceId: string): Promise<boolean> {
  if (!grant) return false;
  const org = await grantOrganization(em, grant);
  const exists = await workspaceExists(em, workspaceId);
  if (!org || !exists || (await organizationIdOf(em, workspaceId)) !== org) return false;
  return grant.workspaceSelection === 'organization' || grant.workspaceIds.includes(workspaceId);
}

/**
 * Validates an organization key's selection against the creator's accessible workspaces inside
 * the organization of `workspaceId` (where the key is created). `organization` selects every
 * workspace of the organization, now and later (`workspaceIds` records those accessible at
 * creation); `selected` names some, each of the organization and accessible to the creator.
 */
export async function organizationGrantFor(
  em: EntityManager,
  userId: string,
  workspaceId: string,
  requested: { workspaceSelection: 'organization' | 'selected'; workspaceIds?: string[]; permission: 'read' | 'write' },
): Promise<OrganizationGrant> {
  const organizationId = await organizationIdOf(em, workspaceId);
  const inOrganization = new Set(await organizationWorkspaceIds(em, organizationId));
  const accessible = (await em.find(MembershipSchema, { userId })).map((m) => m.workspaceId).filter((id) => inOrganization.has(id));
  if (requested.workspaceSelection === 'organization') {
    return { workspaceSelection: 'organization', workspaceIds: accessible, permission: requested.permission, organizationId };
  }
  const ids = [...new Set(requested.workspaceIds ?? [])];
  if (ids.length === 0)
    throw invalidInput('organization.workspaceIds must name at least one workspace when workspaceSelection is selected.');
  const outside = ids.filter((id) => !accessible.includes(id));
  if (outside.length > 0)
    throw invalidInput(`organization.workspaceIds includes workspaces you cannot access in this organization: ${outside.join(', ')}`);
  return { workspaceSelection: 'selected', workspaceIds: ids, permission: requested.permission, organizationId };
}

/** Ids of the active organization keys of the organization of `workspaceId` (Admins and Owners there manage them). */
export async function organizationKeyIdsFor(em: EntityManager, workspaceId: string): Promise<string[]> {
  const org = await organizationIdOf(em, workspaceId);
  const rows = await activeOrganizationKeyIds(em, org);
  return rows.map((r) => r.id);
}

function requireAdmin(actor: SessionPrincipal): void {
  if (!isAdminRole(actor.role)) throw forbidden(AUTH_MESSAGES.adminRequired);
}

async function organizationView(em: EntityManager, organizationId: string): Promise<OrganizationView> {
  const org = await em.fork().findOneOrFail(OrganizationSchema, { id: organizationId });
  const ids = await organizationWorkspaceIds(em, organizationId);
  const workspaces = await em.fork().find(WorkspaceSchema, { id: { $in: ids } }, { orderBy: { name: 'asc', id: 'asc' } });
  return {
    id: org.id,
    name: org.name,
    workspaces: workspaces.map((w) => ({ id: w.id, name: w.name })),
    createdAt: org.createdAt,
    updatedAt: org.updatedAt,
  };
}

/** The session workspace's organization and its workspaces (Admin or Owner). */
export async function getOrganization(em: EntityManager, actor: SessionPrincipal): Promise<OrganizationView> {
  requireAdmin(actor);
  return organizationView(em, await organizationIdOf(em, actor.workspaceId));
}

/** Renames the session workspace's organization (Admin or Owner). */
export async function renameOrganization(em: EntityManager, actor: SessionPrincipal, rawName: string): Promise<OrganizationView> {
  requireAdmin(actor);
  const name = rawName.trim();
  if (!name) throw invalidInput('name cannot be blank.');
  const id = await organizationIdOf(em, actor.workspaceId);
  await renameOrganizationRow(em, id, name, new Date());
  recordAudit(em, actor, {
    action: 'organization.rename',
    severity: 'info',
    workspaceId: actor.workspaceId,
    targetType: 'organization',
    targetId: id,
    metadata: { name },
  });
  await em.flush();
  return organizationView(em, id);
}

/**
 * Brings another workspace into the session workspace's organization. The actor must be the
 * Owner of both. The workspace leaves its previous organization (removed when it empties):
 * that organization's keys stop reaching it at once, and this organization's keys with the
 * `organization` selection reach it from now on.
 */
export async function addWorkspaceToOrganization(
  em: EntityManager,
  actor: SessionPrincipal,
  workspaceId: string,
): Promise<OrganizationView> {
  if (actor.role !== 'owner') throw forbidden('Only the Owner of this workspace can bring workspaces into its organization.');
  const membership = await em.findOne(MembershipSchema, { workspaceId, userId: actor.userId });
  if (!membership) throw notFound('Workspace not found');
  if (membership.role !== 'owner') throw forbidden('You must be the Owner of the workspace you bring into the organization.');
  const target = await organizationIdOf(em, actor.workspaceId);
  const previous = await organizationIdOf(em, workspaceId);
  if (previous !== target) {
    await em.transactional(async (tx) => {
      await moveWorkspaceToOrganization(tx, workspaceId, target, new Date());
      // Keys of an organization that no longer exists reach nothing and nobody could manage them: revoke them.
      if (await deleteEmptiedOrganization(tx, previous)) await revokeOrganizationKeys(tx, previous, new Date());
    });
    recordAudit(em, actor, {
      action: 'organization.workspace.add',
      severity: 'warning',
      workspaceId: actor.workspaceId,
      targetType: 'workspace',
      targetId: workspaceId,
      metadata: { organizationId: target, previousOrganizationId: previous },
    });
    await em.flush();
  }
  return organizationView(em, target);
}
