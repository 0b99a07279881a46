import { invalidInput } from '../kernel/errors';
import { CREDENTIAL_TYPES, type CredentialValue } from './types';

/**
 * Where a credential may be sent (issue 27 item 5). A credential is bound to the hosts given
 * at creation (`allowedHosts`) plus the hosts its own value names (`baseUrl`, `probeUrl`, the
 * smtp/imap `host`) and, for provider types, the base URLs the deployment configures for that
 * provider. Hosts named inside the value were chosen by whoever knew the secret, and the
 * deployment's are the operator's, so only `allowedHosts` needs guarding: changing it (or the
 * type) requires the secret again (crud.ts).
 *
 * A pattern is a host name or IP address (IPv6 in brackets), optionally with `:port`, or
 * `*.example.com` for any subdomain of example.com at any depth (not example.com itself). A
 * pattern without a port matches every port of that host.
 */

export const MAX_ALLOWED_HOSTS = 50;

/** Base URLs the deployment configures per provider type (a credential's own baseUrl wins where it has one). */
export type ProviderUrls = Record<string, string[]>;

interface HostPattern {
  /** Lowercase host, IPv6 in brackets; for a wildcard the suffix without `*.`. */
  host: string;
  wildcard: boolean;
  port: number | null;
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

function normalizeHostName(raw: string): string | null {
  let host: string;
  try {
    // The URL parser lowercases, converts IDN to punycode and canonicalises IPv4 forms.
    host = new URL(`http://${raw}/`).hostname;
  } catch {
    return null;
  }
  if (host.startsWith('[')) return host;
  host = host.replace(/\.$/, '');
  return host.length > 0 && host.length <= 253 && host.split('.').every((l) => LABEL.test(l)) ? host : null;
}

/** Parses one pattern; null when it is not a host, `host:port` or `*.domain`. */
export function parseHostPattern(raw: string): HostPattern | null {
  const text = raw.trim().toLowerCase();
  if (text.length === 0 || text.length > 260 || /[/?#@%\s\\]/.test(text)) return null;
  const m = /^(\*\.)?(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(text);
  if (!m) return null;
  const port = m[3] === undefined ? null : Number(m[3]);
  if (port !== null && (port < 1 || port > 65535)) return null;
  const host = normalizeHostName(m[2] ?? ''); // group 2 is not optional: set whenever m is
  if (!host) return null;
  const wildcard = m[1] !== undefined;
  // `*.com` would bind a credential to a whole top-level domain: a wildcard needs two labels under it.
  if (wildcard && (host.startsWith('[') || /^[\d.]+$/.test(host) || host.split('.').length < 2)) return null;
  return { host, wildcard, port };
}

function formatPattern(p: HostPattern): string {
  return `${p.wildcard ? '*.' : ''}${p.host}${p.port === null ? '' : `:${p.port}`}`;
}

/**
 * Validates and normalises `allowedHosts` from a request: a 400 naming the first bad entry.
 * Returns the canonical, de-duplicated list in the order given.
 */
export function normalizeAllowedHosts(raw: string[]): string[] {
  if (raw.length > MAX_ALLOWED_HOSTS) throw invalidInput(`allowedHosts: at most ${MAX_ALLOWED_HOSTS} hosts.`);
  const out: string[] = [];
  for (const [i, entry] of raw.entries()) {
    const p = parseHostPattern(entry);
    if (!p) {
      throw invalidInput(
        `allowedHosts[${i}]: "${entry.slice(0, 100)}" is not a host name, an IP address, host:port or *.domain (no scheme, path or "*" alone).`,
        {
          details: { issues: [{ path: `allowedHosts.${i}`, message: 'must be a host name, an IP address, host:port or *.domain' }] },
        },
      );
    }
    const canonical = formatPattern(p);
    if (!out.includes(canonical)) out.push(canonical);
  }
  return out;
}

/** The pattern of a URL's host: with its port when the URL names one explicitly. */
function patternOfUrl(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    const p = parseHostPattern(url.host);
    return p ? formatPattern(p) : null;
  } catch {
    return null;
  }
}

/**
 * Hosts a credential is bound to without being told: those its value names and, for provider
 * types, the deployment's base URLs for the provider.
 */
export function impliedHosts(type: string, value: CredentialValue | null, providerUrls: ProviderUrls = {}): string[] {
  const out: string[] = [];
  const add = (p: string | null) => {
    if (p && !out.includes(p)) out.push(p);
  };
  const family = CREDENTIAL_TYPES[type]?.family;
  if (value) {
    add(patternOfUrl(value.baseUrl));
    add(patternOfUrl(value.probeUrl));
    if ((family === 'smtp' || family === 'imap') && typeof value.host === 'string') {
      const p = parseHostPattern(value.host.includes(':') && !value.host.startsWith('[') ? `[${value.host}]` : value.host);
      if (p) add(formatPattern({ ...p, port: null }));
    }
  }
  if (family === 'provider' && !(value && typeof value.baseUrl === 'string')) {
    for (const url of providerUrls[type] ?? []) add(patternOfUrl(url));
  }
  return out;
}

/** Every host pattern a credential may be sent to: its `allowedHosts` and its implied hosts. */
export function credentialDestinations(
  row: { type: string; allowedHosts: string[] },
  value: CredentialValue | null,
  providerUrls?: ProviderUrls,
): string[] {
  const out = [...row.allowedHosts];
  for (const h of impliedHosts(row.type, value, providerUrls)) if (!out.includes(h)) out.push(h);
  return out;
}

const DEFAULT_PORT: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** Whether `url` goes to a host the patterns allow. */
export function hostAllowed(patterns: string[], url: URL): boolean {
  const target = parseHostPattern(url.host);
  if (!target) return false;
  const port = url.port === '' ? DEFAULT_PORT[url.protocol] : Number(url.port);
  return patterns.some((raw) => {
    const p = parseHostPattern(raw);
    if (!p || (p.port !== null && p.port !== port)) return false;
    return p.wildcard ? target.host.endsWith(`.${p.host}`) : target.host === p.host;
  });
}

/** The host of a URL as messages name it (`host` or `host:port`), or the raw text when it does not parse. */
/** How a refusal names where a credential may go: "it is bound to no host" or "it may be sent only to a, b". */
export function boundHostsText(allowed: string[]): string {
  return allowed.length === 0 ? 'it is bound to no host' : `it may be sent only to ${allowed.join(', ')}`;
}

export function shownHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url.slice(0, 200);
  }
}

/**
 * The provider base URLs of a deployment: CREDENTIAL_PROVIDER_BASE_URLS (where provider
 * credentials are tested), the knowledge connectors' and the mail providers' API base URLs.
 */
export function providerUrlsOf(config: {
  credentials: { providerBaseUrls: Record<string, string> };
  knowledge: { providerBaseUrls: Record<string, string | undefined> };
  mailer: { gmailBaseUrl: string; graphBaseUrl: string };
}): ProviderUrls {
  const out: ProviderUrls = {};
  const add = (type: string, url: string | undefined) => {
    if (url) (out[type] ??= []).push(url);
  };
  for (const [type, url] of Object.entries(config.credentials.providerBaseUrls)) add(type, url);
  for (const [type, url] of Object.entries(config.knowledge.providerBaseUrls)) add(type, url);
  add('mailA', config.mailer.gmailBaseUrl);
  add('mailB', config.mailer.graphBaseUrl);
  return out;
}
