/**
 * Sign-in limits cannot be turned against the owner by a guesser spread over many addresses
 * (issue 27, item 4): such a guesser can use up the account-wide limit, but an address the
 * owner signed in from before is remembered, and from it only its own limit applies.
 */
import { DEFAULT_SIGN_IN_LIMITS, type SignInLimitSettings } from '../../../services/kernel/signInLimits';
import { http, useTestStack, type HttpResult } from '../../kit';

const LIMITS: SignInLimitSettings = { ...DEFAULT_SIGN_IN_LIMITS, maxPerAddress: 10, maxPerAccount: 50 };

// ctx.ip comes from X-Forwarded-For, so one test process can speak from many addresses.
const stack = useTestStack({ worker: false, config: { trustProxy: true, trustProxyHops: 1, signInLimits: LIMITS } });
// Dozens of password hashes per test: 60 s ran out beside a benchmark. A bound for "hung".
jest.setTimeout(600_000);

const signIn = (email: string, password: string, from: string): Promise<HttpResult> =>
  http(stack.app, 'POST', '/api/auth/sign-in', { body: { email, password }, headers: { 'x-forwarded-for': from } });

/** Strangers on `n` addresses guess until each address is refused; returns every status. */
async function spreadGuesses(email: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const burst = await Promise.all(Array.from({ length: 12 }, () => signIn(email, 'wrong guess', `198.51.100.${i + 1}`)));
    statuses.push(...burst.map((r) => r.status));
  }
  return statuses;
}

test('strangers on six addresses lock the account-wide limit, yet the owner signs in from an address they used before', async () => {
  const ws = await stack.workspace('Remembered');
  expect((await signIn(ws.ownerEmail, ws.ownerPassword, '203.0.113.50')).status).toBe(200);

  const statuses = await spreadGuesses(ws.ownerEmail, 6);
  // 50 reached the password check across the six addresses, then the account-wide limit held.
  expect(statuses.filter((s) => s === 401)).toHaveLength(50);
  expect(statuses.filter((s) => s === 429)).toHaveLength(72 - 50);

  // A new address is refused: the account-wide lock is what stops a spread-out guesser.
  expect((await signIn(ws.ownerEmail, ws.ownerPassword, '192.0.2.99')).status).toBe(429);
  // The owner's remembered address is not.
  expect((await signIn(ws.ownerEmail, ws.ownerPassword, '203.0.113.50')).status).toBe(200);
  // Wrong guesses from it still count against its own limit.
  const fromRemembered = await Promise.all(Array.from({ length: 12 }, () => signIn(ws.ownerEmail, 'wrong guess', '203.0.113.50')));
  expect(fromRemembered.filter((r) => r.status === 401)).toHaveLength(10);
  expect(fromRemembered.filter((r) => r.status === 429)).toHaveLength(2);
});

test('an address is remembered for its account only', async () => {
  const owner = await stack.workspace('Owner');
  const other = await stack.workspace('Other');
  expect((await signIn(owner.ownerEmail, owner.ownerPassword, '203.0.113.60')).status).toBe(200);
  await spreadGuesses(other.ownerEmail, 6);
  expect((await signIn(other.ownerEmail, other.ownerPassword, '203.0.113.60')).status).toBe(429);
});
