import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { flushUnique } from '../../../../services/kernel/flush';
import { conflict } from '../../../../services/kernel/errors';

/** An entity manager whose flush fails with `error` (or succeeds without one): all flushUnique touches. */
const flushing = (error?: Error) =>
  ({
    flush: async () => {
      if (error) throw error;
    },
  }) as unknown as EntityManager;

describe('flushUnique', () => {
  const refusal = () => conflict('A widget named "w" already exists.');

  test('a unique-constraint violation is answered with the refusal', async () => {
    const lost = flushing(new UniqueConstraintViolationException(new Error('duplicate key value violates unique constraint')));
    await expect(flushUnique(lost, refusal)).rejects.toMatchObject({ kind: 'conflict', message: 'A widget named "w" already exists.' });
  });

  test('any other flush error is thrown as it is, and a clean flush answers nothing', async () => {
    const other = new Error('connection reset');
    await expect(flushUnique(flushing(other), refusal)).rejects.toBe(other);
    await expect(flushUnique(flushing(), refusal)).resolves.toBeUndefined();
  });
});
