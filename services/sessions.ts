import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import { MembershipSchema, SessionSchema, UserSchema, WorkspaceSchema, type MembershipRole, type User } from '../db/entities';
import { forbidden, rateLimited, unauthenticated } from './errors';
import { newId, randomToken, sha256Hex } from './ids';
import { hashPassword, verifyPassword } from './passwords';
import type { SessionPrincipal } from './principal';
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

/**
 * Failed sign-ins per (account, client address), counted in PostgreSQL (rate-limiter-flexible's
 * Postgres store, table `sign_in_limits`), so the limit holds across API processes. After
 * `maxFailures` failures from one address within a window, that address gets 429 with the
 * seconds until it may try again, for that account only: the owner signing in from anywhere
 * else is not affected, so an attacker elsewhere cannot lock them out. A success from an
 * address clears that address's counts.
 *
 * Backoff: each lock of the same (account, address) within `lockMemoryMs` lasts twice as
 * long as the one before (15 min, 30 min, 1 h, ... up to `maxLockMs`).
 *
 * Keys are sha256 of the normalised email and the address, so the table holds neither.
 *
 * Caveats: the failure window is fixed (the library's model), starting at the first failure;
 * the client address is Koa's `ctx.ip`, which honours X-Forwarded-For only with TRUST_PROXY,
 * so behind an untrusted proxy every client shares the proxy's address.
 */
export class SignInLimiter {
  private readonly failures: RateLimiterPostgres;
  private readonly lockouts: RateLimiterPostgres;
  constructor(
    knex: Knex,
    private readonly maxFailures = 10,
    private readonly windowMs = 15 * 60_000,
    private readonly maxLockMs = 24 * 60 * 60_000,
    lockMemoryMs = 24 * 60 * 60_000,
  ) {
    // tableCreated: the table is ours (db/migrations), not created by the library at run time.
    const store = { storeClient: knex, storeType: 'knex', tableName: 'sign_in_limits', tableCreated: true } as const;
    this.failures = new RateLimiterPostgres({ ...store, keyPrefix: 'sign_in', points: maxFailures, duration: Math.ceil(windowMs / 1000) });
    this.lockouts = new RateLimiterPostgres({ ...store, keyPrefix: 'sign_in_locks', points: 1_000_000, duration: Math.ceil(lockMemoryMs / 1000) });
  }

  async check(email: string, clientAddress: string): Promise<void> {
    const state = await this.failures.get(this.key(email, clientAddress));
    if (state && state.consumedPoints >= this.maxFailures) {
      throw rateLimited('Too many sign-in attempts. Try again later.', { retryAfterSeconds: Math.max(1, Math.ceil(state.msBeforeNext / 1000)) });
    }
  }

  async fail(email: string, clientAddress: string): Promise<void> {
    const key = this.key(email, clientAddress);
    const state = await this.failures.penalty(key, 1);
    if (state.consumedPoints < this.maxFailures) return;
    const locks = await this.lockouts.penalty(key, 1);
    const lockMs = Math.min(this.maxLockMs, this.windowMs * 2 ** Math.min(20, locks.consumedPoints - 1));
    await this.failures.block(key, Math.ceil(lockMs / 1000));
  }

  async succeed(email: string, clientAddress: string): Promise<void> {
    const key = this.key(email, clientAddress);
    await this.failures.delete(key);
    await this.lockouts.delete(key);
  }

  private key(email: string, clientAddress: string): string {
    return sha256Hex(`${email}\n${normalizeAddress(clientAddress)}`);
  }
}

/** `::ffff:192.0.2.1` and `192.0.2.1` are the same client. */
function normalizeAddress(address: string): string {
  const lower = address.trim().toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice(7) : lower;
}

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
  await limiter.check(email, clientAddress);
  const user = await em.findOne(UserSchema, { email });
  // Unknown emails still pay for one scrypt, so response time does not reveal which emails exist.
  const passwordOk = await verifyPassword(input.password, user?.passwordHash ?? (await timingDummyHash()));
  const ok = user !== null && user.status !== 'banned' && passwordOk;
  if (!ok || !user) {
    await limiter.fail(email, clientAddress);
    throw unauthenticated(INVALID_CREDENTIALS);
  }
  await limiter.succeed(email, clientAddress);

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

/** Resolves a session cookie to its principal; null when unknown, expired, revoked, banned or no longer a member. */
export async function verifySession(em: EntityManager, token: string): Promise<SessionPrincipal | null> {
  if (!token || token.length > 200) return null;
  const rows: Array<{ id: string; user_id: string; workspace_id: string; role: MembershipRole }> = await em
    .getConnection()
    .execute(
      `select s.id, s.user_id, s.workspace_id, m.role
         from sessions s
         join users u on u.id = s.user_id and u.status <> 'banned'
         join memberships m on m.workspace_id = s.workspace_id and m.user_id = s.user_id
        where s.token_hash = ? and s.revoked_at is null and s.expires_at > now()`,
      [sha256Hex(token)],
    );
  const row = rows[0];
  if (!row) return null;
  return {
    kind: 'session',
    sessionId: row.id,
    principalId: `user:${row.user_id}`,
    userId: row.user_id,
    workspaceId: row.workspace_id,
    role: row.role,
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

/** Ends a session; signing out twice is harmless. */
export async function signOut(em: EntityManager, sessionId: string): Promise<void> {
  await em.nativeUpdate(SessionSchema, { id: sessionId, revokedAt: null }, { revokedAt: new Date() });
}
