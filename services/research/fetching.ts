/**
 * Fetching research sources: one URL at a time, through the outbound guard (services/kernel/outbound.ts),
 * honouring robots.txt (robots-parser), with the run's per-request timeout and remaining byte
 * budget; the readable text is extracted with Readability over a linkedom DOM. Every URL
 * considered leaves a row (research_sources): a `stored` snapshot, or `skipped`, `refused` or
 * `failed` with the reason. The row is keyed by (run, url), so a retried activity (a worker that
 * died after storing) finds it and fetches nothing again.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import robotsParser from 'robots-parser';
import { ResearchSourceSchema, type ResearchSource, type ResearchSourceOutcome } from '../../db/entities';
import { newId } from '../kernel/ids';
import { httpRequest, OutboundError } from '../kernel/outbound';
import { lazyModule } from '../kernel/lazyModule';
import { toStorable } from '../kernel/storableText';
import { htmlToText } from '../knowledge/extraction';
import type { ResearchRunRef } from './runs';
import { insertSourceOnce } from './store';

/** The user agent research requests send, and the one robots.txt rules are matched against. */
export const RESEARCH_USER_AGENT = 'svc-research/1.0';
const ROBOTS_MAX_BYTES = 512 * 1024;
/** Links kept per page for the crawl. */
const MAX_LINKS_PER_PAGE = 100;
/** Longest snapshot text kept (characters). */
const MAX_SNAPSHOT_CHARS = 200_000;

/** A URL as the run keeps it: http(s), no credentials, no fragment; null when it is not one. */
export function normalizeResearchUrl(raw: string, base?: string): string | null {
  let url: URL;
  try {
    url = base ? new URL(raw, base) : new URL(raw);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return null;
  url.hash = '';
  return url.toString();
}

export const hostnameOf = (url: string): string => new URL(url).hostname.toLowerCase();

export interface FetchSourceInput extends ResearchRunRef {
  url: string;
  timeoutMs: number;
  /** Bytes the page may have (the run's remaining budget). */
  maxBytes: number;
  /** Hostnames the run's links may stay on (those of its source URLs). */
  domains: string[];
}

export interface FetchSourceResult {
  outcome: ResearchSourceOutcome;
  bytes: number;
  /** Same-domain links found on a stored page (normalized, deduplicated). */
  links: string[];
}

export interface FetchDeps {
  allowPrivateNetworks: boolean;
  signal?: AbortSignal;
}

/** Records a URL the run decided not to fetch (a limit); no request is made. */
export async function recordSkippedSource(em: EntityManager, ref: ResearchRunRef, url: string, reason: string): Promise<void> {
  await insertSource(em, { ...ref, url, outcome: 'skipped', reason, canonicalUrl: url });
}

/** Fetches one URL (or returns what an earlier attempt stored for it) and records the outcome. */
export async function fetchResearchSource(em: EntityManager, deps: FetchDeps, input: FetchSourceInput): Promise<FetchSourceResult> {
  const earlier = await em.findOne(ResearchSourceSchema, { runId: input.runId, url: input.url });
  if (earlier) return resultOf(earlier);

  const record = async (outcome: ResearchSourceOutcome, reason: string, bytes = 0) =>
    resultOf(await insertSource(em, { ...input, outcome, reason, canonicalUrl: input.url, bytes }));

  const robots = await robotsVerdict(deps, input);
  if (robots.kind === 'refused') return record('refused', robots.reason);
  if (robots.kind === 'disallowed') return record('skipped', robots.reason);

  let body: Buffer;
  let contentType: string;
  try {
    const res = await httpRequest(
      {
        method: 'GET',
        url: input.url,
        headers: { 'user-agent': RESEARCH_USER_AGENT, accept: 'text/html, application/xhtml+xml, text/plain;q=0.9' },
        timeoutMs: input.timeoutMs,
      },
      {
        allowPrivateNetworks: deps.allowPrivateNetworks,
        maxResponseBytes: Math.max(0, input.maxBytes),
        responseType: 'bytes',
        signal: deps.signal,
      },
    );
    body = res.body as Buffer;
    contentType = ((res.headers['content-type'] ?? '').split(';')[0] ?? '').trim().toLowerCase();
    if (res.status < 200 || res.status > 299) return record('failed', `The page answered HTTP ${res.status}.`, body.length);
  } catch (err) {
    if (deps.signal?.aborted) throw err;
    if (!(err instanceof OutboundError)) throw err;
    if (err.code === 'refused') return record('refused', err.message);
    if (err.code === 'too_large')
      return record('skipped', `The page is larger than the run's remaining byte budget (${input.maxBytes} bytes).`);
    return record('failed', err.message);
  }

  const page = await extractPage(body.toString('utf8'), contentType, input.url);
  if (!page) return record('skipped', `Unsupported content type "${contentType || 'none'}" (HTML and plain text are read).`, body.length);
  const domains = new Set(input.domains);
  const links = [...new Set(page.links)].filter((l) => l !== input.url && domains.has(hostnameOf(l))).slice(0, MAX_LINKS_PER_PAGE);
  const text = page.text.slice(0, MAX_SNAPSHOT_CHARS);
  const row = await insertSource(em, {
    ...input,
    outcome: 'stored',
    reason: null,
    canonicalUrl: page.canonicalUrl ?? input.url,
    title: page.title,
    fetchedAt: new Date(),
    sha256: createHash('sha256').update(text, 'utf8').digest('hex'),
    snapshotText: text,
    links,
    bytes: body.length,
  });
  return resultOf(row);
}

const resultOf = (row: ResearchSource): FetchSourceResult => ({
  outcome: row.outcome,
  bytes: row.bytes,
  links: row.outcome === 'stored' ? row.links : [],
});

type SourceRow = ResearchRunRef &
  Partial<Omit<ResearchSource, 'id' | 'createdAt' | 'runId' | 'workspaceId'>> & {
    url: string;
    outcome: ResearchSourceOutcome;
    canonicalUrl: string;
  };

/** Inserts the row of (run, url) unless one exists, and returns the row that is there. */
async function insertSource(em: EntityManager, row: SourceRow): Promise<ResearchSource> {
  await insertSourceOnce(em, {
    id: newId('rsrc'),
    runId: row.runId,
    workspaceId: row.workspaceId,
    url: row.url,
    outcome: row.outcome,
    reason: row.reason ?? null,
    canonicalUrl: row.canonicalUrl,
    title: row.title ?? null,
    fetchedAt: row.fetchedAt ?? null,
    sha256: row.sha256 ?? null,
    snapshotText: row.snapshotText ?? null,
    links: JSON.stringify(toStorable(row.links ?? [])),
    bytes: row.bytes ?? 0,
    createdAt: new Date(),
  });
  return em.fork().findOneOrFail(ResearchSourceSchema, { runId: row.runId, url: row.url });
}

// ---------------------------------------------------------------------------------------------
// robots.txt

type RobotsVerdict = { kind: 'allowed' } | { kind: 'disallowed'; reason: string } | { kind: 'refused'; reason: string };

/** robots.txt bodies by run and origin, so a run asks each origin once per worker process. */
const robotsCache = new Map<string, string | null>();
const ROBOTS_CACHE_ENTRIES = 1000;

/**
 * Whether robots.txt lets RESEARCH_USER_AGENT fetch the URL (RFC 9309): a 4xx robots.txt allows
 * everything; a 5xx or an unreachable one disallows everything; a guard refusal is reported as such.
 */
async function robotsVerdict(deps: FetchDeps, input: FetchSourceInput): Promise<RobotsVerdict> {
  const robotsUrl = new URL('/robots.txt', input.url).toString();
  const cacheKey = `${input.runId} ${robotsUrl}`;
  let body = robotsCache.get(cacheKey);
  if (body === undefined) {
    try {
      const res = await httpRequest(
        { method: 'GET', url: robotsUrl, headers: { 'user-agent': RESEARCH_USER_AGENT }, timeoutMs: input.timeoutMs },
        { allowPrivateNetworks: deps.allowPrivateNetworks, maxResponseBytes: ROBOTS_MAX_BYTES, responseType: 'bytes', signal: deps.signal },
      );
      if (res.status >= 500)
        return { kind: 'disallowed', reason: `robots.txt answered HTTP ${res.status}, so the site is treated as disallowed.` };
      body = res.status >= 200 && res.status < 300 ? (res.body as Buffer).toString('utf8') : null;
    } catch (err) {
      if (deps.signal?.aborted) throw err;
      if (err instanceof OutboundError && err.code === 'refused') return { kind: 'refused', reason: err.message };
      return {
        kind: 'disallowed',
        reason: `robots.txt could not be read (${(err as Error).message}), so the site is treated as disallowed.`,
      };
    }
    if (robotsCache.size >= ROBOTS_CACHE_ENTRIES) robotsCache.delete(robotsCache.keys().next().value!);
    robotsCache.set(cacheKey, body);
  }
  if (body === null) return { kind: 'allowed' };
  const robots = robotsParser(robotsUrl, body);
  return robots.isAllowed(input.url, RESEARCH_USER_AGENT) === false
    ? { kind: 'disallowed', reason: `Disallowed by robots.txt for ${RESEARCH_USER_AGENT}.` }
    : { kind: 'allowed' };
}

// ---------------------------------------------------------------------------------------------
// Readable text

interface ExtractedPage {
  title: string | null;
  text: string;
  canonicalUrl: string | null;
  links: string[];
}

/** linkedom and Readability, loaded with the first HTML page (services/kernel/lazyModule.ts). */
const loadHtmlReader = lazyModule(async () => {
  const [{ parseHTML }, { Readability }] = await Promise.all([import('linkedom'), import('@mozilla/readability')]);
  return { parseHTML, Readability };
});

/** Title, readable text, canonical URL and links of an HTML or plain-text page; null for other content. */
export async function extractPage(body: string, contentType: string, url: string): Promise<ExtractedPage | null> {
  if (contentType === 'text/plain') return { title: null, text: tidy(body), canonicalUrl: null, links: [] };
  if (contentType !== 'text/html' && contentType !== 'application/xhtml+xml' && !(contentType === '' && /<html[\s>]/i.test(body)))
    return null;
  const { parseHTML, Readability } = await loadHtmlReader();
  const { document } = parseHTML(body);
  const links: string[] = [];
  for (const a of document.querySelectorAll('a[href]')) {
    const link = normalizeResearchUrl(a.getAttribute('href') ?? '', url);
    if (link) links.push(link);
  }
  const canonicalHref = document.querySelector('link[rel="canonical"]')?.getAttribute('href');
  const canonicalUrl = canonicalHref ? normalizeResearchUrl(canonicalHref, url) : null;
  const pageTitle = document.querySelector('title')?.textContent?.trim() || null;
  // Readability changes the document it reads: links and the title are taken first.
  const article = new Readability(document).parse();
  const text = article?.content ? htmlToText(article.content) : htmlToText(body);
  return { title: article?.title?.trim() || pageTitle, text: tidy(text), canonicalUrl, links };
}

const tidy = (text: string): string =>
  text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
