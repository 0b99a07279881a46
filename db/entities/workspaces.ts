import { EntitySchema } from '@mikro-orm/core';

export const MEMBERSHIP_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number];

export const USER_STATUSES = ['active', 'invited', 'banned'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

export interface Workspace {
  id: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface User {
  id: string;
  /** Stored lowercased and trimmed; unique. */
  email: string;
  name: string | null;
  /** scrypt hash in PHC-like form; null for invited users who never set one. */
  passwordHash: string | null;
  status: UserStatus;
  defaultWorkspaceId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Membership {
  id: string;
  workspaceId: string;
  userId: string;
  role: MembershipRole;
  createdAt: Date;
}

export const WorkspaceSchema = new EntitySchema<Workspace>({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

export const UserSchema = new EntitySchema<User>({
  name: 'User',
  tableName: 'users',
  properties: {
    id: { type: 'string', primary: true },
    email: { type: 'string', unique: true },
    name: { type: 'string', nullable: true },
    passwordHash: { type: 'string', fieldName: 'password_hash', nullable: true, hidden: true },
    status: { type: 'string' },
    defaultWorkspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'default_workspace_id', mapToPk: true, nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

export const MembershipSchema = new EntitySchema<Membership>({
  name: 'Membership',
  tableName: 'memberships',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true },
    userId: { kind: 'm:1', entity: 'User', fieldName: 'user_id', mapToPk: true },
    role: { type: 'string' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
  },
});

export const INVITATION_STATUSES = ['pending', 'accepted', 'declined'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

/** An offer of membership; it becomes a membership only when the invitee accepts it. */
export interface Invitation {
  id: string;
  workspaceId: string;
  /** The invitee (created as an `invited` user when the email was unknown). */
  userId: string;
  role: MembershipRole;
  status: InvitationStatus;
  invitedById: string;
  createdAt: Date;
  expiresAt: Date;
  decidedAt: Date | null;
}

export const InvitationSchema = new EntitySchema<Invitation>({
  name: 'Invitation',
  tableName: 'workspace_invitations',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { kind: 'm:1', entity: 'Workspace', fieldName: 'workspace_id', mapToPk: true },
    userId: { kind: 'm:1', entity: 'User', fieldName: 'user_id', mapToPk: true },
    role: { type: 'string' },
    status: { type: 'string' },
    invitedById: { type: 'string', fieldName: 'invited_by_id' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    expiresAt: { type: 'Date', fieldName: 'expires_at', columnType: 'timestamptz' },
    decidedAt: { type: 'Date', fieldName: 'decided_at', columnType: 'timestamptz', nullable: true },
  },
});
