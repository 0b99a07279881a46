import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { deriveKey } from './secrets';

/**
 * Encryption of every payload Temporal stores (workflow inputs and results, activity inputs and
 * results, signals, updates, queries, memos, failure details when encoded): node inputs and
 * outputs, resume tokens and approval comments are never plaintext in Temporal's database or
 * its Web UI. Search attributes are not payloads and stay readable (they must be indexable).
 *
 * Format: metadata `encoding: binary/encrypted`, `encryption-key-id: <id>`; data
 * `nonce(12) ‖ ciphertext ‖ tag(16)` of the original Payload's protobuf bytes under
 * AES-256-GCM with the key id as associated data. Payloads not in this format (written before
 * encryption was turned on) are passed through on decode, so turning it on needs no migration.
 * Keys rotate by adding the new one as current and keeping the old ones as previous keys until
 * every execution written with them is closed and past retention.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_FIELD = 'encryption-key-id';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('utf8') : undefined);

interface PayloadKey {
  id: string;
  key: Buffer;
}

/** A key from a configured secret: HKDF for this purpose, identified by a digest that reveals nothing. */
function payloadKey(secret: string): PayloadKey {
  const key = deriveKey(secret, 'temporal-payloads');
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 16), key };
}

/** Thrown when a payload cannot be decrypted: unknown key id, or the bytes were altered. */
export class PayloadDecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayloadDecryptionError';
  }
}

export class PayloadEncryptionCodec implements PayloadCodec {
  private readonly current: PayloadKey;
  private readonly keys: Map<string, Buffer>;

  /** `secrets[0]` encrypts; every one of them decrypts. */
  constructor(secrets: readonly string[]) {
    const all = secrets.map(payloadKey);
    const [current] = all;
    if (current === undefined) throw new Error('PayloadEncryptionCodec needs at least one key');
    this.current = current;
    this.keys = new Map(all.map((k) => [k.id, k.key]));
  }

  /** Id of the key new payloads are encrypted with. */
  get currentKeyId(): string {
    return this.current.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce);
      cipher.setAAD(Buffer.from(this.current.id, 'utf8'));
      const data = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID_FIELD]: utf8(this.current.id) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyId = text(payload.metadata?.[KEY_ID_FIELD]) ?? '';
      const key = this.keys.get(keyId);
      if (!key)
        throw new PayloadDecryptionError(
          `Payload encrypted with unknown key "${keyId.slice(0, 32)}"; configure it in TEMPORAL_PAYLOAD_PREVIOUS_KEYS.`,
        );
      const data = Buffer.from(payload.data ?? new Uint8Array());
      if (data.length < NONCE_BYTES + TAG_BYTES) throw new PayloadDecryptionError('Encrypted payload is truncated.');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES));
        decipher.setAAD(Buffer.from(keyId, 'utf8'));
        decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
        const plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
        return temporal.api.common.v1.Payload.decode(plain);
      } catch {
        throw new PayloadDecryptionError('Encrypted payload failed authentication (altered, or a different key).');
      }
    });
  }
}

/**
 * The codec every Temporal client and worker of this deployment uses, or undefined when no key
 * is configured (then payloads are stored as plain JSON; the processes log a warning). Every
 * process talking to the same namespace must use the same keys.
 */
export function payloadCodecFor(settings: {
  payloadKey?: string;
  previousPayloadKeys?: readonly string[];
  secretKey?: string;
}): PayloadEncryptionCodec | undefined {
  const current = settings.payloadKey ?? settings.secretKey;
  if (!current) return undefined;
  return new PayloadEncryptionCodec([current, ...(settings.previousPayloadKeys ?? [])]);
}

// ---------------------------------------------------------------------------------------------
// The codec server protocol (what the Temporal Web UI and CLI send to a codec endpoint):
// `{ payloads: [{ metadata: { <key>: <base64> }, data: <base64> }] }` in both directions.

export interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

export function payloadFromJson(json: JsonPayload): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(json.metadata ?? {})) metadata[k] = Buffer.from(v, 'base64');
  return { metadata, data: Buffer.from(json.data ?? '', 'base64') };
}

export function payloadToJson(payload: Payload): JsonPayload {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(payload.metadata ?? {})) if (v) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}

/** `payloadCodecFor` over the deployment configuration. */
export function payloadCodecFromConfig(config: {
  secretKey: string | undefined;
  temporal: { payloadKey: string | undefined; previousPayloadKeys: string[] };
}): PayloadEncryptionCodec | undefined {
  return payloadCodecFor({
    payloadKey: config.temporal.payloadKey,
    previousPayloadKeys: config.temporal.previousPayloadKeys,
    secretKey: config.secretKey,
  });
}
