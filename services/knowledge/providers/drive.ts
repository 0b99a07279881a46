/**
 * `drive`: Google Drive API v3. `files.list` (`GET /drive/v3/files` with `q`, `orderBy`,
 * `pageSize`, `pageToken`, `fields`; answers `{ files, nextPageToken }`), `files.get`
 * (`GET /drive/v3/files/{id}`; `?alt=media` for content) and `files.export`
 * (`GET /drive/v3/files/{id}/export?mimeType=`) for Google Docs, Sheets and Slides. Errors
 * are `{ error: { code, message, errors } }`.
 *
 * Without `fileIds` the run walks `files.list` in modifiedTime order from the last synced time;
 * with `fileIds` it reads those files (each `files.get` counts as a page). Trashed and missing
 * files are tombstones. A page whose content does not fit the remaining maxBytes fails the run
 * with a fetch-budget error instead of returning part of the page.
 */
import { documentKindOf, extractText, mimeTypeOfKind, ExtractionError } from '../extraction';
import { storable, SyncError, stringList, providerFailure, type ConnectorProvider, type ProviderContext, type SyncItem } from './types';

interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  modifiedTime?: string;
  trashed?: boolean;
  size?: string;
  webViewLink?: string;
}

interface DriveState {
  /** List mode: files modified after this are fetched next. */
  since?: string | null;
  pageToken?: string | null;
  passMax?: string | null;
  /** fileIds mode: index of the next id to read. */
  next?: number;
}

const FIELDS = 'id,name,mimeType,modifiedTime,trashed,size,webViewLink';
const EXPORTS: Record<string, string> = {
  'application/vnd.google-apps.document': 'text/plain',
  'application/vnd.google-apps.presentation': 'text/plain',
  'application/vnd.google-apps.spreadsheet': 'text/csv',
};

export const driveProvider: ConnectorProvider = {
  id: 'drive',
  label: 'Drive (Google Drive API v3)',
  scopes: ['https://www.googleapis.com/auth/drive.readonly'],
  filters: (config) => ({
    fileIds: stringList(config, 'fileIds', { max: 100, pattern: /^[A-Za-z0-9_-]{1,200}$/, what: 'Drive file ids' }) ?? null,
  }),
  authHeaders: (credential) => ({ authorization: `Bearer ${credential.token}` }),

  async fetch(ctx) {
    const { fileIds } = this.filters(ctx.config) as { fileIds: string[] | null };
    const state = (ctx.state ?? {}) as DriveState;
    return fileIds ? byIds(ctx, fileIds, state) : byListing(ctx, state);
  },
};

async function byListing(ctx: ProviderContext, prev: DriveState) {
  const state: DriveState = { since: prev.since ?? null, pageToken: prev.pageToken ?? null, passMax: prev.passMax ?? null };
  const upserts: SyncItem[] = [];
  const tombstones: string[] = [];
  for (;;) {
    if (ctx.budget.pagesLeft <= 0 || ctx.budget.itemsLeft <= 0) break;
    ctx.budget.page();
    const res = await ctx.request({
      method: 'GET',
      url: `${ctx.baseUrl}/drive/v3/files`,
      query: {
        q: state.since ? `modifiedTime > '${state.since}'` : undefined,
        orderBy: 'modifiedTime',
        pageSize: Math.min(100, ctx.budget.itemsLeft),
        pageToken: state.pageToken,
        fields: `nextPageToken,files(${FIELDS})`,
      },
    });
    if (res.status !== 200) throw providerFailure('drive', res, 'files.list');
    const page = res.body as { files?: DriveFile[]; nextPageToken?: string };
    await takePage(ctx, page.files ?? [], upserts, tombstones);
    for (const f of page.files ?? [])
      if (f.modifiedTime && (!state.passMax || f.modifiedTime > state.passMax)) state.passMax = f.modifiedTime;
    if (page.nextPageToken) {
      state.pageToken = page.nextPageToken;
      continue;
    }
    state.since = state.passMax ?? state.since;
    state.pageToken = null;
    state.passMax = null;
    break;
  }
  return { upserts, tombstones, cursor: state, fullSnapshot: false as const };
}

async function byIds(ctx: ProviderContext, fileIds: string[], prev: DriveState) {
  let next = typeof prev.next === 'number' && prev.next < fileIds.length ? prev.next : 0;
  const files: DriveFile[] = [];
  const tombstones: string[] = [];
  while (next < fileIds.length && ctx.budget.pagesLeft > 0 && ctx.budget.itemsLeft - files.length - tombstones.length > 0) {
    ctx.budget.page();
    const id = fileIds.at(next)!; // next < fileIds.length: the loop's condition
    const res = await ctx.request({
      method: 'GET',
      url: `${ctx.baseUrl}/drive/v3/files/${encodeURIComponent(id)}`,
      query: { fields: FIELDS },
    });
    if (res.status === 404) tombstones.push(`drive:${id}`);
    else if (res.status !== 200) throw providerFailure('drive', res, `files.get ${id}`);
    else files.push(res.body as DriveFile);
    next++;
  }
  const upserts: SyncItem[] = [];
  tombstones.forEach(() => ctx.budget.take(0));
  await takePage(ctx, files, upserts, tombstones);
  return { upserts, tombstones, cursor: { next: next >= fileIds.length ? 0 : next }, fullSnapshot: false as const };
}

/** Takes every file of one page, or fails: a page never goes in part. */
async function takePage(ctx: ProviderContext, files: DriveFile[], upserts: SyncItem[], tombstones: string[]): Promise<void> {
  const known = await ctx.knownVersions(files.map((f) => `drive:${f.id}`));
  for (const f of files) {
    const externalId = `drive:${f.id}`;
    if (f.trashed) {
      tombstones.push(externalId);
      ctx.budget.take(0);
      continue;
    }
    if (f.modifiedTime && known.get(externalId) === f.modifiedTime) continue;
    const exportAs = EXPORTS[f.mimeType];
    const kind = exportAs ? null : documentKindOf(f.mimeType, f.name);
    if (!exportAs && !kind) continue; // images, folders, other binaries
    const declared = Number(f.size ?? 0);
    if (declared > ctx.budget.bytesLeft) throw budgetError(f, declared, ctx.budget.bytesLeft);
    ctx.budget.checkTime();
    const res = exportAs
      ? await ctx.request(
          { method: 'GET', url: `${ctx.baseUrl}/drive/v3/files/${encodeURIComponent(f.id)}/export`, query: { mimeType: exportAs } },
          { responseType: 'bytes' },
        )
      : await ctx.request(
          { method: 'GET', url: `${ctx.baseUrl}/drive/v3/files/${encodeURIComponent(f.id)}`, query: { alt: 'media' } },
          { responseType: 'bytes' },
        );
    if (res.status !== 200)
      throw providerFailure('drive', { ...res, body: bodyText(res.body) }, `${exportAs ? 'files.export' : 'files.get alt=media'} ${f.id}`);
    const bytes = res.body as Buffer;
    if (bytes.length > ctx.budget.bytesLeft) throw budgetError(f, bytes.length, ctx.budget.bytesLeft);
    let text: string;
    try {
      text = exportAs ? bytes.toString('utf8') : await extractText(bytes, kind!);
    } catch (err) {
      if (!(err instanceof ExtractionError)) throw err;
      continue; // unreadable file: skipped, as unsupported types are
    }
    ctx.budget.take(bytes.length);
    upserts.push({
      externalId,
      title: f.name,
      mimeType: exportAs ? exportAs : mimeTypeOfKind(kind!),
      content: storable(text),
      url: f.webViewLink ?? null,
      version: f.modifiedTime ?? null,
      metadata: { fileId: f.id, driveMimeType: f.mimeType },
    });
  }
}

function bodyText(body: unknown): unknown {
  if (!Buffer.isBuffer(body)) return body;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return body.toString('utf8').slice(0, 300);
  }
}

const budgetError = (f: DriveFile, bytes: number, left: number) =>
  new SyncError(
    'invalid',
    `Fetch budget exceeded: drive file ${f.id} (${f.name}) is ${bytes} bytes and only ${left} of maxBytes remain; the page is not taken in part. Raise maxBytes or narrow config.fileIds.`,
  );
