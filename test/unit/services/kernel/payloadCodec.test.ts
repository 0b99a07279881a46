import {
  PayloadDecryptionError,
  PayloadEncryptionCodec,
  payloadCodecFor,
  ENCRYPTED_ENCODING,
} from '../../../../services/kernel/payloadCodec';

const KEY_A = 'a'.repeat(40);
const KEY_B = 'b'.repeat(40);
const plain = { metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode('{"secret":"s3cr3t"}') };
const text = (b?: Uint8Array | null) => Buffer.from(b ?? new Uint8Array()).toString();

describe('PayloadEncryptionCodec', () => {
  test('round-trips and hides the data; each encryption uses a fresh nonce', async () => {
    const codec = new PayloadEncryptionCodec([KEY_A]);
    const [one] = await codec.encode([plain]);
    const [two] = await codec.encode([plain]);
    expect(text(one.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(one.data)).not.toContain('s3cr3t');
    expect(Buffer.compare(Buffer.from(one.data!), Buffer.from(two.data!))).not.toBe(0);
    const [back] = await codec.decode([one]);
    expect(text(back.data)).toBe('{"secret":"s3cr3t"}');
    expect(text(back.metadata?.encoding)).toBe('json/plain');
  });

  test('a flipped bit, a truncated payload or a swapped key id is refused', async () => {
    const codec = new PayloadEncryptionCodec([KEY_A]);
    const [enc] = await codec.encode([plain]);
    const flipped = Buffer.from(enc.data!);
    flipped[20] ^= 1;
    await expect(codec.decode([{ ...enc, data: flipped }])).rejects.toThrow(PayloadDecryptionError);
    await expect(codec.decode([{ ...enc, data: Buffer.from(enc.data!).subarray(0, 10) }])).rejects.toThrow(/truncated/);
    const otherId = { ...enc.metadata, 'encryption-key-id': new TextEncoder().encode('0000000000000000') };
    await expect(codec.decode([{ ...enc, metadata: otherId }])).rejects.toThrow(/unknown key/);
  });

  test('rotation: the new key encrypts, previous keys still decrypt, a codec without the old key cannot', async () => {
    const [old] = await new PayloadEncryptionCodec([KEY_A]).encode([plain]);
    const rotated = payloadCodecFor({ payloadKey: KEY_B, previousPayloadKeys: [KEY_A] })!;
    expect(text((await rotated.decode([old]))[0].data)).toBe('{"secret":"s3cr3t"}');
    const [fresh] = await rotated.encode([plain]);
    expect(text(fresh.metadata?.['encryption-key-id'])).toBe(rotated.currentKeyId);
    await expect(new PayloadEncryptionCodec([KEY_B]).decode([old])).rejects.toThrow(/unknown key/);
  });

  test('payloads written before encryption was turned on pass through; no key means no codec', async () => {
    const codec = new PayloadEncryptionCodec([KEY_A]);
    expect(await codec.decode([plain])).toEqual([plain]);
    expect(payloadCodecFor({})).toBeUndefined();
    expect(payloadCodecFor({ secretKey: KEY_A })!.currentKeyId).toBe(codec.currentKeyId);
  });
});
