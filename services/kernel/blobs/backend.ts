import type { Readable } from 'node:stream';

/**
 * Where stored (already encrypted) bytes live: a key → bytes map with ranged reads. Two real
 * implementations: the local filesystem (local.ts) and S3-compatible object storage (s3.ts).
 */
export interface ObjectBackend {
  readonly kind: 'local' | 's3';
  /** Stores `body` under `key`, replacing nothing (keys are never reused). `length`: exact byte count when known. */
  put(key: string, body: Readable, length: number | null): Promise<void>;
  /** Bytes [start, end] (inclusive, clamped to the object) and the object's full size. */
  getRange(key: string, start: number, end: number): Promise<{ body: Readable; totalSize: number }>;
  /** Removes the object; a missing one is not an error. */
  delete(key: string): Promise<void>;
}

export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super('Blob not found.');
    this.name = 'BlobNotFoundError';
  }
}

const STORAGE_KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]*(\/[A-Za-z0-9][A-Za-z0-9_.-]*)*$/;

/** Storage keys are relative paths of safe segments: no `..`, no leading slash, no empty segment. */
export function checkStorageKey(key: string): string {
  if (!STORAGE_KEY.test(key) || key.length > 512 || key.split('/').some((s) => s === '.' || s === '..'))
    throw new Error(`Invalid storage key ${JSON.stringify(key)}`);
  return key;
}
