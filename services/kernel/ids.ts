import { randomBytes, randomUUID, createHash } from 'node:crypto';

/** Business ids: a readable prefix plus 128 random bits, e.g. `ws_3f0c…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}`;
}

/** URL-safe random secret of `bytes` random bytes. */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}
