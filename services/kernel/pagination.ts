import { invalidInput } from './errors';

/** Position in a list ordered by (createdAt desc, id desc). */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

/** Opaque base64url cursor of createdAt and id; clients must not parse it. */
export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.id]), 'utf8').toString('base64url');
}

/**
 * Decodes a cursor made by `encodeCursor`. Anything else (bad base64, bad JSON, wrong shape,
 * invalid date) throws a 400 with `code` (the envelope family's `validation_failed` by default).
 */
export function decodeCursor(cursor: string, code = 'validation_failed'): CursorPosition {
  const invalid = () => invalidInput('Invalid cursor.', { code });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) throw invalid();
  const [createdAt, id] = decoded;
  if (typeof createdAt !== 'string' || typeof id !== 'string' || id.length === 0) throw invalid();
  const date = new Date(createdAt);
  if (Number.isNaN(date.getTime()) || date.toISOString() !== createdAt) throw invalid();
  return { createdAt: date, id };
}

/** Next cursor for a page fetched with `limit + 1` rows: null when there is no further page. */
export function nextCursorOf<T extends CursorPosition>(rows: T[], limit: number): { page: T[]; nextCursor: string | null } {
  if (rows.length <= limit) return { page: rows, nextCursor: null };
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: last ? encodeCursor(last) : null };
}

/**
 * The page of a list whose cursor is the id of the previous page's last row, fetched with
 * `limit + 1` rows: the first `limit` rows, and the id of the last of them when there are more.
 */
export function lastIdPage<T extends { id: string }>(rows: T[], limit: number): { page: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  return { page, nextCursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null };
}

/**
 * Clamps a list limit the way the runs and logs routes do: missing or non-numeric means the
 * default, anything else is forced into [min, max].
 */
export function clampLimit(raw: unknown, bounds: { default: number; min: number; max: number }): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n)) return bounds.default;
  return Math.min(bounds.max, Math.max(bounds.min, Math.trunc(n)));
}
