import { z } from 'zod';
import { serviceAccountKeySchema } from './googleServiceAccount';

/**
 * Credential types: one zod schema per type for the stored value (a JSON object), which field
 * holds the secret that `maskedValue` is made from, which fields are secret (redacted from
 * anything that leaves the activity), and how a connection test reaches the service.
 *
 * A single string is accepted as the value of types with one secret (`bearer`, `api_key`,
 * `oauth2`, the providers): it becomes that secret.
 */

/** Header names (RFC 9110 token). */
const headerName = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a valid HTTP header name');
/** A secret sent in an HTTP header: visible ASCII and spaces, no line breaks. */
const headerSecret = z
  .string()
  .min(1, 'must not be empty')
  .max(8192, 'must be at most 8192 characters')
  .regex(/^[\x20-\x7e\t]+$/, 'must be printable ASCII without line breaks (it is sent in an HTTP header)');
/** A secret sent over a mail protocol: no line breaks or NUL. */
const lineSecret = z
  .string()
  .min(1, 'must not be empty')
  .max(1024)
  .regex(/^[^\r\n\0]+$/, 'must not contain line breaks');
const httpUrl = z
  .string()
  .trim()
  .max(2048)
  .regex(/^https?:\/\/[^\s/?#]+\S*$/i, 'must be an http(s) URL');
const host = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9.:[\]_-]+$/, 'must be a host name or IP address');
const port = z.number().int().min(1).max(65535);
/** Where http-type credentials are tested: a URL the stored credential is sent to by `POST /credentials/{id}/test`. */
const probeUrl = httpUrl.optional().describe('URL the connection test calls with this credential');

const apiKey = z.strictObject({ headerName: headerName.default('X-API-Key'), apiKey: headerSecret, probeUrl });
const bearer = z.strictObject({ token: headerSecret, probeUrl });
const basic = z.strictObject({
  username: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[^:\r\n]+$/, 'must not contain ":" or line breaks'),
  password: z
    .string()
    .max(1024)
    .regex(/^[^\r\n]*$/, 'must not contain line breaks'),
  probeUrl,
});
const scopes = z
  .union([z.array(z.string().trim().min(1).max(500)).max(200), z.string().max(10_000)])
  .transform((s) => (typeof s === 'string' ? s.split(/[\s,]+/).filter(Boolean) : s));
const oauth2 = z
  .strictObject({
    accessToken: headerSecret,
    refreshToken: lineSecret.optional(),
    tokenUrl: httpUrl.optional(),
    clientId: z.string().min(1).max(1024).optional(),
    clientSecret: lineSecret.optional(),
    scopes: scopes.optional(),
    expiresAt: z.iso.datetime({ offset: true }).optional(),
    probeUrl,
  })
  .refine((v) => !v.refreshToken || v.tokenUrl, { message: 'tokenUrl is required with a refreshToken', path: ['tokenUrl'] });
const httpHeader = z.strictObject({ headerName, headerValue: headerSecret, probeUrl });
/** A secret sent as a query parameter (the external tool's query auth): both are URL-encoded when sent. */
const httpQuery = z.strictObject({
  paramName: z.string().trim().min(1).max(200),
  paramValue: z.string().min(1, 'must not be empty').max(8192, 'must be at most 8192 characters'),
  probeUrl,
});
/**
 * Several headers and query parameters sent together (the external tool's "custom auth", whose
 * JSON also lists them): at most 20 of each, at least one in all. Every value is a secret.
 */
const httpCustom = z
  .strictObject({
    headers: z.record(headerName, headerSecret).optional(),
    query: z.record(z.string().trim().min(1).max(200), httpQuery.shape.paramValue).optional(),
    probeUrl,
  })
  .superRefine((v, ctx) => {
    const headers = Object.keys(v.headers ?? {}).length;
    const query = Object.keys(v.query ?? {}).length;
    if (headers + query === 0) ctx.addIssue({ code: 'custom', path: ['headers'], message: 'give at least one header or query parameter' });
    if (headers > 20) ctx.addIssue({ code: 'custom', path: ['headers'], message: 'at most 20 headers' });
    if (query > 20) ctx.addIssue({ code: 'custom', path: ['query'], message: 'at most 20 query parameters' });
  });
const smtp = z
  .strictObject({
    host,
    port: port.default(587),
    secure: z.boolean().optional().describe('Implicit TLS; default true on port 465'),
    username: lineSecret,
    password: lineSecret,
    from: z.string().trim().max(320).optional(),
  })
  .transform((v) => ({ ...v, secure: v.secure ?? v.port === 465 }));
const imap = z
  .strictObject({
    host,
    port: port.default(993),
    secure: z.boolean().optional().describe('Implicit TLS; default true on port 993'),
    username: lineSecret.regex(/^[\x20-\x7e]+$/, 'must be printable ASCII'),
    password: lineSecret.regex(/^[\x20-\x7e]+$/, 'must be printable ASCII'),
  })
  .transform((v) => ({ ...v, secure: v.secure ?? v.port === 993 }));
const provider = z.strictObject({
  token: headerSecret,
  username: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[^:\r\n]+$/, 'must not contain ":" or line breaks')
    .optional()
    .describe('Sent with the token as HTTP Basic where the provider uses it (ci, wiki)'),
  baseUrl: httpUrl.optional().describe("The provider's API base URL; default: CREDENTIAL_PROVIDER_BASE_URLS"),
  signingSecret: headerSecret.optional().describe('errtracker: the integration client secret its webhook deliveries are signed with'),
});
/**
 * Mail providers (`mailA`, `mailB`): an access token, with what refreshes it on a 401 (the
 * oauth2 fields), or, for `mailA`, a Google service-account key for domain-wide delegation.
 * The key file itself (`type: "service_account"` at the top) is accepted as the value.
 */
const mailProvider = (type: 'mailA' | 'mailB') =>
  z.preprocess(
    (raw) =>
      type === 'mailA' && raw && typeof raw === 'object' && (raw as { type?: unknown }).type === 'service_account'
        ? { serviceAccountKey: raw }
        : raw,
    z
      .strictObject({
        token: headerSecret.optional(),
        username: provider.shape.username,
        baseUrl: provider.shape.baseUrl,
        refreshToken: lineSecret.optional(),
        tokenUrl: httpUrl.optional(),
        clientId: z.string().min(1).max(1024).optional(),
        clientSecret: lineSecret.optional(),
        expiresAt: z.iso.datetime({ offset: true }).optional(),
        ...(type === 'mailA' ? { serviceAccountKey: serviceAccountKeySchema.optional(), scopes: scopes.optional() } : {}),
      })
      .superRefine((v, ctx) => {
        const key = (v as { serviceAccountKey?: unknown }).serviceAccountKey;
        if (key !== undefined && (v.token !== undefined || v.refreshToken !== undefined))
          ctx.addIssue({ code: 'custom', path: ['serviceAccountKey'], message: 'send either a token or a serviceAccountKey, not both' });
        if (key === undefined && v.token === undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['token'],
            message: type === 'mailA' ? 'a token or a serviceAccountKey is required' : 'a token is required',
          });
        if (v.refreshToken && !v.tokenUrl)
          ctx.addIssue({ code: 'custom', path: ['tokenUrl'], message: 'tokenUrl is required with a refreshToken' });
      }),
  );
const llm = z.strictObject({ baseUrl: httpUrl, apiKey: headerSecret, model: z.string().trim().min(1).max(200) });

export const PROVIDER_TYPES = ['mailA', 'mailB', 'drive', 'wiki', 'chat', 'repo', 'ci', 'errtracker'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** How a type is tested and used: sent on HTTP requests, a mail protocol, a provider API, a language model. */
export type CredentialFamily = 'http' | 'smtp' | 'imap' | 'provider' | 'llm';

interface TypeDef {
  schema: z.ZodType<Record<string, unknown>>;
  family: CredentialFamily;
  /** The field `maskedValue` is made from. */
  maskField: string;
  /** The field a single string value stands for; absent when the type needs an object. */
  shorthand?: string;
}

const providerDef = (type: ProviderType): TypeDef => ({
  // The ci server takes its API token as the password of HTTP Basic, so it needs the user name.
  schema: (type === 'ci'
    ? provider.refine((v) => v.username !== undefined, { message: 'username is required for ci', path: ['username'] })
    : type === 'mailA' || type === 'mailB'
      ? mailProvider(type)
      : provider) as unknown as z.ZodType<Record<string, unknown>>,
  family: 'provider',
  maskField: 'token',
  shorthand: type === 'ci' ? undefined : 'token',
});

export const CREDENTIAL_TYPES: Record<string, TypeDef> = {
  api_key: { schema: apiKey, family: 'http', maskField: 'apiKey', shorthand: 'apiKey' },
  bearer: { schema: bearer, family: 'http', maskField: 'token', shorthand: 'token' },
  basic: { schema: basic, family: 'http', maskField: 'password' },
  oauth2: { schema: oauth2, family: 'http', maskField: 'accessToken', shorthand: 'accessToken' },
  http_header: { schema: httpHeader, family: 'http', maskField: 'headerValue' },
  http_query: { schema: httpQuery, family: 'http', maskField: 'paramValue' },
  http_custom: { schema: httpCustom, family: 'http', maskField: 'headers' },
  smtp: { schema: smtp, family: 'smtp', maskField: 'password' },
  imap: { schema: imap, family: 'imap', maskField: 'password' },
  ...Object.fromEntries(PROVIDER_TYPES.map((p) => [p, providerDef(p)])),
  llm: { schema: llm, family: 'llm', maskField: 'apiKey' },
};

export const CREDENTIAL_TYPE_NAMES = Object.keys(CREDENTIAL_TYPES);

/** Types the http node can send: api_key, bearer, basic, oauth2, http_header, http_query, http_custom. */
export const HTTP_CREDENTIAL_TYPES = Object.entries(CREDENTIAL_TYPES)
  .filter(([, def]) => def.family === 'http')
  .map(([t]) => t);

/** Fields whose values are secret in every type: redacted from test messages and http node outputs. */
export const SECRET_FIELDS = [
  'apiKey',
  'token',
  'password',
  'accessToken',
  'refreshToken',
  'clientSecret',
  'headerValue',
  'paramValue',
  'signingSecret',
] as const;

/**
 * Local AI CLI sessions are managed by the workers routes (`/api/v1/workers/local-ai-cli/*`),
 * never stored as workspace credentials: the spec refuses them here.
 */
const LOCAL_AI_CLI_TYPES = /^(cliA|cliB|local[_-]?ai[_-]?cli)([_-].*)?$/i;

export type CredentialValue = Record<string, unknown>;

/** The name/value pairs of an http_custom credential's `headers` or `query` (none for anything else). */
export function customEntries(map: unknown): Array<[string, string]> {
  if (!map || typeof map !== 'object' || Array.isArray(map)) return [];
  return Object.entries(map as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1].length > 0);
}

/** The string `maskedValue` is made from: the type's secret field, else a service-account key's id. */
export function maskSource(type: string, value: CredentialValue): string {
  const secret = value[CREDENTIAL_TYPES[type]?.maskField ?? ''];
  if (typeof secret === 'string') return secret;
  // http_custom: its first header's value, else its first query parameter's.
  const first = [...customEntries(value.headers), ...customEntries(value.query)].at(0);
  if (first) return first[1];
  const keyId = (value.serviceAccountKey as { private_key_id?: unknown } | undefined)?.private_key_id;
  return typeof keyId === 'string' ? keyId : '';
}

/** Whether `type` is a local AI CLI session type (refused by the credentials routes). */
export function isLocalAiCliType(type: string): boolean {
  return LOCAL_AI_CLI_TYPES.test(type);
}

/** A problem with a credential's value: where, and what is wrong (never the value itself). */
export interface ValueProblem {
  path: string;
  message: string;
}

/**
 * Validates `raw` for `type`. Returns the normalised value, or the problems (paths and zod
 * messages, which name expectations and never echo the input).
 */
export function parseCredentialValue(
  type: string,
  raw: unknown,
): { ok: true; value: CredentialValue } | { ok: false; problems: ValueProblem[] } {
  const def = CREDENTIAL_TYPES[type];
  if (!def) return { ok: false, problems: [{ path: 'type', message: `unknown credential type "${type}"` }] };
  let input = raw;
  if (typeof raw === 'string') {
    if (!def.shorthand)
      return { ok: false, problems: [{ path: 'value', message: `a ${type} credential needs an object value, not a string` }] };
    input = { [def.shorthand]: raw };
  }
  const parsed = def.schema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    problems: parsed.error.issues.map((i) => ({ path: ['value', ...i.path.map(String)].join('.'), message: describeIssue(i) })),
  };
}

/** zod messages, with unknown keys named (they are field names, not values). */
function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  if (issue.code === 'invalid_type') return `expected ${issue.expected}`;
  return issue.message;
}

/** The secret strings of a value (for redaction), longest first so overlapping secrets redact whole. */
export function secretStrings(value: CredentialValue): string[] {
  const out: string[] = [];
  for (const field of SECRET_FIELDS) {
    const v = value[field];
    if (typeof v === 'string' && v.length > 0) out.push(v);
  }
  for (const [, v] of customEntries(value.headers)) out.push(v);
  for (const [, v] of customEntries(value.query)) out.push(v, encodeURIComponent(v));
  // A query secret also travels URL-encoded (an echoed URL).
  if (typeof value.paramValue === 'string' && encodeURIComponent(value.paramValue) !== value.paramValue)
    out.push(encodeURIComponent(value.paramValue));
  const privateKey = (value.serviceAccountKey as { private_key?: unknown } | undefined)?.private_key;
  if (typeof privateKey === 'string' && privateKey.length > 0) out.push(privateKey);
  // As sent together with the user name: HTTP Basic (`user:secret`) and SASL PLAIN (`\0user\0secret`), base64-encoded on the wire.
  const user = value.username;
  const pass = typeof value.password === 'string' ? value.password : value.token;
  if (typeof user === 'string' && typeof pass === 'string' && pass.length > 0) out.push(`${user}:${pass}`, `\0${user}\0${pass}`);
  return out.sort((a, b) => b.length - a.length);
}

/** OAuth scopes of a stored value, when it has any. */
export function oauthScopesOf(value: CredentialValue): string[] | undefined {
  const scopes = value.scopes;
  return Array.isArray(scopes) && scopes.length > 0 ? scopes.map(String) : undefined;
}
