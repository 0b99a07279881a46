import type { EntityManager } from '@mikro-orm/postgresql';
import { MembershipSchema, UserSchema, WorkspaceSchema, type Membership, type User, type Workspace } from '../../db/entities';
import { recordAudit } from '../kernel/audit';
import { invalidInput, notFound, unauthenticated } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { hashPassword, verifyPassword } from '../kernel/passwords';
import type { WorkspacePrincipal } from '../kernel/principal';
import { normalizeEmail, publicUser, userToAdd, type PublicUser } from './users';

export type WorkspaceView = Pick<Workspace, 'id' | 'name' | 'createdAt' | 'updatedAt'>;

export function workspaceView(w: Workspace): WorkspaceView {
  return { id: w.id, name: w.name, createdAt: w.createdAt, updatedAt: w.updatedAt };
}

/** The caller's own workspace; 404 if it no longer exists. */
export async function getWorkspace(em: EntityManager, principal: WorkspacePrincipal): Promise<WorkspaceView> {
  const workspace = await em.findOne(WorkspaceSchema, { id: principal.workspaceId });
  if (!workspace) throw notFound('Workspace not found');
  return workspaceView(workspace);
}

/**
 * Creates a workspace owned by `ownerEmail`. A new email creates an active user with that
 * password; an existing user becomes owner of the new workspace only if the password matches
 * (it is checked, never changed). Everything is written in one transaction.
 */
export async function createWorkspaceWithOwner(
  em: EntityManager,
  input: { name: string; ownerEmail: string; ownerPassword: string },
): Promise<{ workspace: Workspace; user: User; created: boolean }> {
  const name = input.name.trim();
  if (!name) throw invalidInput('Workspace name is required.');
  if (input.ownerPassword.length < 8) throw invalidInput('Owner password must be at least 8 characters.');
  const email = normalizeEmail(input.ownerEmail);
  return em.transactional(async (tx) => {
    const now = new Date();
    let user = await tx.findOne(UserSchema, { email });
    const created = user === null;
    if (user) {
      if (user.status === 'banned' || !(await verifyPassword(input.ownerPassword, user.passwordHash))) {
        throw unauthenticated('The password does not match the existing user with this email.');
      }
    } else {
      user = tx.create(UserSchema, {
        id: newId('usr'),
        email,
        name: null,
        passwordHash: await hashPassword(input.ownerPassword),
        status: 'active',
        defaultWorkspaceId: null,
        createdAt: now,
        updatedAt: now,
      });
    }
    const workspace = tx.create(WorkspaceSchema, { id: newId('ws'), name, createdAt: now, updatedAt: now });
    tx.create(MembershipSchema, { id: newId('mem'), workspaceId: workspace.id, userId: user.id, role: 'owner', createdAt: now });
    if (!user.defaultWorkspaceId) user.defaultWorkspaceId = workspace.id;
    recordAudit(tx, null, {
      action: 'workspace.create',
      severity: 'info',
      workspaceId: workspace.id,
      targetType: 'workspace',
      targetId: workspace.id,
      metadata: { ownerUserId: user.id },
    });
    return { workspace, user, created };
  });
}

export const INVITABLE_ROLES = ['admin', 'member', 'viewer'] as const;

export interface MemberView extends Pick<Membership, 'workspaceId' | 'userId' | 'role' | 'createdAt'> {
  user: PublicUser;
}

/**
 * Makes someone a member at once, without their consent: for operator tooling and test
 * fixtures only. The HTTP route invites instead (services/accounts/invitations.ts). An email with no
 * user yet creates the user as `invited`; an existing member is a 409.
 */
export async function grantMembership(
  em: EntityManager,
  actor: WorkspacePrincipal,
  input: { email: string; role: (typeof INVITABLE_ROLES)[number] },
): Promise<{ member: MemberView; invited: boolean }> {
  const email = normalizeEmail(input.email);
  return em.transactional(async (tx) => {
    const now = new Date();
    const { user, invited } = await userToAdd(tx, actor.workspaceId, email, { defaultWorkspaceId: actor.workspaceId, now });
    const membership: Membership = tx.create(MembershipSchema, {
      id: newId('mem'),
      workspaceId: actor.workspaceId,
      userId: user.id,
      role: input.role,
      createdAt: now,
    });
    recordAudit(tx, actor, {
      action: 'workspace_member.add',
      severity: 'info',
      workspaceId: actor.workspaceId,
      targetType: 'user',
      targetId: user.id,
      metadata: { role: input.role, invited },
    });
    await tx.flush();
    return {
      member: {
        workspaceId: membership.workspaceId,
        userId: user.id,
        role: membership.role,
        createdAt: membership.createdAt,
        user: publicUser(user),
      },
      invited,
    };
  });
}
