/**
 * What a connector provider is: registry facts (label, scopes, credential types) and a client
 * that fetches one bounded batch from the real service's API. Providers never write: the sync
 * run applies their batch in one transaction (services/knowledge/sync.ts).
 */
import type { HttpRequestInput, HttpResponseOutput } from '../../kernel/outbound';
import type { ConnectorCredential } from '../credentials';

export interface SyncOptions {
  maxPages: number;
  maxItems: number;
  maxBytes: number;
  timeoutMs: number;
}

/** A failure with a known answer: `invalid` 400 validation_failed, `conflict` 409, `internal` 500. */
export class SyncError extends Error {
  constructor(
    readonly kind: 'invalid' | 'conflict' | 'internal',
    message: string,
    readonly code?: string,
    /** Extra fields of the envelope error (`retryable`, `details`) for setup failures. */
    readonly envelope?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'SyncError';
  }
}

export interface SyncItem {
  externalId: string;
  title: string;
  mimeType: string;
  /** The item's text (extracted where the service returns markup or files). */
  content: string;
  url: string | null;
  /** The service's version of the item (modified time, version number, blob sha). */
  version: string | null;
  metadata: Record<string, unknown>;
}

export interface SyncBatch {
  upserts: SyncItem[];
  /** External ids the service reported deleted or trashed. */
  tombstones: string[];
  /** The provider's next cursor state; undefined: the batch returned none (the stored cursor stays). */
  cursor: unknown;
  fullSnapshot: false;
}

/** Pages, items, bytes and time one run may spend. */
export class FetchBudget {
  pages = 0;
  items = 0;
  bytes = 0;
  private readonly deadline: number;
  constructor(readonly options: SyncOptions) {
    this.deadline = Date.now() + options.timeoutMs;
  }
  get pagesLeft() {
    return this.options.maxPages - this.pages;
  }
  get itemsLeft() {
    return this.options.maxItems - this.items;
  }
  get bytesLeft() {
    return this.options.maxBytes - this.bytes;
  }
  /** Counts one listing request; callers check `pagesLeft` first. */
  page(): void {
    this.checkTime();
    this.pages++;
  }
  checkTime(): void {
    if (Date.now() > this.deadline)
      throw new SyncError(
        'invalid',
        `Fetch budget exceeded: the sync did not finish within timeoutMs (${this.options.timeoutMs} ms); raise timeoutMs or narrow the connector's filters.`,
      );
  }
  take(bytes: number): void {
    this.items++;
    this.bytes += bytes;
  }
}

export interface ProviderContext {
  config: Record<string, unknown>;
  /** The provider's own cursor state from the last run (null on the first). */
  state: unknown;
  budget: FetchBudget;
  credential: ConnectorCredential;
  baseUrl: string;
  /** Sends a request to the service with the credential (through the outbound guard). */
  request(req: HttpRequestInput, opts?: { responseType?: 'bytes' }): Promise<HttpResponseOutput>;
  /** The stored version of each of these items (absent: unknown item). */
  knownVersions(externalIds: string[]): Promise<Map<string, string | null>>;
  /** External ids of stored, enabled items starting with `prefix`. */
  knownIds(prefix: string): Promise<string[]>;
}

export interface ConnectorProvider {
  id: 'drive' | 'wiki' | 'chat' | 'repo';
  label: string;
  scopes: string[];
  /** The filters the cursor is tied to, validated (SyncError `invalid` for bad ones). */
  filters(config: Record<string, unknown>): Record<string, unknown>;
  /** How requests authenticate with the credential. */
  authHeaders(credential: ConnectorCredential): Record<string, string>;
  fetch(ctx: ProviderContext): Promise<SyncBatch>;
}

/** The deployment's default API base URL of each provider (`KNOWLEDGE_<ID>_BASE_URL`). */
export type ProviderBaseUrls = Record<ConnectorProvider['id'], string | undefined>;

/**
 * Credential types a provider accepts, the same rule for every provider: a credential of the
 * provider's own type (named as the provider), or an OAuth2 credential holding its `scopes`.
 */
export function acceptedCredentialTypes(provider: Pick<ConnectorProvider, 'id'>): string[] {
  return [provider.id, 'oauth2'];
}

/** A provider's default API base URL, from the deployment (undefined: the credential must name one). */
export function defaultBaseUrl(provider: Pick<ConnectorProvider, 'id'>, urls: ProviderBaseUrls): string | undefined {
  return urls[provider.id];
}

/** A list of unique non-empty strings from `config[key]` (or undefined when absent). */
export function stringList(
  config: Record<string, unknown>,
  key: string,
  opts: { required?: boolean; max: number; pattern?: RegExp; what?: string },
): string[] | undefined {
  const raw = config[key];
  if (raw === undefined || raw === null) {
    if (opts.required) throw new SyncError('invalid', `config.${key} is required: a list of ${opts.what ?? 'ids'}.`);
    return undefined;
  }
  if (!Array.isArray(raw) || raw.some((v) => typeof v !== 'string' || v.trim() === '' || v.length > 500)) {
    throw new SyncError('invalid', `config.${key} must be a list of non-empty strings.`);
  }
  const unique = [...new Set(raw.map((v: string) => v.trim()))];
  if (opts.required && unique.length === 0) throw new SyncError('invalid', `config.${key} must not be empty.`);
  if (unique.length > opts.max)
    throw new SyncError('invalid', `config.${key} has ${unique.length} unique entries; at most ${opts.max} are allowed.`);
  if (opts.pattern) {
    const bad = unique.find((v) => !opts.pattern!.test(v));
    if (bad)
      throw new SyncError(
        'invalid',
        `config.${key} has an invalid entry ${JSON.stringify(bad.slice(0, 100))}${opts.what ? ` (expected ${opts.what})` : ''}.`,
      );
  }
  return unique.sort();
}

/** A non-2xx answer of the service: a 500 naming the provider, status and the service's message. */
export function providerFailure(provider: string, res: HttpResponseOutput, what: string): SyncError {
  const body = res.body as { error?: unknown; message?: unknown; errors?: Array<{ message?: unknown; title?: unknown }> } | string | null;
  const detail =
    typeof body === 'string'
      ? body
      : typeof body?.error === 'string'
        ? body.error
        : typeof (body?.error as { message?: unknown })?.message === 'string'
          ? String((body!.error as { message: string }).message)
          : typeof body?.message === 'string'
            ? body.message
            : Array.isArray(body?.errors) && body.errors[0]
              ? String(body.errors[0].message ?? body.errors[0].title ?? '')
              : '';
  return new SyncError(
    'internal',
    `Provider ${provider} answered ${res.status} to ${what}${detail ? `: ${String(detail).slice(0, 300)}` : ''}.`,
  );
}

/** Text the database can store: no NUL, no lone surrogates. */
export function storable(text: string): string {
  return text.replaceAll('\u0000', '').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}
