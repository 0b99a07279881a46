import { p, type InferEntity } from '@mikro-orm/core';
import { entity, HIDDEN, timestamptz } from './columns';
import type { MembershipRole, UserStatus, InvitationStatus } from '../../engine/statuses';
export type { MembershipRole, UserStatus, InvitationStatus } from '../../engine/statuses';

export const WorkspaceSchema = entity({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    createdAt: timestamptz('created_at'),
    updatedAt: timestamptz('updated_at'),
  },
});
export type Workspace = InferEntity<typeof WorkspaceSchema>;

export const UserSchema = entity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.string().primary(),
    /** Stored lowercased and trimmed; unique. */
    email: p.string().unique(),
    name: p.string().nullable(),
    /** scrypt hash in PHC-like form; null for invited users who never set one. */
    passwordHash: p.string().nullable().hidden(HIDDEN),
    status: p.string().$type<UserStatus>(),
    defaultWorkspaceId: p.manyToOne(WorkspaceSchema).fieldName('default_workspace_id').mapToPk().nullable(),
    createdAt: timestamptz('created_at'),
    updatedAt: timestamptz('updated_at'),
  },
});
export type User = InferEntity<typeof UserSchema>;

export const MembershipSchema = entity({
  name: 'Membership',
  tableName: 'memberships',
  properties: {
    id: p.string().primary(),
    workspaceId: p.manyToOne(WorkspaceSchema).fieldName('workspace_id').mapToPk(),
    userId: p.manyToOne(UserSchema).fieldName('user_id').mapToPk(),
    role: p.string().$type<MembershipRole>(),
    createdAt: timestamptz('created_at'),
  },
});
export type Membership = InferEntity<typeof MembershipSchema>;

export const InvitationSchema = entity({
  name: 'Invitation',
  tableName: 'workspace_invitations',
  properties: {
    id: p.string().primary(),
    workspaceId: p.manyToOne(WorkspaceSchema).fieldName('workspace_id').mapToPk(),
    /** The invitee (created as an `invited` user when the email was unknown). */
    userId: p.manyToOne(UserSchema).fieldName('user_id').mapToPk(),
    role: p.string().$type<MembershipRole>(),
    status: p.string().$type<InvitationStatus>(),
    invitedById: p.string(),
    createdAt: timestamptz('created_at'),
    expiresAt: timestamptz('expires_at'),
    decidedAt: timestamptz('decided_at').nullable(),
  },
});
/** An offer of membership; it becomes a membership only when the invitee accepts it. */
export type Invitation = InferEntity<typeof InvitationSchema>;
