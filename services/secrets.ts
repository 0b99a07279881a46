import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * Secrets derived from or protected by the deployment's SECRET_KEY. Rotating SECRET_KEY
 * changes every derived webhook URL and makes encrypted values unreadable: treat it like a
 * database password.
 */

/** A URL-safe token derived from SECRET_KEY: recomputable (so links can be shown again) yet unguessable. */
export function deriveToken(secretKey: string, purpose: string, id: string, prefix: string): string {
  return `${prefix}${createHmac('sha256', secretKey).update(`${purpose}\0${id}`).digest('base64url').slice(0, 32)}`;
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
