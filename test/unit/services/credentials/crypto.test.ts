/** Credential encryption (AES-256-GCM keyring: key ids, nonces, tamper and AAD checks), masks, redaction and type schemas. */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../../../services/kernel/config';
import {
  credentialKeyring,
  maskSecret,
  openCredentialValue,
  parseCredentialValue,
  redactDeep,
  redactSecrets,
  sealCredentialValue,
  isLocalAiCliType,
} from '../../../../services/credentials';
import {
  deriveKey,
  keyIdOf,
  makeKeyring,
  openWithKeyring,
  parseKeyMaterial,
  sealedKeyId,
  SealedValueError,
  sealWithKeyring,
} from '../../../../services/kernel/secrets';

const k1 = randomBytes(32);
const k2 = randomBytes(32);

function expectSealedError(fn: () => unknown, reason: SealedValueError['reason']): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(SealedValueError);
  expect((caught as SealedValueError).reason).toBe(reason);
}

test('sealed values carry the key id, use a fresh 96-bit nonce per write, and round-trip', () => {
  const ring = makeKeyring(k1);
  const a = sealWithKeyring(ring, 'secret value', 'aad');
  const b = sealWithKeyring(ring, 'secret value', 'aad');
  expect(a).not.toBe(b);
  const [version, keyId, iv, tag] = a.split('.');
  expect(version).toBe('k1');
  expect(keyId).toBe(keyIdOf(k1));
  expect(sealedKeyId(a)).toBe(keyIdOf(k1));
  expect(Buffer.from(iv, 'base64url')).toHaveLength(12);
  expect(Buffer.from(tag, 'base64url')).toHaveLength(16);
  expect(a).not.toContain('secret');
  expect(openWithKeyring(ring, a, 'aad')).toBe('secret value');
});

test('key ids are stable fingerprints that differ per key and do not reveal the key', () => {
  expect(keyIdOf(k1)).toBe(keyIdOf(Buffer.from(k1)));
  expect(keyIdOf(k1)).not.toBe(keyIdOf(k2));
  expect(keyIdOf(k1)).toMatch(/^[A-Za-z0-9_-]{12}$/);
  expect(k1.toString('base64url')).not.toContain(keyIdOf(k1));
});

test('a tampered ciphertext, nonce or tag is refused', () => {
  const ring = makeKeyring(k1);
  const sealed = sealWithKeyring(ring, 'secret value', 'aad');
  const parts = sealed.split('.');
  const flip = (b64: string) => {
    const bytes = Buffer.from(b64, 'base64url');
    bytes[0] ^= 0x01;
    return bytes.toString('base64url');
  };
  for (const index of [2, 3, 4]) {
    const tampered = parts.map((p, i) => (i === index ? flip(p) : p)).join('.');
    expectSealedError(() => openWithKeyring(ring, tampered, 'aad'), 'tampered');
  }
  expectSealedError(() => openWithKeyring(ring, 'v1.abc.def', 'aad'), 'format');
  expectSealedError(
    () => openWithKeyring(ring, `k1.${parts[1]}.${Buffer.alloc(5).toString('base64url')}.${parts[3]}.${parts[4]}`, 'aad'),
    'format',
  );
});

test('associated data binds a credential to its workspace and id: a copied row does not decrypt', () => {
  const ring = makeKeyring(k1);
  const sealed = sealCredentialValue(ring, 'ws_a', 'cred_1', { token: 'abc' });
  expect(openCredentialValue(ring, 'ws_a', 'cred_1', sealed)).toEqual({ token: 'abc' });
  expectSealedError(() => openCredentialValue(ring, 'ws_a', 'cred_2', sealed), 'tampered');
  expectSealedError(() => openCredentialValue(ring, 'ws_b', 'cred_1', sealed), 'tampered');
  // Length prefixes keep ('ws_a', 'x:y') apart from ('ws_a:x', 'y').
  expectSealedError(
    () => openCredentialValue(ring, 'ws_a:4:cred', '1', sealCredentialValue(ring, 'ws_a', 'cred:1:1', { token: 'abc' })),
    'tampered',
  );
});

test('a keyring decrypts with previous keys, encrypts with the current one, and refuses unknown key ids', () => {
  const old = makeKeyring(k1);
  const sealedOld = sealWithKeyring(old, 'v', 'aad');
  const rotated = makeKeyring(k2, [k1]);
  expect(openWithKeyring(rotated, sealedOld, 'aad')).toBe('v');
  expect(sealedKeyId(sealWithKeyring(rotated, 'v', 'aad'))).toBe(keyIdOf(k2));
  expectSealedError(() => openWithKeyring(makeKeyring(k2), sealedOld, 'aad'), 'unknown_key');
  // A forged key id naming another configured key fails the tag check.
  const forged = sealedOld.replace(keyIdOf(k1), keyIdOf(k2));
  expectSealedError(() => openWithKeyring(rotated, forged, 'aad'), 'tampered');
  expect(makeKeyring(k1, [k1, k2, k2]).previous.map((k) => k.id)).toEqual([keyIdOf(k2)]);
});

test('the credentials keyring: CREDENTIALS_KEY, else HKDF from SECRET_KEY; the derived key still decrypts after an explicit key replaces it', () => {
  const secretKey = 'x'.repeat(40);
  const derived = credentialKeyring({ key: undefined, previousKeys: [], secretKey })!;
  expect(derived.current.key.equals(deriveKey(secretKey, 'credentials'))).toBe(true);
  expect(credentialKeyring({ key: undefined, previousKeys: [], secretKey: undefined })).toBeNull();
  const explicit = credentialKeyring({ key: k2.toString('base64'), previousKeys: [k1.toString('hex')], secretKey })!;
  expect(explicit.current.id).toBe(keyIdOf(k2));
  expect(explicit.previous.map((k) => k.id)).toEqual([keyIdOf(k1), derived.current.id]);
  const sealed = sealCredentialValue(derived, 'ws', 'cred', { token: 't' });
  expect(openCredentialValue(explicit, 'ws', 'cred', sealed)).toEqual({ token: 't' });
});

test('key material: 64 hex characters or base64 of 32 bytes; configuration errors name the variable, never the value', () => {
  expect(parseKeyMaterial(k1.toString('hex'), 'K').equals(k1)).toBe(true);
  expect(parseKeyMaterial(k1.toString('base64'), 'K').equals(k1)).toBe(true);
  expect(parseKeyMaterial(k1.toString('base64url'), 'K').equals(k1)).toBe(true);
  expect(() => parseKeyMaterial('too-short-key-material', 'CREDENTIALS_KEY')).toThrow(/CREDENTIALS_KEY must be a 32-byte key/);
  let message = '';
  try {
    loadConfig({ CREDENTIALS_KEY: 'not-a-key-but-a-secret-looking-value' });
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).toMatch(/Invalid configuration: CREDENTIALS_KEY/);
  expect(message).not.toContain('not-a-key-but');
  expect(() => loadConfig({ CREDENTIALS_PREVIOUS_KEYS: `${k1.toString('hex')},nope` })).toThrow(/CREDENTIALS_PREVIOUS_KEYS/);
  const config = loadConfig({
    CREDENTIAL_ENV_ALLOWLIST: 'REPO_TOKEN:repo, PLAIN ,',
    CREDENTIAL_PROVIDER_BASE_URLS: 'repo=http://127.0.0.1:1/api',
  });
  expect(config.credentials.envAllowlist).toEqual([
    { name: 'REPO_TOKEN', type: 'repo' },
    { name: 'PLAIN', type: null },
  ]);
  expect(config.credentials.providerBaseUrls).toEqual({ repo: 'http://127.0.0.1:1/api' });
  expect(() => loadConfig({ CREDENTIAL_ENV_ALLOWLIST: 'bad-name' })).toThrow(/CREDENTIAL_ENV_ALLOWLIST/);
});

test('maskedValue has one shape: 4 + bullets + 2, or bullets alone under 12 characters', () => {
  expect(maskSecret('sk-abcdefghijkl-XY')).toBe('sk-a••••••••XY');
  expect(maskSecret('abcdefghijk')).toBe('••••••••');
  expect(maskSecret('abcdefghijkl')).toBe('abcd••••••••kl');
  expect(maskSecret('')).toBe('••••••••');
});

test('redaction replaces secrets and their base64 and URL-encoded forms, in keys and values', () => {
  const secrets = ['p@ss word!', 'user:p@ss word!'];
  const basic = Buffer.from('user:p@ss word!').toString('base64');
  expect(redactSecrets(`auth Basic ${basic} and p@ss word! and p%40ss%20word!`, secrets)).toBe(
    'auth Basic [redacted] and [redacted] and [redacted]',
  );
  expect(redactDeep({ headers: { 'p@ss word!': ['x p@ss word! y'] }, n: 1 }, secrets)).toEqual({
    headers: { '[redacted]': ['x [redacted] y'] },
    n: 1,
  });
});

test('type schemas validate values with messages that never echo the value', () => {
  expect(parseCredentialValue('bearer', 'tok-123')).toEqual({ ok: true, value: { token: 'tok-123' } });
  expect(parseCredentialValue('api_key', 'k')).toEqual({ ok: true, value: { headerName: 'X-API-Key', apiKey: 'k' } });
  expect(parseCredentialValue('smtp', { host: 'mail.example.test', port: 465, username: 'u', password: 'p' })).toMatchObject({
    ok: true,
    value: { secure: true },
  });
  expect(parseCredentialValue('oauth2', { accessToken: 'a', scopes: 'read  write' })).toMatchObject({
    ok: true,
    value: { scopes: ['read', 'write'] },
  });
  const bad = parseCredentialValue('oauth2', { accessToken: 'secret-token-value', refreshToken: 'r' });
  expect(bad).toEqual({ ok: false, problems: [{ path: 'value.tokenUrl', message: 'tokenUrl is required with a refreshToken' }] });
  const newline = parseCredentialValue('bearer', 'secret\r\nX-Injected: 1');
  expect(newline.ok).toBe(false);
  expect(JSON.stringify(newline)).not.toContain('secret');
  expect(parseCredentialValue('basic', 'just-a-string')).toMatchObject({ ok: false, problems: [{ path: 'value' }] });
  expect(parseCredentialValue('ci', { token: 't' })).toMatchObject({ ok: false, problems: [{ path: 'value.username' }] });
  expect(parseCredentialValue('bearer', { token: 't', extra: 'x' })).toMatchObject({
    ok: false,
    problems: [{ message: 'unknown field(s) "extra"' }],
  });
  expect(isLocalAiCliType('cliA')).toBe(true);
  expect(isLocalAiCliType('local_ai_cli_session')).toBe(true);
  expect(isLocalAiCliType('bearer')).toBe(false);
});
