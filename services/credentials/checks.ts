import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { lazyModule } from '../kernel/lazyModule';
import { httpRequest, OutboundError, resolveGuardedHost, type HttpResponseOutput } from '../kernel/outbound';
import { CredentialRefreshError, credentialHeaders, sendWithCredential, type CredentialInUse } from './http';
import { imapLogin } from './imap';
import { redactSecrets } from './mask';
import { CREDENTIAL_TYPES, secretStrings, type CredentialValue, type ProviderType } from './types';

/**
 * Connection tests: one real check per type, through the outbound guard, within a time budget.
 * http types call the credential's `probeUrl`; smtp opens a session and authenticates
 * (nodemailer's verify); imap logs in and out; providers call their identity endpoint at the
 * configured base URL; llm lists the models of its OpenAI-compatible endpoint.
 */
export type CredentialTestStatus =
  /** The service accepted the credential. */
  | 'passed'
  /** The service answered and refused the credential (401, 403, a refused login). */
  | 'auth_failed'
  /** The service answered with another error. */
  | 'failed'
  /** No connection (DNS, refused, reset, TLS). */
  | 'unreachable'
  | 'timeout'
  /** The outbound guard refused the address. */
  | 'refused'
  /** Nothing to call: no probe URL or base URL is configured. */
  | 'not_configured'
  /** The stored value cannot be decrypted (tampered, moved to another row, or its key is gone). */
  | 'unreadable'
  /** A workflow names a credential the workspace does not have. */
  | 'missing';

export interface CredentialTestResult {
  ok: boolean;
  status: CredentialTestStatus;
  message: string;
  checkedAt: string;
  latencyMs: number;
}

export interface CheckOptions {
  allowPrivateNetworks: boolean;
  timeoutMs: number;
  /** Base URLs of the providers (CREDENTIAL_PROVIDER_BASE_URLS); a credential's own baseUrl wins. */
  providerBaseUrls: Record<string, string>;
  /** Stores a refreshed OAuth2 value. */
  persistRefreshed?: (value: CredentialValue) => Promise<void>;
}

type Outcome = { ok: boolean; status: CredentialTestStatus; message: string };

/** A result without a call (missing, unreadable). */
export function immediateResult(status: CredentialTestStatus, message: string): CredentialTestResult {
  return { ok: false, status, message, checkedAt: new Date().toISOString(), latencyMs: 0 };
}

/** Tests a decrypted credential; never throws for the service's answers and never echoes a secret. */
export async function checkCredential(cred: CredentialInUse, opts: CheckOptions): Promise<CredentialTestResult> {
  const started = performance.now();
  const checkedAt = new Date().toISOString();
  let outcome: Outcome;
  try {
    outcome = await check(cred, opts);
  } catch (err) {
    outcome = failureOutcome(err);
  }
  return {
    ok: outcome.ok,
    status: outcome.status,
    message: redactSecrets(outcome.message, secretStrings(cred.value)),
    checkedAt,
    latencyMs: Math.round(performance.now() - started),
  };
}

function failureOutcome(err: unknown): Outcome {
  if (err instanceof OutboundError) {
    const status: CredentialTestStatus =
      err.code === 'timeout' ? 'timeout' : err.code === 'refused' ? 'refused' : err.code === 'network' ? 'unreachable' : 'failed';
    return { ok: false, status, message: err.message };
  }
  if (err instanceof CredentialRefreshError) return { ok: false, status: 'auth_failed', message: err.message };
  return { ok: false, status: 'failed', message: `The check failed: ${(err as Error)?.message ?? String(err)}` };
}

async function check(cred: CredentialInUse, opts: CheckOptions): Promise<Outcome> {
  const family = CREDENTIAL_TYPES[cred.type]?.family;
  switch (family) {
    case 'http':
      return checkHttp(cred, opts);
    case 'smtp':
      return checkSmtp(cred.value, opts);
    case 'imap':
      return checkImap(cred.value, opts);
    case 'provider':
      return checkProvider(cred, opts);
    case 'llm':
      return checkLlm(cred, opts);
    default:
      return { ok: false, status: 'failed', message: `Credentials of type ${cred.type} cannot be tested.` };
  }
}

function byStatus(res: HttpResponseOutput, what: string): Outcome {
  if (res.status >= 200 && res.status < 300) return { ok: true, status: 'passed', message: `${what} answered HTTP ${res.status}.` };
  if (res.status === 401 || res.status === 403)
    return { ok: false, status: 'auth_failed', message: `${what} refused the credential: HTTP ${res.status}.` };
  return { ok: false, status: 'failed', message: `${what} answered HTTP ${res.status}.` };
}

async function checkHttp(cred: CredentialInUse, opts: CheckOptions): Promise<Outcome> {
  const probeUrl = cred.value.probeUrl;
  if (typeof probeUrl !== 'string') {
    return {
      ok: false,
      status: 'not_configured',
      message: 'This credential has no probeUrl: add one to its value to say where the test sends it.',
    };
  }
  const res = await sendWithCredential(
    { method: 'GET', url: probeUrl, headers: { accept: 'application/json' }, timeoutMs: opts.timeoutMs },
    cred,
    {
      allowPrivateNetworks: opts.allowPrivateNetworks,
      persistRefreshed: opts.persistRefreshed,
    },
  );
  const outcome = byStatus(res, 'The probe URL');
  return res.refreshed && outcome.ok ? { ...outcome, message: `${outcome.message} The access token was refreshed.` } : outcome;
}

/** nodemailer, loaded with the first SMTP connection (services/kernel/lazyModule.ts). */
const loadNodemailer = lazyModule(async () => (await import('nodemailer')).default);

/** A nodemailer transport for an smtp credential, connecting to `address` (the guarded resolution of its host). */
export async function smtpTransport(value: CredentialValue, address: string, timeoutMs: number) {
  const host = String(value.host);
  const nodemailer = await loadNodemailer();
  return nodemailer.createTransport({
    host: address,
    port: Number(value.port),
    secure: value.secure === true,
    auth: { user: String(value.username), pass: String(value.password) },
    tls: net.isIP(host) ? {} : { servername: host },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
    debug: false,
  });
}

async function checkSmtp(value: CredentialValue, opts: CheckOptions): Promise<Outcome> {
  const host = String(value.host);
  const { address } = await resolveGuardedHost(host, { allowPrivateNetworks: opts.allowPrivateNetworks });
  const transport = await smtpTransport(value, address, opts.timeoutMs);
  try {
    await withTimeout(transport.verify(), opts.timeoutMs, 'The SMTP server');
    return { ok: true, status: 'passed', message: 'Authenticated with the SMTP server.' };
  } catch (err) {
    if (err instanceof OutboundError) throw err;
    const e = err as { code?: string; responseCode?: number; message?: string };
    if (e.code === 'EAUTH' || e.responseCode === 535)
      return {
        ok: false,
        status: 'auth_failed',
        message: `The SMTP server refused the login${e.responseCode ? ` (${e.responseCode})` : ''}.`,
      };
    if (e.code === 'ETIMEDOUT')
      return { ok: false, status: 'timeout', message: `The SMTP server did not answer within ${opts.timeoutMs} ms.` };
    if (e.code === 'ECONNECTION' || e.code === 'ESOCKET' || e.code === 'EDNS' || e.code === 'ECONNREFUSED') {
      return { ok: false, status: 'unreachable', message: `Could not reach the SMTP server: ${e.message ?? e.code}` };
    }
    return { ok: false, status: 'failed', message: `The SMTP check failed: ${e.message ?? e.code ?? 'unknown error'}` };
  } finally {
    transport.close();
  }
}

async function checkImap(value: CredentialValue, opts: CheckOptions): Promise<Outcome> {
  const host = String(value.host);
  const { address } = await resolveGuardedHost(host, { allowPrivateNetworks: opts.allowPrivateNetworks });
  const outcome = await imapLogin({
    address,
    servername: host,
    port: Number(value.port),
    secure: value.secure === true,
    username: String(value.username),
    password: String(value.password),
    timeoutMs: opts.timeoutMs,
  });
  if (outcome.ok) return { ok: true, status: 'passed', message: outcome.message };
  const status: CredentialTestStatus =
    outcome.kind === 'auth'
      ? 'auth_failed'
      : outcome.kind === 'timeout'
        ? 'timeout'
        : outcome.kind === 'network'
          ? 'unreachable'
          : 'failed';
  return { ok: false, status, message: outcome.message };
}

/**
 * Each provider's identity endpoint, relative to its API base URL (which carries any version
 * prefix), and how to read its answer. The chat API answers 200 with `{ ok: false, error }`
 * for a bad token, so its body decides.
 */
const IDENTITY: Record<ProviderType, { method: 'GET' | 'POST'; path: string; judge?: (body: unknown) => Outcome | null }> = {
  mailA: { method: 'GET', path: 'users/me/profile' },
  mailB: { method: 'GET', path: 'me' },
  drive: { method: 'GET', path: 'about?fields=user' },
  wiki: { method: 'GET', path: 'rest/api/user/current' },
  chat: {
    method: 'POST',
    path: 'auth.test',
    judge: (body) => {
      const b = (body ?? {}) as { ok?: unknown; error?: unknown };
      if (b.ok === true) return null;
      const error = typeof b.error === 'string' ? b.error.slice(0, 100) : 'unknown_error';
      const auth = ['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'token_expired'].includes(error);
      return { ok: false, status: auth ? 'auth_failed' : 'failed', message: `The chat identity endpoint answered ok: false (${error}).` };
    },
  },
  repo: { method: 'GET', path: 'user' },
  ci: { method: 'GET', path: 'me/api/json' },
  errtracker: { method: 'GET', path: '' },
};

function joinUrl(base: string, path: string): string {
  return new URL(path, base.endsWith('/') ? base : `${base}/`).toString();
}

async function checkProvider(cred: CredentialInUse, opts: CheckOptions): Promise<Outcome> {
  const provider = cred.type as ProviderType;
  if (cred.value.serviceAccountKey !== undefined) {
    return {
      ok: false,
      status: 'not_configured',
      message:
        'A service-account key acts only for a delegated user: bind it to a mailer route with PATCH /api/v1/mailer/routes/{id}/google-dwd; its polls and replies use it.',
    };
  }
  const base = typeof cred.value.baseUrl === 'string' ? cred.value.baseUrl : opts.providerBaseUrls[provider];
  if (!base)
    return {
      ok: false,
      status: 'not_configured',
      message: `No base URL is configured for ${provider}: set baseUrl in the credential or ${provider}=… in CREDENTIAL_PROVIDER_BASE_URLS.`,
    };
  const identity = IDENTITY[provider];
  const res = await httpRequest(
    {
      method: identity.method,
      url: joinUrl(base, identity.path),
      headers: { ...credentialHeaders(cred), accept: 'application/json' },
      timeoutMs: opts.timeoutMs,
    },
    { allowPrivateNetworks: opts.allowPrivateNetworks, sensitiveHeaders: ['authorization'] },
  );
  const outcome = byStatus(res, `The ${provider} identity endpoint`);
  return (outcome.ok && identity.judge?.(res.body)) || outcome;
}

async function checkLlm(cred: CredentialInUse, opts: CheckOptions): Promise<Outcome> {
  const model = String(cred.value.model);
  const res = await httpRequest(
    {
      method: 'GET',
      url: joinUrl(String(cred.value.baseUrl), 'models'),
      headers: { ...credentialHeaders(cred), accept: 'application/json' },
      timeoutMs: opts.timeoutMs,
    },
    { allowPrivateNetworks: opts.allowPrivateNetworks, sensitiveHeaders: ['authorization'] },
  );
  const outcome = byStatus(res, 'The model endpoint');
  if (!outcome.ok) return outcome;
  const data = (res.body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return { ...outcome, message: `${outcome.message} It lists no models, so model ${model} was not checked.` };
  const listed = data.some((m) => (m as { id?: unknown })?.id === model);
  return listed
    ? { ok: true, status: 'passed', message: `The model endpoint accepted the key and offers model ${model}.` }
    : { ok: false, status: 'failed', message: `The model endpoint accepted the key but does not offer model ${model}.` };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} did not answer within ${ms} ms.`), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
