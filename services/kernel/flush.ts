import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Flushes `em`, answering a unique-constraint violation with `refusal()`. For writes whose
 * uniqueness is checked first: a concurrent write of the same key can still win the race for
 * the unique index, and its loser must get the answer the check gives, not a 500. Any other
 * flush error is thrown as it is.
 */
export async function flushUnique(em: EntityManager, refusal: () => Error): Promise<void> {
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw refusal();
    throw err;
  }
}
