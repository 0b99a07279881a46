import type { User } from '../../db/entities';

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
