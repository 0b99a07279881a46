/**
 * Sign-in limits under parallel load (issue 27, item 4): attempts are counted before the
 * password is checked, per (account, address) first and per account above it; locks grow
 * gently and cannot be stacked by a burst; a stranger on one address cannot lock the owner out.
 */
import { DEFAULT_SIGN_IN_LIMITS, signInCounterKeys, type SignInLimitSettings } from '../../../services/kernel/signInLimits';
import { startTestApp } from '../../support/harness';
import { createWorkspace, eventually, http, useTestStack, type HttpResult, type TestApp, type WorkspaceFixture } from '../../kit';

const LIMITS: SignInLimitSettings = {
  ...DEFAULT_SIGN_IN_LIMITS,
  maxPerAddress: 10,
  maxPerAccount: 50,
  firstLockMs: 60_000,
  maxLockMs: 240_000,
};
const REFUSED = 'Too many sign-in attempts. Try again later.';

// ctx.ip comes from X-Forwarded-For, so one test process can speak from many addresses.
const stack = useTestStack({ worker: false, config: { trustProxy: true, trustProxyHops: 1, signInLimits: LIMITS } });

const signIn = (on: TestApp, email: string, password: string, from: string): Promise<HttpResult> =>
  http(on, 'POST', '/api/auth/sign-in', { body: { email, password }, headers: { 'x-forwarded-for': from } });

function tally(results: HttpResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

const retryAfter = (r: HttpResult) => Number(r.headers.get('retry-after'));

/** Ends the current lock of `email` from `address` as if its time had passed (the lock count stays). */
async function endLock(email: string, address: string): Promise<void> {
  const { address: key } = signInCounterKeys(email, address);
  await stack.app.orm.em.fork().execute('update sign_in_counters set locked_until = clock_timestamp() where key = ?', [key]);
}

describe('sign-in limits', () => {
  let ws: WorkspaceFixture;
  beforeEach(async () => {
    ws = await stack.workspace('Limits');
  });

  test('100 parallel wrong guesses from one address: exactly the limit reach the password check, the rest get 429', async () => {
    const burst = await Promise.all(Array.from({ length: 100 }, () => signIn(stack.app, ws.ownerEmail, 'wrong guess', '203.0.113.7')));
    expect(tally(burst)).toEqual({ 401: 10, 429: 90 });
    for (const r of burst.filter((b) => b.status === 429)) {
      expect(r.body).toEqual({ error: REFUSED });
      // One lock, not one per refused guess: the burst did not stack a day-long lockout.
      expect(retryAfter(r)).toBeGreaterThan(0);
      expect(retryAfter(r)).toBeLessThanOrEqual(60);
    }
    // The right password from the locked address is refused too (else the lock would confirm a guess)...
    expect((await signIn(stack.app, ws.ownerEmail, ws.ownerPassword, '203.0.113.7')).status).toBe(429);
    // ...while the owner, on another address, signs in.
    expect((await signIn(stack.app, ws.ownerEmail, ws.ownerPassword, '198.51.100.9')).status).toBe(200);
    expect((await signIn(stack.app, ws.ownerEmail, ws.ownerPassword, '203.0.113.7')).status).toBe(429);
  });

  test('100 parallel wrong guesses from 100 addresses: exactly the account-wide limit reach the password check', async () => {
    const burst = await Promise.all(
      Array.from({ length: 100 }, (_, i) => signIn(stack.app, ws.ownerEmail, 'wrong guess', `192.0.2.${i + 1}`)),
    );
    expect(tally(burst)).toEqual({ 401: 50, 429: 50 });
    for (const r of burst.filter((b) => b.status === 429)) expect(retryAfter(r)).toBeLessThanOrEqual(60);
  });

  test('the lock grows gently: doubling from the first, capped, and a burst during a lock does not lengthen it', async () => {
    const from = '203.0.113.20';
    const seen: number[] = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 10; i++) expect((await signIn(stack.app, ws.ownerEmail, 'wrong', from)).status).toBe(401);
      const locked = await signIn(stack.app, ws.ownerEmail, 'wrong', from);
      expect(locked.status).toBe(429);
      seen.push(retryAfter(locked));
      // Attempts while locked are refused without counting or re-locking.
      const during = await Promise.all(Array.from({ length: 20 }, () => signIn(stack.app, ws.ownerEmail, 'wrong', from)));
      expect(tally(during)).toEqual({ 429: 20 });
      expect(Math.max(...during.map(retryAfter))).toBeLessThanOrEqual(seen[round]);
      await endLock(ws.ownerEmail, from);
    }
    expect(seen).toEqual([60, 120, 240, 240]);
  });

  test('a right password resets the counter of its address', async () => {
    const from = '203.0.113.30';
    for (let i = 0; i < 9; i++) expect((await signIn(stack.app, ws.ownerEmail, 'wrong', from)).status).toBe(401);
    expect((await signIn(stack.app, ws.ownerEmail, ws.ownerPassword, from)).status).toBe(200);
    for (let i = 0; i < 10; i++) expect((await signIn(stack.app, ws.ownerEmail, 'wrong', from)).status).toBe(401);
    expect((await signIn(stack.app, ws.ownerEmail, 'wrong', from)).status).toBe(429);
  });

  test('an address is what the trusted proxy saw: entries the client wrote to X-Forwarded-For do not make new addresses', async () => {
    const results: HttpResult[] = [];
    for (let i = 0; i < 11; i++) results.push(await signIn(stack.app, ws.ownerEmail, 'wrong', `10.9.8.${i}, 203.0.113.40`));
    expect(tally(results)).toEqual({ 401: 10, 429: 1 });
    expect((await signIn(stack.app, ws.ownerEmail, ws.ownerPassword, '203.0.113.40')).status).toBe(429);
    expect((await signIn(stack.app, ws.ownerEmail, ws.ownerPassword, '10.9.8.1, 203.0.113.41')).status).toBe(200);
  });
});

describe('sign-in limits with short locks', () => {
  let shortApp: TestApp;
  beforeAll(async () => {
    shortApp = await startTestApp({
      trustProxy: true,
      signInLimits: { ...LIMITS, maxPerAddress: 3, firstLockMs: 1_000, maxLockMs: 1_000 },
    });
  });
  afterAll(() => shortApp.close());

  test('the right password works once the lock is over', async () => {
    const ws = await createWorkspace(shortApp, 'Short locks');
    const from = '203.0.113.50';
    for (let i = 0; i < 3; i++) expect((await signIn(shortApp, ws.ownerEmail, 'wrong', from)).status).toBe(401);
    expect((await signIn(shortApp, ws.ownerEmail, ws.ownerPassword, from)).status).toBe(429);
    const after = await eventually(
      () => signIn(shortApp, ws.ownerEmail, ws.ownerPassword, from),
      (r) => r.status !== 429,
    );
    expect(after.status).toBe(200);
  });
});
