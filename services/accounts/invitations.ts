import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { InvitationSchema, MembershipSchema, UserSchema, WorkspaceSchema, type Invitation, type MembershipRole } from '../../db/entities';
import { recordAudit } from '../kernel/audit';
import { conflict, notFound } from '../kernel/errors';
import { newId } from '../kernel/ids';
import type { SessionPrincipal, WorkspacePrincipal } from '../kernel/principal';
import { normalizeEmail, userToAdd } from './users';

/**
 * Membership by consent. An Admin or Owner invites an email; the invitee's own session accepts
 * (a membership is created) or declines. Until then the invitee is not a member: nothing of
 * theirs (sessions, organization keys) reaches the inviting workspace, and the inviting
 * workspace learns nothing about them. The answer to an invitation is the same whether or not
 * the email belongs to a registered user, so the route cannot be used to probe for accounts.
 */
export const INVITATION_TTL_MS = 14 * 24 * 3600_000;

export interface InvitationView extends Pick<Invitation, 'id' | 'workspaceId' | 'role' | 'createdAt' | 'expiresAt'> {
  email: string;
  status: 'pending' | 'accepted' | 'declined' | 'expired';
}

function statusOf(inv: Invitation, now: Date): InvitationView['status'] {
  return inv.status === 'pending' && inv.expiresAt <= now ? 'expired' : inv.status;
}

function view(inv: Invitation, email: string, now = new Date()): InvitationView {
  return {
    id: inv.id,
    workspaceId: inv.workspaceId,
    email,
    role: inv.role,
    status: statusOf(inv, now),
    createdAt: inv.createdAt,
    expiresAt: inv.expiresAt,
  };
}

/**
 * Invites `email` to the caller's workspace. An unknown email becomes an `invited` user (no
 * password). A current member is a 409 (the caller's own workspace data); a pending invitation
 * is renewed (new role, new expiry) rather than duplicated.
 */
export async function inviteMember(
  em: EntityManager,
  actor: WorkspacePrincipal,
  input: { email: string; role: Exclude<MembershipRole, 'owner'> },
): Promise<{ invitation: InvitationView; invited: true }> {
  const email = normalizeEmail(input.email);
  return em.transactional(async (tx) => {
    const now = new Date();
    const { user } = await userToAdd(tx, actor.workspaceId, email, { defaultWorkspaceId: null, now });
    // Serialises concurrent invitations of the same person to the same workspace.
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`invite:${actor.workspaceId}:${user.id}`]);
    const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
    let invitation = await tx.findOne(InvitationSchema, { workspaceId: actor.workspaceId, userId: user.id, status: 'pending' });
    if (invitation) Object.assign(invitation, { role: input.role, invitedById: actor.userId, expiresAt });
    else {
      invitation = tx.create(InvitationSchema, {
        id: newId('inv'),
        workspaceId: actor.workspaceId,
        userId: user.id,
        role: input.role,
        status: 'pending',
        invitedById: actor.userId,
        createdAt: now,
        expiresAt,
        decidedAt: null,
      });
    }
    recordAudit(tx, actor, {
      action: 'workspace_member.invite',
      severity: 'info',
      workspaceId: actor.workspaceId,
      targetType: 'invitation',
      targetId: invitation.id,
      metadata: { role: input.role },
    });
    await tx.flush();
    return { invitation: view(invitation, email, now), invited: true };
  });
}

export interface ReceivedInvitationView extends InvitationView {
  workspace: { id: string; name: string };
}

/** The signed-in user's pending, unexpired invitations, newest first. */
export async function listReceivedInvitations(em: EntityManager, actor: SessionPrincipal): Promise<ReceivedInvitationView[]> {
  const now = new Date();
  const rows = await em.find(
    InvitationSchema,
    { userId: actor.userId, status: 'pending', expiresAt: { $gt: now } },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  const user = await em.findOneOrFail(UserSchema, { id: actor.userId });
  const workspaces = new Map((await em.find(WorkspaceSchema, { id: { $in: rows.map((r) => r.workspaceId) } })).map((w) => [w.id, w]));
  return rows.map((inv) => ({
    ...view(inv, user.email, now),
    workspace: { id: inv.workspaceId, name: workspaces.get(inv.workspaceId)?.name ?? '' },
  }));
}

/**
 * Accepts or declines one of the signed-in user's invitations. Someone else's invitation is a
 * 404; one already decided or expired is a 409. Accepting creates the membership.
 */
export async function decideInvitation(
  em: EntityManager,
  actor: SessionPrincipal,
  id: string,
  decision: 'accept' | 'decline',
): Promise<InvitationView> {
  return em.transactional(async (tx) => {
    const now = new Date();
    const inv = await tx.findOne(InvitationSchema, { id, userId: actor.userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!inv) throw notFound('Invitation not found');
    const status = statusOf(inv, now);
    if (status !== 'pending') throw conflict(`This invitation is ${status}.`);
    inv.status = decision === 'accept' ? 'accepted' : 'declined';
    inv.decidedAt = now;
    if (decision === 'accept' && !(await tx.findOne(MembershipSchema, { workspaceId: inv.workspaceId, userId: actor.userId }))) {
      tx.create(MembershipSchema, { id: newId('mem'), workspaceId: inv.workspaceId, userId: actor.userId, role: inv.role, createdAt: now });
    }
    const user = await tx.findOneOrFail(UserSchema, { id: actor.userId });
    recordAudit(tx, null, {
      action: decision === 'accept' ? 'workspace_member.add' : 'workspace_member.decline',
      severity: 'info',
      workspaceId: inv.workspaceId,
      targetType: 'user',
      targetId: actor.userId,
      metadata: { role: inv.role, invitationId: inv.id },
    });
    await tx.flush();
    return view(inv, user.email, now);
  });
}
