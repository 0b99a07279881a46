import { httpRequest, type HttpRequestInput, type HttpResponseOutput } from '../kernel/outbound';
import { redactSecrets } from './mask';
import { customEntries, parseCredentialValue, secretStrings, type CredentialValue } from './types';

/** A decrypted credential ready to be used: its type and value, never stored or returned. */
export interface CredentialInUse {
  id: string;
  type: string;
  value: CredentialValue;
}

/** Options of requests sent with a credential. */
export interface CredentialRequestOptions {
  allowPrivateNetworks: boolean;
  signal?: AbortSignal;
  /** Stores a refreshed OAuth2 value (new access token, maybe a new refresh token) so later calls use it. */
  persistRefreshed?: (value: CredentialValue) => Promise<void>;
}

/** A failure to refresh an OAuth2 token; the message never carries a token. */
export class CredentialRefreshError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialRefreshError';
  }
}

const basicAuth = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`, 'utf8').toString('base64')}`;

/** The headers a credential adds to an HTTP request. */
export function credentialHeaders(cred: { type: string; value: CredentialValue }): Record<string, string> {
  const v = cred.value as Record<string, string>;
  // The value was parsed by its type's schema, so the fields of that type are present.
  const field = (name: string): string => {
    const value = v[name];
    if (value === undefined) throw new Error(`A ${cred.type} credential has no ${name}.`);
    return value;
  };
  switch (cred.type) {
    case 'api_key':
      return { [field('headerName')]: field('apiKey') };
    case 'bearer':
      return { authorization: `Bearer ${v.token}` };
    case 'basic':
      return { authorization: basicAuth(field('username'), field('password')) };
    case 'oauth2':
      return { authorization: `Bearer ${v.accessToken}` };
    case 'http_header':
      return { [field('headerName')]: field('headerValue') };
    case 'http_query':
      return {}; // sent in the query (credentialQuery)
    case 'http_custom':
      return Object.fromEntries(customEntries(v.headers));
    case 'llm':
      return { authorization: `Bearer ${v.apiKey}` };
    default:
      // Providers: HTTP Basic with the token as password where a user name is given, else a bearer token.
      if (typeof v.token === 'string') return { authorization: v.username ? basicAuth(v.username, v.token) : `Bearer ${v.token}` };
      throw new Error(`A ${cred.type} credential cannot be sent on an HTTP request.`);
  }
}

/** The query parameters a credential adds to an HTTP request (an `http_query` credential's one, an `http_custom` one's all). */
export function credentialQuery(cred: { type: string; value: CredentialValue }): Record<string, string> {
  if (cred.type === 'http_custom') return Object.fromEntries(customEntries(cred.value.query));
  const v = cred.value as Record<string, string>;
  return cred.type === 'http_query' && v.paramName && v.paramValue ? { [v.paramName]: v.paramValue } : {};
}

/** Request headers with the credential's headers set over any of the same name (compared case-insensitively). */
function withCredential(headers: Record<string, string> | undefined, added: Record<string, string>): Record<string, string> {
  const names = new Set(Object.keys(added).map((h) => h.toLowerCase()));
  const kept = Object.entries(headers ?? {}).filter(([k]) => !names.has(k.toLowerCase()));
  return { ...Object.fromEntries(kept), ...added };
}

/**
 * Sends `req` with the credential applied, through the outbound guard. Credential headers are
 * dropped when a redirect changes origin. An `oauth2` credential with a refresh token and a
 * token URL that gets a 401 is refreshed once, stored through `persistRefreshed`, and the
 * request is sent once more with the new token.
 */
export async function sendWithCredential(
  req: HttpRequestInput,
  cred: CredentialInUse,
  opts: CredentialRequestOptions,
): Promise<HttpResponseOutput & { refreshed: boolean }> {
  const send = (value: CredentialValue) => {
    const added = credentialHeaders({ type: cred.type, value });
    const query = credentialQuery({ type: cred.type, value });
    return httpRequest(
      { ...req, headers: withCredential(req.headers, added), ...(Object.keys(query).length ? { query: { ...req.query, ...query } } : {}) },
      { allowPrivateNetworks: opts.allowPrivateNetworks, signal: opts.signal, sensitiveHeaders: Object.keys(added) },
    );
  };
  const first = await send(cred.value);
  if (first.status !== 401 || !canRefresh(cred)) return { ...first, refreshed: false };
  const refreshed = await refreshOAuth2(cred.value, {
    allowPrivateNetworks: opts.allowPrivateNetworks,
    signal: opts.signal,
    timeoutMs: req.timeoutMs,
  });
  cred.value = refreshed;
  await opts.persistRefreshed?.(refreshed);
  return { ...(await send(refreshed)), refreshed: true };
}

function canRefresh(cred: CredentialInUse): boolean {
  return cred.type === 'oauth2' && typeof cred.value.refreshToken === 'string' && typeof cred.value.tokenUrl === 'string';
}

/**
 * The OAuth2 refresh-token grant (RFC 6749 §6): a form POST to the token URL with the refresh
 * token and the client id and secret (client_secret_post). Returns the value with the new
 * access token (and refresh token, expiry and scopes when the server sends them). `type` is
 * the credential's type: `oauth2` keeps the token in `accessToken`, the mail providers
 * (`mailA`, `mailB`) in `token`.
 */
export async function refreshOAuth2(
  value: CredentialValue,
  opts: { allowPrivateNetworks: boolean; signal?: AbortSignal; timeoutMs?: number },
  type = 'oauth2',
): Promise<CredentialValue> {
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(value.refreshToken) });
  if (typeof value.clientId === 'string') form.set('client_id', value.clientId);
  if (typeof value.clientSecret === 'string') form.set('client_secret', value.clientSecret);
  const res = await httpRequest(
    {
      method: 'POST',
      url: String(value.tokenUrl),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      timeoutMs: opts.timeoutMs ?? 30_000,
    },
    { allowPrivateNetworks: opts.allowPrivateNetworks, signal: opts.signal },
  );
  const body = (res.body && typeof res.body === 'object' ? res.body : {}) as Record<string, unknown>;
  if (res.status < 200 || res.status >= 300 || typeof body.access_token !== 'string') {
    const code = typeof body.error === 'string' ? ` (${redactSecrets(body.error.slice(0, 100), secretStrings(value))})` : '';
    throw new CredentialRefreshError(`The OAuth2 token endpoint refused the refresh: HTTP ${res.status}${code}.`);
  }
  const next: Record<string, unknown> = { ...value, [type === 'oauth2' ? 'accessToken' : 'token']: body.access_token };
  if (typeof body.refresh_token === 'string') next.refreshToken = body.refresh_token;
  if (typeof body.expires_in === 'number' && Number.isFinite(body.expires_in))
    next.expiresAt = new Date(Date.now() + body.expires_in * 1000).toISOString();
  if (typeof body.scope === 'string' && type === 'oauth2') next.scopes = body.scope;
  const parsed = parseCredentialValue(type, next);
  if (!parsed.ok)
    throw new CredentialRefreshError('The OAuth2 token endpoint answered a token that cannot be stored (empty or with line breaks).');
  return parsed.value;
}
