import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, fetch, Headers, type Response } from 'undici';
import { performance } from 'node:perf_hooks';

/**
 * The one guard for outbound HTTP made on behalf of workflow nodes (SSRF protection), and the
 * request helper that applies it to every hop.
 *
 * DNS rebinding: `httpRequest` resolves a hostname once, at connect time, inside the undici
 * dispatcher's `lookup`; it checks every resolved address there and connects to the checked
 * addresses, so a second, different DNS answer is never used. IP literals are checked before
 * the request, and every redirect target goes through the same guard and lookup.
 */
export type OutboundErrorCode = 'refused' | 'timeout' | 'network' | 'too_large' | 'too_many_redirects' | 'invalid_request';

/** Typed failure of the guard or of `httpRequest`; `code` says which. Messages are user-readable. */
export class OutboundError extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

const MAX_REDIRECTS = 5;
const DEFAULT_MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

// ---------------------------------------------------------------------------------------------
// Address classification

// ipaddr.js range names → the words our refusals use. Only `unicast` is public.
const RANGE_LABELS: Record<string, string> = {
  unspecified: 'unspecified/"this network"',
  private: 'private',
  carrierGradeNat: 'carrier-grade NAT',
  loopback: 'loopback',
  linkLocal: 'link-local',
  benchmarking: 'benchmarking',
  multicast: 'multicast',
  broadcast: 'reserved/broadcast',
  reserved: 'reserved',
  uniqueLocal: 'unique-local',
  deprecatedSiteLocal: 'site-local',
  discard: 'discard-only',
};

/** IPv6 forms that carry an IPv4 address, and where: [ipaddr.js range, first 16-bit group of the IPv4]. */
const EMBEDDED_V4: Record<string, { at: number; label: string }> = {
  ipv4Mapped: { at: 6, label: 'IPv4 embedded in IPv6' },
  rfc6145: { at: 6, label: 'IPv4 embedded in IPv6' },
  rfc6052: { at: 6, label: 'IPv4 embedded in IPv6' },
  '6to4': { at: 1, label: '6to4' },
};

function classify(addr: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    const parts = v6.parts;
    // IPv4-compatible ::a.b.c.d is deprecated and ipaddr.js calls it unicast; treat it like the others.
    const compatible = parts.slice(0, 6).every((g) => g === 0) && v6.range() === 'unicast';
    const embedded = compatible ? { at: 6, label: 'IPv4 embedded in IPv6' } : EMBEDDED_V4[v6.range()];
    if (embedded) {
      // An IPv6 address has eight parts; `at` is at most 6.
      const [hi = 0, lo = 0] = [parts[embedded.at], parts[embedded.at + 1]];
      const inner = classify(new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]));
      return inner ? `${inner} (${embedded.label})` : undefined;
    }
  }
  const range = addr.range();
  return range === 'unicast' ? undefined : (RANGE_LABELS[range] ?? range);
}

/**
 * Why an IP address must not be contacted from a node (`'loopback'`, `'private'`, …), or
 * undefined when it is a public unicast address (ipaddr.js decides the ranges). Unparseable
 * input counts as blocked.
 */
export function blockedAddressReason(ip: string): string | undefined {
  if (!ipaddr.isValid(ip)) return 'not an IP address';
  return classify(ipaddr.parse(ip));
}

// ---------------------------------------------------------------------------------------------
// The guard

/** Resolves a hostname to all its addresses (default: `dns.promises.lookup`, all, verbatim). */
export type HostResolver = (hostname: string) => Promise<dns.LookupAddress[]>;

const systemResolver: HostResolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

const refusal = (what: string, reason: string) =>
  new OutboundError('refused', `Outbound request refused: ${what} is a ${reason} address; requests to internal networks are not allowed.`);

/**
 * `httpRequest`'s check of each hop before connecting: everything about `url` that needs no
 * DNS (http(s) only, no credentials and, when private networks are not allowed, no
 * `localhost`/`*.localhost` and no blocked IP literal). Returns the parsed URL and the bare
 * host still to be resolved and checked at connect time (null when there is none).
 */
export function checkUrlWithoutDns(url: string, allowPrivateNetworks: boolean): { parsed: URL; hostToResolve: string | null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OutboundError('refused', `Outbound request refused: "${String(url).slice(0, 200)}" is not a valid URL.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new OutboundError(
      'refused',
      `Outbound request refused: only http and https URLs are allowed (got ${parsed.protocol.replace(/:$/, '')}).`,
    );
  }
  if (parsed.username || parsed.password) {
    throw new OutboundError(
      'refused',
      'Outbound request refused: credentials in the URL are not allowed; send an Authorization header instead.',
    );
  }
  if (allowPrivateNetworks) return { parsed, hostToResolve: null };

  // WHATWG URL already canonicalises odd IPv4 spellings (0x7f.1, 2130706433) to dotted form.
  const host = parsed.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) throw refusal(`host "${host}"`, 'loopback');
  if (net.isIP(host)) {
    const reason = blockedAddressReason(host);
    if (reason) throw refusal(host, reason);
    return { parsed, hostToResolve: null };
  }
  return { parsed, hostToResolve: host };
}

/** Resolves `host` and refuses it unless every address is public. Throws `refused` or `network`. */
async function resolvePublicAddresses(host: string, resolve: HostResolver): Promise<dns.LookupAddress[]> {
  let addresses: dns.LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new OutboundError('network', `Could not resolve host "${host}" (${code}).`);
  }
  if (addresses.length === 0) throw new OutboundError('network', `Could not resolve host "${host}" (no addresses).`);
  for (const { address } of addresses) {
    const reason = blockedAddressReason(address);
    if (reason) throw refusal(`host "${host}" resolves to ${address}, which`, reason);
  }
  return addresses;
}

/**
 * Parses `url` and refuses it unless it is http(s) and — when `allowPrivateNetworks` is false —
 * every address its host resolves to is public: not private, loopback, link-local,
 * unique-local, unspecified, CGNAT, multicast, reserved, nor an IPv4-in-IPv6 form of those.
 * `localhost` and `*.localhost` are refused without a lookup. Returns the parsed URL. Throws
 * `OutboundError` `refused` (or `network` when DNS fails).
 *
 * Caveat: a check only; `httpRequest` does not call it but resolves once at connect time and
 * connects to the addresses it checked.
 */
export async function assertOutboundUrlAllowed(url: string, opts: { allowPrivateNetworks: boolean; resolve?: HostResolver }): Promise<URL> {
  const { parsed, hostToResolve } = checkUrlWithoutDns(url, opts.allowPrivateNetworks);
  if (hostToResolve) await resolvePublicAddresses(hostToResolve, opts.resolve ?? systemResolver);
  return parsed;
}

/**
 * The guard for connections that are not HTTP (SMTP, IMAP): resolves `host` once and returns
 * the address to connect to, refusing (unless private networks are allowed) `localhost`,
 * blocked IP literals and hostnames with any non-public address. Connect to the returned
 * address (with the host name as TLS servername) so a second DNS answer is never used.
 */
export async function resolveGuardedHost(
  host: string,
  opts: { allowPrivateNetworks: boolean; resolve?: HostResolver },
): Promise<dns.LookupAddress> {
  const bare = host
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (net.isIP(bare)) {
    const reason = opts.allowPrivateNetworks ? undefined : blockedAddressReason(bare);
    if (reason) throw refusal(bare, reason);
    return { address: bare, family: net.isIP(bare) };
  }
  if (!opts.allowPrivateNetworks && (bare === 'localhost' || bare.endsWith('.localhost'))) throw refusal(`host "${bare}"`, 'loopback');
  const resolve = opts.resolve ?? systemResolver;
  if (opts.allowPrivateNetworks) {
    try {
      const [first] = await resolve(bare);
      if (first) return first;
    } catch (err) {
      throw new OutboundError('network', `Could not resolve host "${bare}" (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'}).`);
    }
    throw new OutboundError('network', `Could not resolve host "${bare}" (no addresses).`);
  }
  const [first] = await resolvePublicAddresses(bare, resolve);
  if (!first) throw new OutboundError('network', `Could not resolve host "${bare}" (no addresses).`);
  return first;
}

type LookupCallback = (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void;

const agents = new WeakMap<HostResolver, Map<boolean, Agent>>();

/**
 * The dispatcher `httpRequest` connects through: its `lookup` (called by net/tls for every
 * new connection to a hostname) resolves once with `resolve`, refuses blocked addresses unless
 * private networks are allowed, and hands the same addresses to the socket. Cached per
 * resolver and setting, so connections are pooled as with the global dispatcher.
 */
function connectGuardedAgent(resolve: HostResolver, allowPrivateNetworks: boolean): Agent {
  let bySetting = agents.get(resolve);
  if (!bySetting) agents.set(resolve, (bySetting = new Map()));
  let agent = bySetting.get(allowPrivateNetworks);
  if (!agent) {
    const lookup = (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
      const resolved = allowPrivateNetworks ? resolve(hostname) : resolvePublicAddresses(hostname, resolve);
      resolved.then(
        (all) => {
          const addresses = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
          const [first] = addresses;
          if (first === undefined)
            return callback(new OutboundError('network', `Could not resolve host "${hostname}" (no IPv${options.family} address).`), []);
          if (options.all) return callback(null, addresses);
          callback(null, first.address, first.family);
        },
        (err: Error) => callback(err, []),
      );
    };
    agent = new Agent({ connect: { lookup: lookup } });
    bySetting.set(allowPrivateNetworks, agent);
  }
  return agent;
}

// ---------------------------------------------------------------------------------------------
// The request helper

export type QueryValue = string | number | boolean | null | undefined;

export interface HttpRequestInput {
  method: string;
  url: string;
  headers?: Record<string, string>;
  /** Merged into the URL's query: a key given here replaces the same key in the URL; arrays repeat the key; null/undefined are skipped. */
  query?: Record<string, QueryValue | QueryValue[]>;
  /** Strings and bytes are sent as-is; any other value is sent as JSON (content-type set unless given). */
  body?: unknown;
  /** Budget for the whole exchange, redirects and body included. Default 30 s. */
  timeoutMs?: number;
  /** Redirects followed before failing with `too_many_redirects` (at most 5, the default); 0 returns the redirect answer itself. */
  maxRedirects?: number;
  /** `text`: the body is UTF-8 text even when the answer says it is JSON. Default `auto`. */
  bodyAs?: 'auto' | 'text';
}

export interface HttpRequestOptions {
  allowPrivateNetworks: boolean;
  /** Largest accepted response body. Default 5 MiB. */
  maxResponseBytes?: number;
  /** `bytes`: the body is returned as a Buffer, undecoded (downloads of binary content). Default: JSON or UTF-8 text. */
  responseType?: 'text' | 'bytes';
  /** Aborts the request (e.g. the activity's cancellation signal); the abort reason is rethrown. */
  signal?: AbortSignal;
  /**
   * Test seam: replaces the per-hop URL check made before connecting (default: scheme,
   * credentials, localhost and IP literals; hostnames are checked at connect time). Production
   * code must not set it.
   */
  guard?: (url: string, hop: number) => Promise<URL>;
  /**
   * Test seam: replaces DNS resolution at connect time (default: the system resolver). The
   * checks on the resolved addresses stay the same. Production code must not set it.
   */
  resolveHost?: HostResolver;
  /**
   * Headers that carry secrets besides Authorization and Cookie (an API key header): dropped
   * like those when a redirect changes origin.
   */
  sensitiveHeaders?: string[];
}

export interface HttpResponseOutput {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the content type is JSON (falls back to text if it does not parse), else text. */
  body: unknown;
  durationMs: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function buildUrl(url: URL, query: HttpRequestInput['query']): URL {
  if (!query) return url;
  const out = new URL(url);
  for (const [key, value] of Object.entries(query)) {
    out.searchParams.delete(key);
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v !== null && v !== undefined) out.searchParams.append(key, String(v));
    }
  }
  return out;
}

function encodeBody(body: unknown, headers: Headers): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return body;
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return JSON.stringify(body);
}

function isJsonContentType(contentType: string | null): boolean {
  if (!contentType) return false;
  const [type = ''] = contentType.split(';');
  const mime = type.trim().toLowerCase();
  return mime === 'application/json' || mime.endsWith('+json') || mime === 'text/json';
}

async function readBody(res: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new OutboundError('too_large', `Response body is larger than the limit of ${maxBytes} bytes.`);
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new OutboundError('too_large', `Response body is larger than the limit of ${maxBytes} bytes.`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (err as Error).message;
  return detail ? `Request failed: ${detail}.` : 'Request failed.';
}

/**
 * Performs one HTTP exchange for a node, following up to 5 redirects itself and running the
 * guard on the first URL and on every redirect target (a public URL cannot bounce to
 * 127.0.0.1); hostnames are resolved once per connection and checked at connect time. Non-2xx statuses are returned, not thrown. On 303 (and 301/302 after a POST) the
 * follow-up is a body-less GET; Authorization and Cookie headers are dropped when a redirect
 * changes origin.
 *
 * Throws `OutboundError`: `refused` (guard), `timeout` (the whole exchange exceeded
 * `timeoutMs`), `network` (connection/DNS failures), `too_large` (body over the cap),
 * `too_many_redirects`, `invalid_request` (bad method, header or a body on GET/HEAD).
 * Caveat: response bodies are decoded as UTF-8.
 */
export async function httpRequest(req: HttpRequestInput, opts: HttpRequestOptions): Promise<HttpResponseOutput> {
  const started = performance.now();
  const maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxRedirects = Math.max(0, Math.min(MAX_REDIRECTS, Math.floor(req.maxRedirects ?? MAX_REDIRECTS)));
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new OutboundError('invalid_request', 'timeoutMs must be a positive number.');
  let method = String(req.method ?? '').toUpperCase();
  if (!TOKEN.test(method)) throw new OutboundError('invalid_request', `Invalid HTTP method "${String(req.method).slice(0, 50)}".`);
  if (method === 'CONNECT' || method === 'TRACE' || method === 'TRACK')
    throw new OutboundError('invalid_request', `HTTP method ${method} is not allowed.`);

  let headers: Headers;
  try {
    headers = new Headers(req.headers ?? {});
  } catch (err) {
    throw new OutboundError('invalid_request', `Invalid request header: ${(err as Error).message}`);
  }
  let body = encodeBody(req.body, headers);
  if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
    throw new OutboundError('invalid_request', `A ${method} request cannot have a body.`);
  }

  const guard = opts.guard ?? (async (url: string) => checkUrlWithoutDns(url, opts.allowPrivateNetworks).parsed);
  const dispatcher = connectGuardedAgent(opts.resolveHost ?? systemResolver, opts.allowPrivateNetworks);
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  const onAbort = (err: unknown): never => {
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (timeout.aborted) throw new OutboundError('timeout', `Request timed out after ${timeoutMs} ms.`);
    throw err;
  };

  let url = buildUrl(await guard(req.url, 0), req.query);
  for (let hop = 0; ; hop++) {
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body, redirect: 'manual', signal, dispatcher });
    } catch (err) {
      if (signal.aborted) onAbort(err);
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof OutboundError) throw cause; // refused (or unresolvable) at connect time
      if (err instanceof TypeError && !(err as { cause?: unknown }).cause) {
        throw new OutboundError('invalid_request', `Invalid request: ${err.message}`);
      }
      throw new OutboundError('network', describeFetchError(err));
    }

    const location = res.headers.get('location');
    if (REDIRECT_STATUSES.has(res.status) && location && maxRedirects > 0) {
      await res.body?.cancel().catch(() => undefined);
      if (hop >= maxRedirects) throw new OutboundError('too_many_redirects', `Too many redirects (more than ${maxRedirects}).`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new OutboundError('network', `Redirect to an invalid location "${location.slice(0, 200)}".`);
      }
      next = await guard(next.toString(), hop + 1);
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        if (method !== 'HEAD') method = 'GET';
        body = undefined;
        headers.delete('content-type');
        headers.delete('content-length');
      }
      if (next.origin !== url.origin) {
        headers.delete('authorization');
        headers.delete('cookie');
        headers.delete('proxy-authorization');
        for (const name of opts.sensitiveHeaders ?? []) headers.delete(name);
      }
      url = next;
      continue;
    }

    let bytes: Buffer;
    try {
      bytes = method === 'HEAD' ? Buffer.alloc(0) : await readBody(res, maxBytes);
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      if (signal.aborted) onAbort(err);
      throw new OutboundError('network', describeFetchError(err));
    }

    const outHeaders: Record<string, string> = {};
    res.headers.forEach((value, key) => {
      outHeaders[key] = key === 'set-cookie' && outHeaders[key] ? `${outHeaders[key]}, ${value}` : value;
    });
    if (opts.responseType === 'bytes')
      return { status: res.status, headers: outHeaders, body: bytes, durationMs: Math.round(performance.now() - started) };
    const text = bytes.toString('utf8');
    let parsedBody: unknown = text;
    if (req.bodyAs !== 'text' && isJsonContentType(res.headers.get('content-type'))) {
      if (text.trim() === '') parsedBody = null;
      else {
        try {
          parsedBody = JSON.parse(text);
        } catch {
          parsedBody = text;
        }
      }
    }
    return { status: res.status, headers: outHeaders, body: parsedBody, durationMs: Math.round(performance.now() - started) };
  }
}
