import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomToken } from '../ids';
import { BlobNotFoundError, checkStorageKey, type ObjectBackend } from './backend';

/**
 * Blobs as files under one folder (default `<DATA_DIR>/blobs`), one file per storage key. A
 * write goes to a temporary file renamed into place at the end, so a reader never sees half a
 * blob and a failed write leaves nothing behind.
 */
export function localBackend(dir: string): ObjectBackend {
  const fileOf = (key: string) => path.join(dir, ...checkStorageKey(key).split('/'));
  return {
    kind: 'local',
    async put(key, body) {
      const file = fileOf(key);
      await mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.tmp-${randomToken(6)}`;
      try {
        await pipeline(body, createWriteStream(tmp, { flags: 'wx' }));
        await rename(tmp, file);
      } catch (err) {
        await unlink(tmp).catch(() => undefined);
        throw err;
      }
    },
    async getRange(key, start, end) {
      const file = fileOf(key);
      let size: number;
      try {
        size = (await stat(file)).size;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(key);
        throw err;
      }
      if (start >= size || end < start) return { body: Readable.from([]), totalSize: size };
      return { body: createReadStream(file, { start, end: Math.min(end, size - 1) }), totalSize: size };
    },
    async delete(key) {
      await unlink(fileOf(key)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    },
  };
}
