import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { ReasonedError } from './errors';

/**
 * Secrets derived from or protected by the deployment's SECRET_KEY. Rotating SECRET_KEY
 * changes every derived webhook URL and makes encrypted values unreadable: treat it like a
 * database password.
 */

/** A URL-safe token derived from SECRET_KEY: recomputable (so links can be shown again) yet unguessable. */
export function deriveToken(secretKey: string, purpose: string, id: string, prefix: string): string {
  return `${prefix}${createHmac('sha256', secretKey).update(`${purpose}\0${id}`).digest('base64url').slice(0, 32)}`;
}

/**
 * A 256-bit key for one purpose (`'credentials'`, `'temporal-payloads'`, `'file-blobs'`, …),
 * derived from SECRET_KEY with HKDF-SHA256. Different purposes never share a key, so a leak of
 * one derived key exposes nothing else. Use this wherever a feature has no key of its own.
 */
export function deriveKey(secretKey: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secretKey, 'utf8'), Buffer.alloc(0), Buffer.from(`svc:${purpose}`, 'utf8'), 32));
}

function aesKey(secretKey: string): Buffer {
  return createHash('sha256').update(`svc-encryption\0${secretKey}`).digest();
}

/** AES-256-GCM with a random IV; output `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export function encryptSecret(secretKey: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', aesKey(secretKey), iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

/** Decrypts `encryptSecret` output; throws when the value was tampered with or SECRET_KEY changed. */
export function decryptSecret(secretKey: string, sealed: string): string {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('Unsupported encrypted value');
  const decipher = createDecipheriv('aes-256-gcm', aesKey(secretKey), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}

// ---------------------------------------------------------------------------------------------
// Keyrings: AES-256-GCM with a key id in every ciphertext and associated data binding the value
// to where it belongs (a credential's workspace and id). One current key encrypts; every key of
// the ring decrypts, so a key can be rotated while the service keeps reading.

/** One 256-bit key and its id (a fingerprint of the key, so operators never name keys). */
export interface RingKey {
  id: string;
  key: Buffer;
}

/** The key that encrypts new values, and older keys that still decrypt values written with them. */
export interface Keyring {
  current: RingKey;
  previous: RingKey[];
}

const SEALED_VERSION = 'k1';

/** A key's id: 12 base64url characters of HMAC-SHA256(key, 'svc:key-id'); reveals nothing of the key. */
export function keyIdOf(key: Buffer): string {
  return createHmac('sha256', key).update('svc:key-id').digest('base64url').slice(0, 12);
}

export function ringKey(key: Buffer): RingKey {
  if (key.length !== 32) throw new Error('An encryption key must be 32 bytes.');
  return { id: keyIdOf(key), key };
}

/**
 * Parses key material given in configuration: 64 hex characters, or base64/base64url of 32
 * bytes. Throws a message naming `what` (the variable) and never the value.
 */
export function parseKeyMaterial(text: string, what: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43,44}={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes;
  }
  throw new Error(`${what} must be a 32-byte key written as 64 hex characters or as base64 (e.g. \`openssl rand -base64 32\`).`);
}

/** A keyring from a current key and older keys (duplicates of the current key are dropped). */
export function makeKeyring(current: Buffer, previous: Buffer[] = []): Keyring {
  const cur = ringKey(current);
  const seen = new Set([cur.id]);
  const prev: RingKey[] = [];
  for (const key of previous) {
    const k = ringKey(key);
    if (!seen.has(k.id)) {
      seen.add(k.id);
      prev.push(k);
    }
  }
  return { current: cur, previous: prev };
}

/** Why a sealed value could not be opened: `format` (not a sealed value), `unknown_key`, or `tampered` (tag check failed: changed bytes, wrong key or wrong associated data). */
export class SealedValueError extends ReasonedError<'format' | 'unknown_key' | 'tampered'> {}

/**
 * Encrypts `plaintext` with the ring's current key and a fresh random 96-bit nonce, binding
 * `associatedData` (authenticated, not stored). Output: `k1.<keyId>.<nonce>.<tag>.<ciphertext>`,
 * base64url parts.
 */
export function sealWithKeyring(keyring: Keyring, plaintext: string, associatedData: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, iv);
  cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    SEALED_VERSION,
    keyring.current.id,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    data.toString('base64url'),
  ].join('.');
}

/** The key id a sealed value names, or null when it is not a `k1` value. */
export function sealedKeyId(sealed: string): string | null {
  const parts = sealed.split('.');
  return parts.length === 5 && parts[0] === SEALED_VERSION ? (parts[1] ?? null) : null;
}

/**
 * Decrypts a `sealWithKeyring` value with the key its id names, checking `associatedData`.
 * Throws `SealedValueError` (never the plaintext or the key) when the format is wrong, the key
 * is not in the ring, or the tag does not verify.
 */
export function openWithKeyring(keyring: Keyring, sealed: string, associatedData: string): string {
  const parts = sealed.split('.');
  if (parts.length !== 5 || parts[0] !== SEALED_VERSION)
    throw new SealedValueError('format', 'The stored value is not an encrypted value of a known format.');
  // Five parts, checked above: the defaults never apply.
  const [, keyId = '', iv = '', tag = '', data = ''] = parts;
  const key = keyring.current.id === keyId ? keyring.current : keyring.previous.find((k) => k.id === keyId);
  if (!key) throw new SealedValueError('unknown_key', `The stored value was encrypted with key ${keyId}, which is not configured.`);
  const ivBytes = Buffer.from(iv, 'base64url');
  const tagBytes = Buffer.from(tag, 'base64url');
  if (ivBytes.length !== 12 || tagBytes.length !== 16)
    throw new SealedValueError('format', 'The stored value has a malformed nonce or tag.');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, ivBytes);
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(tagBytes);
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SealedValueError(
      'tampered',
      'The stored value failed its integrity check (changed, moved to another row, or encrypted with another key).',
    );
  }
}
