import type { EntityManager } from '@mikro-orm/postgresql';
import { MembershipSchema, UserSchema, type User } from '../../db/entities';
import { conflict } from '../kernel/errors';
import { newId } from '../kernel/ids';

export interface PublicUser {
  id: string;
  email: string;
  name: string | null;
  status: User['status'];
  createdAt: Date;
}

/** The user fields any caller may see; never the password hash. */
export function publicUser(user: User): PublicUser {
  return { id: user.id, email: user.email, name: user.name, status: user.status, createdAt: user.createdAt };
}

/** Emails are compared trimmed and lowercased everywhere. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * The user behind `email` about to join `workspaceId` (an invitation or a direct grant): an
 * unknown email becomes an `invited` user without a password (`invited: true`); a current
 * member of the workspace is a 409.
 */
export async function userToAdd(
  tx: EntityManager,
  workspaceId: string,
  email: string,
  opts: { defaultWorkspaceId: string | null; now: Date },
): Promise<{ user: User; invited: boolean }> {
  const existing = await tx.findOne(UserSchema, { email });
  if (existing) {
    if (await tx.findOne(MembershipSchema, { workspaceId, userId: existing.id }))
      throw conflict('This user is already a member of the workspace.');
    return { user: existing, invited: false };
  }
  const user = tx.create(UserSchema, {
    id: newId('usr'),
    email,
    name: null,
    passwordHash: null,
    status: 'invited',
    defaultWorkspaceId: opts.defaultWorkspaceId,
    createdAt: opts.now,
    updatedAt: opts.now,
  });
  return { user, invited: true };
}
