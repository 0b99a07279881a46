import { clampLimit, decodeCursor, encodeCursor, lastIdPage, nextCursorOf } from '../../../../services/kernel/pagination';
import { DomainError } from '../../../../services/kernel/errors';

describe('cursor helpers', () => {
  const position = { createdAt: new Date('2026-03-04T05:06:07.089Z'), id: 'run_abc' };

  test('round-trip and opaque base64url', () => {
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(position);
  });

  test.each([
    ['not base64url', '%%%'],
    ['not JSON', Buffer.from('hello').toString('base64url')],
    ['wrong shape', Buffer.from(JSON.stringify({ a: 1 })).toString('base64url')],
    ['bad date', Buffer.from(JSON.stringify(['yesterday', 'id'])).toString('base64url')],
    ['empty id', Buffer.from(JSON.stringify(['2026-03-04T05:06:07.089Z', ''])).toString('base64url')],
    ['empty string', ''],
  ])('%s is a 400 with the given code', (_name, cursor) => {
    try {
      decodeCursor(cursor, 'request_malformed');
      throw new Error('expected a failure');
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).kind).toBe('invalid');
      expect((err as DomainError).code).toBe('request_malformed');
    }
  });

  test('nextCursorOf gives null on the last page and the last row of a full page otherwise', () => {
    const rows = [1, 2, 3].map((n) => ({ createdAt: new Date(Date.UTC(2026, 0, n)), id: `r${n}` }));
    expect(nextCursorOf(rows, 3)).toEqual({ page: rows, nextCursor: null });
    const { page, nextCursor } = nextCursorOf(rows, 2);
    expect(page).toHaveLength(2);
    expect(decodeCursor(nextCursor!)).toEqual(rows[1]);
  });
});

describe('clampLimit', () => {
  const bounds = { default: 100, min: 1, max: 200 };
  test.each([
    [undefined, 100],
    ['', 100],
    ['abc', 100],
    ['0', 1],
    ['-5', 1],
    ['500', 200],
    ['50', 50],
    ['12.7', 12],
    [7, 7],
  ])('%p -> %p', (raw, expected) => expect(clampLimit(raw, bounds)).toBe(expected));
});

describe('lastIdPage', () => {
  const rows = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];

  test('a row beyond the limit: the page ends at the limit and its last id is the cursor', () => {
    expect(lastIdPage(rows, 2)).toEqual({ page: [{ id: 'a' }, { id: 'b' }], nextCursor: 'b' });
  });

  test('no row beyond the limit: the whole page, no cursor', () => {
    expect(lastIdPage(rows, 3)).toEqual({ page: rows, nextCursor: null });
    expect(lastIdPage([], 3)).toEqual({ page: [], nextCursor: null });
  });
});
