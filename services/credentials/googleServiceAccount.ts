/**
 * Google service-account keys on `mailA` credentials, and the access tokens they mint for
 * domain-wide delegation: the OAuth 2.0 JWT bearer grant (RFC 7523) with an RS256 assertion
 * signed here with node:crypto (iss = the key's client_email, sub = the delegated user, scope,
 * aud = the key's token_uri, one hour at most). Tokens are kept in this process's memory until
 * a minute before they expire; they are never stored, returned or logged.
 */
import { createHash, createPrivateKey, createPublicKey, createSign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { httpRequest } from '../kernel/outbound';

/** Where Google's token endpoint is when a key names none. */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
/** What a delegated mailbox token may do: read the mailbox (history, messages) and send replies. */
export const GMAIL_DELEGATION_SCOPES = ['https://www.googleapis.com/auth/gmail.readonly', 'https://www.googleapis.com/auth/gmail.send'];
const ASSERTION_LIFETIME_S = 3600;
/** Cached tokens are dropped this long before Google's expiry. */
const EARLY_EXPIRY_MS = 60_000;

/** The RSA private key of `pem`, when it parses and signs what its own public half verifies (a damaged key does not). */
function rsaPrivateKey(pem: string): KeyObject | null {
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' });
    if (key.asymmetricKeyType !== 'rsa') return null;
    const probe = Buffer.from('svc service-account key check');
    const signature = createSign('RSA-SHA256').update(probe).sign(key);
    return verify('RSA-SHA256', probe, createPublicKey(key), signature) ? key : null;
  } catch {
    return null;
  }
}

const keyFileFields = z
  .object({
    type: z.literal('service_account', { error: 'must be "service_account"' }),
    client_email: z
      .string()
      .trim()
      .max(320)
      .regex(/^[^\s@]+@[^\s@]+$/, 'must be the service account email address'),
    private_key: z
      .string({ error: 'must be a PEM-encoded RSA private key' })
      .max(16_384, 'must be a PEM-encoded RSA private key')
      .refine((pem) => rsaPrivateKey(pem) !== null, { message: 'must be a PEM-encoded RSA private key' }),
    private_key_id: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(/^[\x21-\x7e]+$/, 'must be the key id (printable ASCII)'),
    token_uri: z
      .string()
      .trim()
      .max(2048)
      .regex(/^https?:\/\/[^\s/?#]+\S*$/i, 'must be an http(s) URL')
      .default(GOOGLE_TOKEN_URI),
    client_id: z.string().max(200).optional(),
    project_id: z.string().max(200).optional(),
  })
  // Other fields of Google's key file (auth_uri, cert URLs, universe_domain) are accepted and not kept.
  .strip();

/** The key file as an object or as its JSON text; the stored form keeps the fields above only. */
export const serviceAccountKeySchema = z.preprocess(
  (raw) => {
    if (typeof raw !== 'string') return raw;
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return 'not-json';
    }
  },
  z
    .custom<unknown>((v) => v !== 'not-json', { message: 'must be the service account JSON key file (an object or its JSON text)' })
    .pipe(keyFileFields),
);

export type ServiceAccountKey = z.infer<typeof keyFileFields>;

/** A refusal by the token endpoint (a bad key, a subject the service account may not act as). */
export class TokenGrantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenGrantError';
  }
}

const b64url = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** The signed RS256 assertion of RFC 7523 §3 for `subject`. */
export function jwtAssertion(
  key: ServiceAccountKey,
  claims: { subject: string; scopes: string[]; audience: string; nowS?: number },
): string {
  const iat = claims.nowS ?? Math.floor(Date.now() / 1000);
  const header = { alg: 'RS256', typ: 'JWT', kid: key.private_key_id };
  const payload = {
    iss: key.client_email,
    sub: claims.subject,
    scope: claims.scopes.join(' '),
    aud: claims.audience,
    iat,
    exp: iat + ASSERTION_LIFETIME_S,
  };
  const input = `${b64url(header)}.${b64url(payload)}`;
  const signature = createSign('RSA-SHA256').update(input).sign(createPrivateKey(key.private_key)).toString('base64url');
  return `${input}.${signature}`;
}

const cache = new Map<string, { token: string; expiresAt: number }>();

export interface DelegatedTokenRequest {
  key: ServiceAccountKey;
  subject: string;
  scopes?: string[];
  /** Posted to instead of the key's token_uri (GOOGLE_OAUTH_TOKEN_URL); the assertion's audience stays token_uri. */
  tokenUrlOverride?: string;
  allowPrivateNetworks: boolean;
  timeoutMs: number;
}

const cacheKey = (r: DelegatedTokenRequest, url: string) =>
  createHash('sha256')
    .update(
      JSON.stringify([
        r.key.client_email,
        r.key.private_key_id,
        createHash('sha256').update(r.key.private_key).digest('hex'),
        r.subject,
        r.scopes ?? GMAIL_DELEGATION_SCOPES,
        url,
      ]),
    )
    .digest('hex');

/**
 * An access token for `subject` from the service account key: cached in memory while it has
 * more than a minute left, else minted with the JWT bearer grant through the outbound guard.
 * `fresh` skips the cache (after the API refused a cached token).
 */
export async function delegatedAccessToken(r: DelegatedTokenRequest, fresh = false): Promise<string> {
  const url = r.tokenUrlOverride ?? r.key.token_uri;
  const id = cacheKey(r, url);
  const cached = cache.get(id);
  if (!fresh && cached && cached.expiresAt - EARLY_EXPIRY_MS > Date.now()) return cached.token;
  cache.delete(id);
  const assertion = jwtAssertion(r.key, { subject: r.subject, scopes: r.scopes ?? GMAIL_DELEGATION_SCOPES, audience: r.key.token_uri });
  const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
  const res = await httpRequest(
    {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      timeoutMs: r.timeoutMs,
    },
    { allowPrivateNetworks: r.allowPrivateNetworks },
  );
  const body = (res.body && typeof res.body === 'object' ? res.body : {}) as Record<string, unknown>;
  if (res.status < 200 || res.status >= 300 || typeof body.access_token !== 'string' || body.access_token === '') {
    const code =
      typeof body.error === 'string'
        ? ` (${body.error.slice(0, 100)}${typeof body.error_description === 'string' ? `: ${body.error_description.slice(0, 300)}` : ''})`
        : '';
    throw new TokenGrantError(
      `The Google token endpoint refused a delegated token for ${r.subject} to service account ${r.key.client_email}: HTTP ${res.status}${code}.`,
    );
  }
  const lifetime = typeof body.expires_in === 'number' && Number.isFinite(body.expires_in) ? body.expires_in : 3600;
  if (cache.size >= 1000) for (const [k, v] of cache) if (v.expiresAt <= Date.now()) cache.delete(k);
  cache.set(id, { token: body.access_token, expiresAt: Date.now() + lifetime * 1000 });
  return body.access_token;
}
