import { p, type InferEntity } from '@mikro-orm/core';
import { createdAt, entity, HIDDEN, references, timestamps, timestamptz } from './columns';
import type { MembershipRole, UserStatus, InvitationStatus } from '../../engine/statuses';
export type { MembershipRole, UserStatus, InvitationStatus } from '../../engine/statuses';

export const WorkspaceSchema = entity('Workspace', 'workspaces', {
  id: p.string().primary(),
  name: p.string(),
  ...timestamps(),
});
export type Workspace = InferEntity<typeof WorkspaceSchema>;

/**
 * The key of a table whose rows belong to a workspace, with the relation known to the ORM: a
 * string id, and `workspaceId` a many-to-one to workspaces typed as the workspace's id.
 */
export const workspaceOwned = () => ({
  id: p.string().primary(),
  workspaceId: references(WorkspaceSchema, 'workspace_id'),
});

export const UserSchema = entity('User', 'users', {
  id: p.string().primary(),
  /** Stored lowercased and trimmed; unique. */
  email: p.string().unique(),
  name: p.string().nullable(),
  /** scrypt hash in PHC-like form; null for invited users who never set one. */
  passwordHash: p.string().nullable().hidden(HIDDEN),
  status: p.string().$type<UserStatus>(),
  defaultWorkspaceId: references(WorkspaceSchema, 'default_workspace_id').nullable(),
  ...timestamps(),
});
export type User = InferEntity<typeof UserSchema>;

export const MembershipSchema = entity('Membership', 'memberships', {
  ...workspaceOwned(),
  userId: references(UserSchema, 'user_id'),
  role: p.string().$type<MembershipRole>(),
  ...createdAt(),
});
export type Membership = InferEntity<typeof MembershipSchema>;

export const InvitationSchema = entity('Invitation', 'workspace_invitations', {
  ...workspaceOwned(),
  /** The invitee (created as an `invited` user when the email was unknown). */
  userId: references(UserSchema, 'user_id'),
  role: p.string().$type<MembershipRole>(),
  status: p.string().$type<InvitationStatus>(),
  invitedById: p.string(),
  ...createdAt(),
  expiresAt: timestamptz('expires_at'),
  decidedAt: timestamptz('decided_at').nullable(),
});
/** An offer of membership; it becomes a membership only when the invitee accepts it. */
export type Invitation = InferEntity<typeof InvitationSchema>;
