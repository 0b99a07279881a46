import dns from 'node:dns';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * The one guard for outbound HTTP made on behalf of workflow nodes (SSRF protection), and the
 * request helper that applies it to every hop.
 *
 * DNS-rebinding caveat: the guard resolves the hostname and checks every address, then `fetch`
 * resolves it again to connect. A hostile DNS server could answer "public" to the first lookup
 * and "private" to the second. We accept that for now (short TTL games need an attacker-run
 * authoritative server, and IP literals and redirects are fully checked); closing it needs a
 * connect-time check (a custom undici dispatcher with a `lookup` that validates, or pinning the
 * checked address), which is the planned follow-up.
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

type V4Range = [base: number, prefix: number, label: string];

const v4 = (dotted: string): number => dotted.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);

const BLOCKED_V4: V4Range[] = [
  [v4('0.0.0.0'), 8, 'unspecified/"this network"'],
  [v4('10.0.0.0'), 8, 'private'],
  [v4('100.64.0.0'), 10, 'carrier-grade NAT'],
  [v4('127.0.0.0'), 8, 'loopback'],
  [v4('169.254.0.0'), 16, 'link-local'],
  [v4('172.16.0.0'), 12, 'private'],
  [v4('192.0.0.0'), 24, 'IETF protocol assignments'],
  [v4('192.168.0.0'), 16, 'private'],
  [v4('198.18.0.0'), 15, 'benchmarking'],
  [v4('224.0.0.0'), 4, 'multicast'],
  [v4('240.0.0.0'), 4, 'reserved/broadcast'],
];

function classifyV4(addr: number): string | undefined {
  for (const [base, prefix, label] of BLOCKED_V4) {
    const size = 2 ** (32 - prefix);
    if (addr >= base && addr < base + size) return label;
  }
  return undefined;
}

/** Parses an IPv6 literal (zone id allowed, embedded dotted quad allowed) into eight 16-bit groups. */
function parseV6(text: string): number[] | undefined {
  let s = text.split('%')[0].toLowerCase();
  const dotted = s.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    if (net.isIPv4(dotted[1]) === false) return undefined;
    const n = v4(dotted[1]);
    s = s.slice(0, -dotted[1].length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 0) return undefined;
  const groups = [...head, ...Array<number>(Math.max(fill, 0)).fill(0), ...tail];
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return undefined;
  return groups;
}

function classifyV6(groups: number[]): string | undefined {
  const embeddedV4 = (hi: number, lo: number) => hi * 65536 + lo;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 8)) return 'unspecified';
  if (zeros(0, 7) && groups[7] === 1) return 'loopback';
  // IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const compatible = zeros(0, 6);
  const translated = zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6);
  if (mapped || compatible || translated || nat64) {
    const inner = classifyV4(embeddedV4(groups[6], groups[7]));
    return inner ? `${inner} (IPv4 embedded in IPv6)` : undefined;
  }
  if (groups[0] === 0x2002) {
    const inner = classifyV4(embeddedV4(groups[1], groups[2]));
    return inner ? `${inner} (6to4)` : undefined;
  }
  if ((groups[0] & 0xffc0) === 0xfe80) return 'link-local';
  if ((groups[0] & 0xffc0) === 0xfec0) return 'site-local';
  if ((groups[0] & 0xfe00) === 0xfc00) return 'unique-local';
  if ((groups[0] & 0xff00) === 0xff00) return 'multicast';
  if (groups[0] === 0x100 && zeros(1, 4)) return 'discard-only';
  return undefined;
}

/**
 * Why an IP address must not be contacted from a node (`'loopback'`, `'private'`, …), or
 * undefined when it is a public unicast address. Unparseable input counts as blocked.
 */
export function blockedAddressReason(ip: string): string | undefined {
  if (net.isIPv4(ip)) return classifyV4(v4(ip));
  const groups = net.isIPv6(ip.split('%')[0]) ? parseV6(ip) : undefined;
  return groups ? classifyV6(groups) : 'not an IP address';
}

// ---------------------------------------------------------------------------------------------
// The guard

/**
 * Parses `url` and refuses it unless it is http(s) and — when `allowPrivateNetworks` is false —
 * every address its host resolves to (`dns.promises.lookup(host, { all: true })`) is public:
 * not private, loopback, link-local, unique-local, unspecified, CGNAT, multicast, reserved,
 * nor an IPv4-in-IPv6 form of those. `localhost` and `*.localhost` are refused without a lookup.
 * Returns the parsed URL. Throws `OutboundError` `refused` (or `network` when DNS fails).
 *
 * Caveat: see the DNS-rebinding note at the top of this file; `fetch` resolves again.
 */
export async function assertOutboundUrlAllowed(url: string, opts: { allowPrivateNetworks: boolean }): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OutboundError('refused', `Outbound request refused: "${String(url).slice(0, 200)}" is not a valid URL.`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new OutboundError('refused', `Outbound request refused: only http and https URLs are allowed (got ${parsed.protocol.replace(/:$/, '')}).`);
  }
  if (parsed.username || parsed.password) {
    throw new OutboundError('refused', 'Outbound request refused: credentials in the URL are not allowed; send an Authorization header instead.');
  }
  if (opts.allowPrivateNetworks) return parsed;

  // WHATWG URL already canonicalises odd IPv4 spellings (0x7f.1, 2130706433) to dotted form.
  const host = parsed.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  const refuse = (what: string, reason: string) =>
    new OutboundError('refused', `Outbound request refused: ${what} is a ${reason} address; requests to internal networks are not allowed.`);

  if (host === 'localhost' || host.endsWith('.localhost')) throw refuse(`host "${host}"`, 'loopback');
  if (net.isIP(host)) {
    const reason = blockedAddressReason(host);
    if (reason) throw refuse(host, reason);
    return parsed;
  }

  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new OutboundError('network', `Could not resolve host "${host}" (${code}).`);
  }
  if (addresses.length === 0) throw new OutboundError('network', `Could not resolve host "${host}" (no addresses).`);
  for (const { address } of addresses) {
    const reason = blockedAddressReason(address);
    if (reason) throw refuse(`host "${host}" resolves to ${address}, which`, reason);
  }
  return parsed;
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
}

export interface HttpRequestOptions {
  allowPrivateNetworks: boolean;
  /** Largest accepted response body. Default 5 MiB. */
  maxResponseBytes?: number;
  /** Aborts the request (e.g. the activity's cancellation signal); the abort reason is rethrown. */
  signal?: AbortSignal;
  /**
   * Test seam: replaces the per-hop guard (default: `assertOutboundUrlAllowed` with
   * `allowPrivateNetworks`). Production code must not set it.
   */
  guard?: (url: string, hop: number) => Promise<URL>;
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
  const mime = contentType.split(';')[0].trim().toLowerCase();
  return mime === 'application/json' || mime.endsWith('+json') || mime === 'text/json';
}

async function readBody(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new OutboundError('too_large', `Response body is larger than the limit of ${maxBytes} bytes.`);
  }
  if (!res.body) return '';
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
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message ?? (err as Error).message;
  return detail ? `Request failed: ${detail}.` : 'Request failed.';
}

/**
 * Performs one HTTP exchange for a node, following up to 5 redirects itself and running the
 * guard on the first URL and on every redirect target (a public URL cannot bounce to
 * 127.0.0.1). Non-2xx statuses are returned, not thrown. On 303 (and 301/302 after a POST) the
 * follow-up is a body-less GET; Authorization and Cookie headers are dropped when a redirect
 * changes origin.
 *
 * Throws `OutboundError`: `refused` (guard), `timeout` (the whole exchange exceeded
 * `timeoutMs`), `network` (connection/DNS failures), `too_large` (body over the cap),
 * `too_many_redirects`, `invalid_request` (bad method, header or a body on GET/HEAD).
 * Caveats: DNS rebinding (see top of file); response bodies are decoded as UTF-8.
 */
export async function httpRequest(req: HttpRequestInput, opts: HttpRequestOptions): Promise<HttpResponseOutput> {
  const started = performance.now();
  const maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new OutboundError('invalid_request', 'timeoutMs must be a positive number.');
  let method = String(req.method ?? '').toUpperCase();
  if (!TOKEN.test(method)) throw new OutboundError('invalid_request', `Invalid HTTP method "${String(req.method).slice(0, 50)}".`);
  if (method === 'CONNECT' || method === 'TRACE' || method === 'TRACK') throw new OutboundError('invalid_request', `HTTP method ${method} is not allowed.`);

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

  const guard = opts.guard ?? ((url: string) => assertOutboundUrlAllowed(url, { allowPrivateNetworks: opts.allowPrivateNetworks }));
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
      res = await fetch(url, { method, headers, body, redirect: 'manual', signal });
    } catch (err) {
      if (signal.aborted) onAbort(err);
      if (err instanceof TypeError && !(err as { cause?: unknown }).cause) {
        throw new OutboundError('invalid_request', `Invalid request: ${err.message}`);
      }
      throw new OutboundError('network', describeFetchError(err));
    }

    const location = res.headers.get('location');
    if (REDIRECT_STATUSES.has(res.status) && location) {
      await res.body?.cancel().catch(() => undefined);
      if (hop >= MAX_REDIRECTS) throw new OutboundError('too_many_redirects', `Too many redirects (more than ${MAX_REDIRECTS}).`);
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
      }
      url = next;
      continue;
    }

    let text: string;
    try {
      text = method === 'HEAD' ? '' : await readBody(res, maxBytes);
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      if (signal.aborted) onAbort(err);
      throw new OutboundError('network', describeFetchError(err));
    }

    const outHeaders: Record<string, string> = {};
    res.headers.forEach((value, key) => {
      outHeaders[key] = key === 'set-cookie' && outHeaders[key] ? `${outHeaders[key]}, ${value}` : value;
    });
    let parsedBody: unknown = text;
    if (isJsonContentType(res.headers.get('content-type'))) {
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
