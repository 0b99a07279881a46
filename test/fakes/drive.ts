/**
 * Loopback Google Drive API v3: `GET /drive/v3/files` (`q` with `modifiedTime > '…'`,
 * `orderBy=modifiedTime`, `pageSize`, `pageToken`; `{ kind, files, nextPageToken }`),
 * `GET /drive/v3/files/{id}` (metadata, or the content with `alt=media`) and
 * `GET /drive/v3/files/{id}/export?mimeType=` for Google Docs; errors
 * `{ error: { code, message, errors: [{ reason }] } }`.
 */
import { bearer, startProviderFake, type ProviderFake } from './providerServer';

export interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  modifiedTime: string;
  trashed: boolean;
  content: Buffer | string;
}

export interface DriveFake extends ProviderFake {
  files: Map<string, DriveFile>;
  put(file: Omit<DriveFile, 'modifiedTime' | 'trashed'> & { trashed?: boolean }): DriveFile;
}

const error = (code: number, message: string, reason: string) => ({
  status: code,
  json: { error: { code, message, errors: [{ domain: 'global', reason, message }] } },
});

export async function startDriveFake(token = 'ya29.fake-token'): Promise<DriveFake> {
  const files = new Map<string, DriveFile>();
  let clock = Date.UTC(2026, 0, 1);
  const meta = (f: DriveFile) => ({
    kind: 'drive#file',
    id: f.id,
    name: f.name,
    mimeType: f.mimeType,
    modifiedTime: f.modifiedTime,
    trashed: f.trashed,
    size: String(Buffer.byteLength(f.content)),
    webViewLink: `https://drive.example/file/d/${f.id}/view`,
  });
  const fake = await startProviderFake({
    authorized: bearer(token),
    unauthorized: error(401, 'Request had invalid authentication credentials.', 'authError'),
    handle: (req) => {
      if (req.path === '/drive/v3/files') {
        const q = req.query.get('q') ?? '';
        const after = /modifiedTime > '([^']+)'/.exec(q)?.[1];
        const list = [...files.values()]
          .filter((f) => !after || f.modifiedTime > after)
          .sort((a, b) => (a.modifiedTime < b.modifiedTime ? -1 : a.modifiedTime > b.modifiedTime ? 1 : a.id < b.id ? -1 : 1));
        const size = Math.min(Number(req.query.get('pageSize') ?? 100) || 100, 1000);
        const offset = Number(req.query.get('pageToken') ?? 0);
        const page = list.slice(offset, offset + size);
        return {
          json: {
            kind: 'drive#fileList',
            files: page.map(meta),
            ...(offset + size < list.length ? { nextPageToken: String(offset + size) } : {}),
          },
        };
      }
      const m = /^\/drive\/v3\/files\/([^/]+)(\/export)?$/.exec(req.path);
      if (!m) return error(404, 'Not Found', 'notFound');
      const f = files.get(decodeURIComponent(m[1]));
      if (!f) return error(404, `File not found: ${m[1]}.`, 'notFound');
      if (m[2]) {
        if (!f.mimeType.startsWith('application/vnd.google-apps.'))
          return error(403, 'Export only supports Docs Editors files.', 'fileNotExportable');
        return { bytes: Buffer.from(f.content) };
      }
      if (req.query.get('alt') === 'media') {
        if (f.mimeType.startsWith('application/vnd.google-apps.'))
          return error(403, 'Only files with binary content can be downloaded. Use Export with Docs Editors files.', 'fileNotDownloadable');
        return { bytes: Buffer.from(f.content) };
      }
      return { json: meta(f) };
    },
  });
  return {
    ...fake,
    files,
    put(file) {
      const stored: DriveFile = { ...file, trashed: file.trashed ?? false, modifiedTime: new Date((clock += 1000)).toISOString() };
      files.set(file.id, stored);
      return stored;
    },
  };
}
