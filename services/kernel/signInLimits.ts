import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { rateLimited } from './errors';
import { sha256Hex } from './ids';
import {
  clearSignInCounters,
  isRememberedSignInAddress,
  lockSignInCounters,
  rememberSignInAddress,
  saveSignInCounter,
  sweepSignInCounters,
  type SignInCounterRow,
} from './store';

/** How many sign-in attempts are checked against a password, and how long locks last (docs/operations.md, SIGN_IN_*). */
export interface SignInLimitSettings {
  /** Attempts one client address may have checked for one account within a window. */
  maxPerAddress: number;
  /** Attempts all addresses together may have checked for one account within a window; above `maxPerAddress`. */
  maxPerAccount: number;
  /** The counting window, from the first attempt it counts. */
  windowMs: number;
  /** The first lock; each further lock of the same counter lasts twice as long as the one before... */
  firstLockMs: number;
  /** ...up to this. */
  maxLockMs: number;
  /** A counter forgets its past locks (the next one is `firstLockMs` again) this long after the last ended. */
  lockMemoryMs: number;
  /**
   * An address an account signed in from is remembered this long after the last success; from
   * a remembered address only the per-address limit applies, so strangers who used up the
   * account-wide limit from elsewhere do not lock the owner out of their usual address.
   */
  rememberAddressMs: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimitSettings = {
  maxPerAddress: 10,
  maxPerAccount: 50,
  windowMs: 15 * 60_000,
  firstLockMs: 5 * 60_000,
  maxLockMs: 60 * 60_000,
  lockMemoryMs: 24 * 60 * 60_000,
  rememberAddressMs: 30 * 24 * 60 * 60_000,
};

const REFUSED = 'Too many sign-in attempts. Try again later.';

/** Expired counters are swept at most this often per process. */
const SWEEP_EVERY_MS = 60_000;

/** A counter as the limiter reads it; times are epoch milliseconds of the database's clock. */
type CounterRow = SignInCounterRow;

type Verdict = { allowed: true; row: CounterRow } | { allowed: false; row: CounterRow; retryAfterMs: number };

/**
 * Sign-in attempts per (account, client address) and per account, counted in PostgreSQL
 * (table `sign_in_counters`) so the limits hold across API processes and parallel requests.
 *
 * An attempt is counted BEFORE its password is checked, in one transaction that locks both
 * counters: N parallel guesses take N places, and at most `maxPerAddress` of them (or
 * `maxPerAccount` across addresses) ever reach the password check. The attempt after the last
 * place locks that counter and is refused (429 with Retry-After), whatever its password: a
 * lock that let the right password through would tell a guesser when they found it.
 *
 * Locks grow gently: `firstLockMs`, doubled for each further lock of the same counter, capped
 * at `maxLockMs`, forgotten `lockMemoryMs` after the last one ends. A burst cannot stack locks:
 * a locked counter refuses without counting. The per-address limit comes first and the
 * account-wide one is higher, so a stranger on one address (or behind the owner's shared
 * proxy) locks only that address out of that account, and the owner signs in from elsewhere.
 * A success clears its (account, address) counter and gives its place back to the account's.
 * It also remembers the address for that account (`rememberAddressMs`): attempts from a
 * remembered address count only against their own limit, so a guesser spread over many
 * addresses, who can use up the account-wide limit, still cannot lock the owner out of an
 * address they signed in from before.
 *
 * Keys are sha256 of the normalised email (and address), so the table holds neither.
 */
export class SignInLimiter {
  private lastSweep = 0;

  constructor(
    private readonly orm: MikroORM,
    private readonly settings: SignInLimitSettings = DEFAULT_SIGN_IN_LIMITS,
  ) {}

  /** Takes a place for one attempt on `email` from `clientAddress`, or throws 429 with Retry-After. */
  async consume(email: string, clientAddress: string): Promise<void> {
    const keys = signInCounterKeys(email, clientAddress);
    const refused = await this.orm.em.fork().transactional(async (tx) => {
      // One statement creates and locks both counters, always in key order: parallel attempts
      // queue on the same rows, and two attempts never wait on each other in a cycle.
      const ordered = [keys.address, keys.account].sort();
      const rows = await lockSignInCounters(tx, ordered);
      const byKey = new Map(rows.map((r) => [r.key, r]));
      const address = this.judge(byKey.get(keys.address)!, this.settings.maxPerAddress);
      if (!address.allowed) {
        await this.save(tx, address.row);
        return address.retryAfterMs;
      }
      if (await isRememberedSignInAddress(tx, keys.remembered)) {
        await this.save(tx, address.row);
        return null;
      }
      const account = this.judge(byKey.get(keys.account)!, this.settings.maxPerAccount);
      if (!account.allowed) {
        // The address's place is not taken: this attempt is not checked.
        await this.save(tx, account.row);
        return account.retryAfterMs;
      }
      await this.save(tx, address.row);
      await this.save(tx, account.row);
      return null;
    });
    this.sweepNowAndThen();
    if (refused !== null) throw rateLimited(REFUSED, { retryAfterSeconds: Math.max(1, Math.ceil(refused / 1000)) });
  }

  /** A right password: the address's counter starts afresh and the account's gets its place back. */
  async succeeded(email: string, clientAddress: string): Promise<void> {
    const keys = signInCounterKeys(email, clientAddress);
    // Two statements, not one transaction: holding the address row while waiting for the
    // account's would invert consume's lock order.
    await clearSignInCounters(this.orm.em.fork(), keys);
    if (this.settings.rememberAddressMs > 0)
      await rememberSignInAddress(this.orm.em.fork(), keys.remembered, this.settings.rememberAddressMs);
  }

  /** The counter after one more attempt, and whether that attempt may be checked. */
  private judge(current: CounterRow, max: number): Verdict {
    const s = this.settings;
    const now = current.now;
    const row = { ...current };
    if (row.lockedUntil !== null && row.lockedUntil > now) {
      return { allowed: false, row, retryAfterMs: row.lockedUntil - now };
    }
    if (row.lockedUntil !== null && row.lockedUntil + s.lockMemoryMs <= now) {
      row.locks = 0;
      row.lockedUntil = null;
    }
    if (row.windowEndsAt === null || row.windowEndsAt <= now) {
      row.attempts = 0;
      row.windowEndsAt = now + s.windowMs;
    }
    if (row.attempts >= max) {
      row.locks += 1;
      const lockMs = Math.min(s.maxLockMs, s.firstLockMs * 2 ** Math.min(30, row.locks - 1));
      row.lockedUntil = now + lockMs;
      row.attempts = 0;
      row.windowEndsAt = null;
      return { allowed: false, row, retryAfterMs: lockMs };
    }
    row.attempts += 1;
    return { allowed: true, row };
  }

  private async save(tx: EntityManager, row: CounterRow): Promise<void> {
    // The row may be deleted once nothing in it matters any more: window over, lock over and forgotten.
    const forgetAt = Math.max(row.windowEndsAt ?? 0, row.lockedUntil === null ? 0 : row.lockedUntil + this.settings.lockMemoryMs);
    await saveSignInCounter(tx, row, forgetAt);
  }

  private sweepNowAndThen(): void {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    // Best effort: a failed sweep is retried on a later attempt, and never fails a sign-in.
    sweepSignInCounters(this.orm.em.fork()).catch(() => {
      this.lastSweep = 0;
    });
  }
}

/** The two counters an attempt on `email` from `clientAddress` counts against, and the key that remembers the address. */
export function signInCounterKeys(email: string, clientAddress: string): { address: string; account: string; remembered: string } {
  const address = normalizeAddress(clientAddress);
  return {
    address: sha256Hex(`address\n${email}\n${address}`),
    account: sha256Hex(`account\n${email}`),
    remembered: sha256Hex(`remembered\n${email}\n${address}`),
  };
}

/** `::ffff:192.0.2.1` and `192.0.2.1` are the same client. */
function normalizeAddress(address: string): string {
  const lower = address.trim().toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice(7) : lower;
}
