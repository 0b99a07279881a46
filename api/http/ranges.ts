import { invalidInput } from '../../services/kernel/errors';
import { HttpError } from './errorMapping';

/**
 * The `Range` header of a download. Only `bytes=<start>-<end>` and `bytes=<start>-` are
 * accepted (anything else, suffix and multiple ranges included, is 400 `request_malformed`);
 * a start past the end, or an end before the start, is 416 with `Content-Range: bytes *\/size`.
 * An end past the last byte is clamped to it. No header: null (the whole content).
 */
export function parseByteRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (header === undefined || header === '') return null;
  const match = /^bytes=(\d{1,20})-(\d{0,20})$/.exec(header.trim());
  if (!match) throw invalidInput('Range must be bytes=<start>-<end>, the end being optional.', { code: 'request_malformed' });
  const start = Number(match[1]);
  const requestedEnd = match[2] === '' ? null : Number(match[2]);
  if (start >= size || (requestedEnd !== null && requestedEnd < start)) {
    throw new HttpError(416, `Range ${header.trim()} cannot be satisfied: the content is ${size} bytes.`, {
      'Content-Range': `bytes */${size}`,
    });
  }
  return { start, end: requestedEnd === null ? size - 1 : Math.min(requestedEnd, size - 1) };
}

/** Whether an `If-None-Match` header matches `etag` (weak comparison, `*` matches anything). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => {
    const c = candidate.trim();
    return c === '*' || c.replace(/^W\//, '') === bare;
  });
}
