/**
 * `wiki`: Confluence Cloud REST API v2. `GET /wiki/api/v2/spaces` (ids filter, cursor links) and
 * `GET /wiki/api/v2/spaces/{id}/pages?body-format=storage&status=current&status=trashed`
 * (`{ results, _links.next }`). Basic auth (email and API token) when the credential names a
 * username, else Bearer. The page body (storage format, XHTML) is converted to text.
 *
 * Cursor: the spaces of the unfinished pass, which one is next and the `_links.next` cursor in
 * it; a complete pass starts over next time, skipping pages whose version number is unchanged.
 * Trashed pages are tombstones. A page of results whose bodies do not fit the remaining maxBytes
 * fails the run with a fetch-budget error instead of returning part of it.
 */
import { htmlToText } from '../extraction';
import { storable, SyncError, stringList, providerFailure, type ConnectorProvider, type ProviderContext, type SyncItem } from './types';

interface WikiState {
  spaces: string[];
  index: number;
  next: string | null;
}

interface WikiPage {
  id: string;
  status: string;
  title: string;
  spaceId: string;
  version?: { number?: number };
  body?: { storage?: { value?: string } };
  _links?: { webui?: string };
}

export const wikiProvider: ConnectorProvider = {
  id: 'wiki',
  label: 'Wiki (Confluence Cloud REST v2)',
  scopes: ['read:space:confluence', 'read:page:confluence'],
  filters: (config) => ({
    spaceIds: stringList(config, 'spaceIds', { max: 100, pattern: /^[0-9]{1,30}$/, what: 'numeric space ids' }) ?? null,
  }),
  authHeaders: (credential) =>
    credential.username
      ? {
          authorization: `Basic ${Buffer.from(`${credential.username}:${credential.token}`).toString('base64')}`,
          accept: 'application/json',
        }
      : { authorization: `Bearer ${credential.token}`, accept: 'application/json' },

  async fetch(ctx) {
    const { spaceIds } = this.filters(ctx.config) as { spaceIds: string[] | null };
    const prev = ctx.state as WikiState | null;
    const state: WikiState =
      prev && Array.isArray(prev.spaces) ? { ...prev } : { spaces: spaceIds ?? (await listSpaces(ctx)), index: 0, next: null };
    const upserts: SyncItem[] = [];
    const tombstones: string[] = [];
    while (state.index < state.spaces.length) {
      if (ctx.budget.pagesLeft <= 0 || ctx.budget.itemsLeft <= 0)
        return { upserts, tombstones, cursor: state, fullSnapshot: false as const };
      const space = state.spaces[state.index];
      ctx.budget.page();
      const url = state.next ? new URL(state.next, ctx.baseUrl).toString() : `${ctx.baseUrl}/wiki/api/v2/spaces/${space}/pages`;
      const res = await ctx.request({
        method: 'GET',
        url,
        query: state.next
          ? { limit: Math.min(250, ctx.budget.itemsLeft) }
          : { 'body-format': 'storage', status: ['current', 'trashed'], limit: Math.min(250, ctx.budget.itemsLeft) },
      });
      if (res.status === 404) throw new SyncError('invalid', `Provider wiki does not know space ${space} (404); check config.spaceIds.`);
      if (res.status !== 200) throw providerFailure('wiki', res, `GET pages of space ${space}`);
      const body = res.body as { results?: WikiPage[]; _links?: { next?: string; base?: string } };
      await takePage(ctx, body.results ?? [], body._links?.base ?? ctx.baseUrl, upserts, tombstones);
      if (body._links?.next) state.next = body._links.next;
      else {
        state.index++;
        state.next = null;
      }
    }
    // The pass is complete: the next run starts a new one.
    return { upserts, tombstones, cursor: null, fullSnapshot: false as const };
  },
};

async function listSpaces(ctx: ProviderContext): Promise<string[]> {
  const ids: string[] = [];
  let next: string | null = null;
  do {
    if (ctx.budget.pagesLeft <= 0)
      throw new SyncError(
        'invalid',
        `Fetch budget exceeded: maxPages (${ctx.budget.options.maxPages}) ran out while listing wiki spaces; raise maxPages or set config.spaceIds.`,
      );
    ctx.budget.page();
    const res = await ctx.request({
      method: 'GET',
      url: next ? new URL(next, ctx.baseUrl).toString() : `${ctx.baseUrl}/wiki/api/v2/spaces`,
      query: next ? undefined : { limit: 250 },
    });
    if (res.status !== 200) throw providerFailure('wiki', res, 'GET /wiki/api/v2/spaces');
    const body = res.body as { results?: Array<{ id: string | number }>; _links?: { next?: string } };
    for (const s of body.results ?? []) ids.push(String(s.id));
    next = body._links?.next ?? null;
  } while (next);
  return ids.sort((a, b) => Number(a) - Number(b));
}

async function takePage(ctx: ProviderContext, pages: WikiPage[], base: string, upserts: SyncItem[], tombstones: string[]): Promise<void> {
  const known = await ctx.knownVersions(pages.map((p) => `wiki:${p.id}`));
  const taken: SyncItem[] = [];
  let bytes = 0;
  let items = 0;
  for (const p of pages) {
    const externalId = `wiki:${p.id}`;
    if (p.status === 'trashed' || p.status === 'deleted') {
      tombstones.push(externalId);
      items++;
      continue;
    }
    const version = p.version?.number !== undefined ? String(p.version.number) : null;
    if (version !== null && known.get(externalId) === version) continue;
    const storage = p.body?.storage?.value ?? '';
    const size = Buffer.byteLength(storage);
    if (bytes + size > ctx.budget.bytesLeft) {
      throw new SyncError(
        'invalid',
        `Fetch budget exceeded: a page of wiki results needs more than the ${ctx.budget.bytesLeft} bytes left of maxBytes (page ${p.id} "${p.title.slice(0, 80)}"); the page is not taken in part. Raise maxBytes or narrow config.spaceIds.`,
      );
    }
    bytes += size;
    items++;
    taken.push({
      externalId,
      title: p.title,
      mimeType: 'text/html',
      content: storable(htmlToText(storage)),
      url: p._links?.webui ? new URL(`${base.replace(/\/$/, '')}${p._links.webui}`).toString() : null,
      version,
      metadata: { pageId: p.id, spaceId: String(p.spaceId) },
    });
  }
  for (let i = 0; i < items; i++) ctx.budget.take(0);
  ctx.budget.bytes += bytes;
  upserts.push(...taken);
}
