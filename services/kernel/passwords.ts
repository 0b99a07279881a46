import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const scrypt = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCb(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));

// OWASP's scrypt floor (N=2^17, r=8, p=1) costs 128 MiB per hash; 2^15 keeps sign-in fast on
// 2-core machines while staying well above legacy defaults. The parameters are stored with
// each hash, so they can be raised later without invalidating existing passwords.
const PRODUCTION_N = 2 ** 15;

/**
 * The test suite's cheaper cost: SVC_TEST_PASSWORD_HASH_N (a power of two from 2^10 up to the
 * production N), honoured only when NODE_ENV is `test` (jest sets it; the test global setup
 * sets the variable). The same code path at a fraction of the CPU and memory; anywhere else,
 * or with any other value, hashes use the production cost.
 */
export function passwordHashN(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.SVC_TEST_PASSWORD_HASH_N);
  const allowed = env.NODE_ENV === 'test' && Number.isInteger(Math.log2(n)) && n >= 2 ** 10 && n < PRODUCTION_N;
  return allowed ? n : PRODUCTION_N;
}

const PARAMS = { N: passwordHashN(), r: 8, p: 1, keylen: 32 };

/** Hashes a password with scrypt; the result embeds its parameters and salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, PARAMS.keylen, { N: PARAMS.N, r: PARAMS.r, p: PARAMS.p, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Constant-time check of a password against a stored hash; false for any malformed hash. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const [alg, n, r, p, saltB64, keyB64] = stored.split('$');
  if (alg !== 'scrypt' || !saltB64 || !keyB64) return false;
  const expected = Buffer.from(keyB64, 'base64url');
  const actual = await scrypt(password, Buffer.from(saltB64, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 256 * 1024 * 1024,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
