import type { EntityManager } from '@mikro-orm/postgresql';
import { MembershipSchema, SessionSchema, UserSchema, WorkspaceSchema, type MembershipRole, type User } from '../../db/entities';
import { forbidden, unauthenticated } from '../kernel/errors';
import { newId, randomToken, sha256Hex } from '../kernel/ids';
import { hashPassword, verifyPassword } from '../kernel/passwords';
import type { SessionPrincipal } from '../kernel/principal';
import type { SignInLimiter } from '../kernel/signInLimits';
import type { CredentialCache } from './credentialCache';
import { liveSessionByHash } from './store';
import { normalizeEmail, publicUser, type PublicUser } from './users';

export interface WorkspaceMembershipView {
  id: string;
  name: string;
  role: MembershipRole;
}

export interface SignInResult {
  token: string;
  expiresAt: Date;
  user: PublicUser;
  workspace: WorkspaceMembershipView;
  workspaces: WorkspaceMembershipView[];
}

const INVALID_CREDENTIALS = 'Invalid email or password.';

let dummyHash: Promise<string> | undefined;
const timingDummyHash = () => (dummyHash ??= hashPassword(randomToken(16)));

/** Lists the workspaces a user belongs to, oldest membership first. */
export async function listUserWorkspaces(em: EntityManager, userId: string): Promise<WorkspaceMembershipView[]> {
  const memberships = await em.find(MembershipSchema, { userId }, { orderBy: { createdAt: 'asc' } });
  if (memberships.length === 0) return [];
  const workspaces = await em.find(WorkspaceSchema, { id: { $in: memberships.map((m) => m.workspaceId) } });
  const byId = new Map(workspaces.map((w) => [w.id, w]));
  return memberships
    .filter((m) => byId.has(m.workspaceId))
    .map((m) => ({ id: m.workspaceId, name: byId.get(m.workspaceId)!.name, role: m.role }));
}

/**
 * Checks email and password and opens a session in the requested workspace (default: the
 * user's default workspace, else the oldest membership). Unknown email, wrong password,
 * an invited user without a password and a banned user all answer the same 401.
 */
export async function signIn(
  em: EntityManager,
  limiter: SignInLimiter,
  input: { email: string; password: string; workspaceId?: string },
  ttlMs: number,
  clientAddress: string,
): Promise<SignInResult> {
  const email = normalizeEmail(input.email);
  // The place is taken before the password is checked, so parallel guesses cannot outrun the count.
  await limiter.consume(email, clientAddress);
  const user = await em.findOne(UserSchema, { email });
  // Unknown emails still pay for one scrypt, so response time does not reveal which emails exist.
  const passwordOk = await verifyPassword(input.password, user?.passwordHash ?? (await timingDummyHash()));
  const ok = user !== null && user.status !== 'banned' && passwordOk;
  if (!ok || !user) throw unauthenticated(INVALID_CREDENTIALS);
  await limiter.succeeded(email, clientAddress);

  const workspaces = await listUserWorkspaces(em, user.id);
  const workspace = pickWorkspace(user, workspaces, input.workspaceId);

  const token = randomToken(32);
  const now = new Date();
  const expiresAt = new Date(now.getTime() + ttlMs);
  em.create(SessionSchema, {
    id: newId('ses'),
    tokenHash: sha256Hex(token),
    userId: user.id,
    workspaceId: workspace.id,
    createdAt: now,
    expiresAt,
    revokedAt: null,
  });
  if (user.status === 'invited') user.status = 'active';
  await em.flush();
  return { token, expiresAt, user: publicUser(user), workspace, workspaces };
}

function pickWorkspace(user: User, workspaces: WorkspaceMembershipView[], requested?: string): WorkspaceMembershipView {
  if (requested) {
    const chosen = workspaces.find((w) => w.id === requested);
    if (!chosen) throw forbidden('You are not a member of this workspace.');
    return chosen;
  }
  const chosen = workspaces.find((w) => w.id === user.defaultWorkspaceId) ?? workspaces[0];
  if (!chosen) throw forbidden('This account is not a member of any workspace.');
  return chosen;
}

/**
 * Resolves a session cookie to its principal; null when unknown, expired, revoked, banned or no
 * longer a member. With `cache`, a session verified before is answered from memory until its
 * expiry at the latest (credentialCache.ts says when that forgets it).
 */
export async function verifySession(em: EntityManager, token: string, cache?: CredentialCache): Promise<SessionPrincipal | null> {
  if (!token || token.length > 200) return null;
  const hash = sha256Hex(token);
  const read = () => readSession(em, hash);
  return cache ? cache.resolve(`session:${hash}`, read) : ((await read())?.principal ?? null);
}

async function readSession(em: EntityManager, tokenHash: string): Promise<{ principal: SessionPrincipal; validUntil: number } | null> {
  const rows = await liveSessionByHash(em, tokenHash);
  const row = rows[0];
  if (!row) return null;
  return {
    principal: {
      kind: 'session',
      sessionId: row.id,
      principalId: `user:${row.user_id}`,
      userId: row.user_id,
      workspaceId: row.workspace_id,
      role: row.role,
    },
    validUntil: new Date(row.expires_at).getTime(),
  };
}

/**
 * What GET /api/auth/session shows: the signed-in user, the session's workspace and every
 * membership. The session was verified (user not banned, still a member) by the caller.
 */
export async function currentSession(em: EntityManager, principal: SessionPrincipal): Promise<Omit<SignInResult, 'token' | 'expiresAt'>> {
  const user = await em.findOneOrFail(UserSchema, { id: principal.userId });
  const workspaces = await listUserWorkspaces(em, principal.userId);
  const workspace = workspaces.find((w) => w.id === principal.workspaceId)!;
  return { user: publicUser(user), workspace, workspaces };
}

/**
 * Ends a session; signing out twice is harmless. The write bypasses the unit of work, so this
 * process's `cache` is told here (other processes hear it from the sessions trigger).
 */
export async function signOut(em: EntityManager, sessionId: string, cache?: CredentialCache): Promise<void> {
  await em.nativeUpdate(SessionSchema, { id: sessionId, revokedAt: null }, { revokedAt: new Date() });
  cache?.invalidate();
}
