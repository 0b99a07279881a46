/**
 * Raw SQL inside a transaction runs on the transaction's own connection: an advisory
 * transaction lock taken with `tx.execute` holds until the transaction ends, so concurrent
 * find-or-create calls (research answers filing into the "Research" base) create one base.
 * (`tx.getConnection().execute` without the transaction context ran on another pooled
 * connection, where the lock was released at once.)
 */
import { KnowledgeBaseSchema } from '../../../db/entities';
import { findOrCreateKnowledgeBase } from '../../../services/knowledge/bases';
import { useTestStack } from '../../kit';

const stack = useTestStack({ worker: false });

test('eight concurrent find-or-create calls in their own transactions make exactly one base', async () => {
  const ws = await stack.workspace();
  const bases = await Promise.all(
    Array.from({ length: 8 }, () =>
      stack.app.orm.em.fork().transactional(async (tx) => {
        const kb = await findOrCreateKnowledgeBase(tx, ws.workspaceId, 'Research', null);
        // Keep the transaction (and its lock) open a moment, as a real caller writing a document does.
        await tx.execute('select pg_sleep(0.05)');
        return kb.id;
      }),
    ),
  );
  expect(new Set(bases).size).toBe(1);
  expect(await stack.app.orm.em.fork().count(KnowledgeBaseSchema, { workspaceId: ws.workspaceId, name: 'Research' })).toBe(1);
});

test('a statement run with tx.execute is part of the transaction: it sees its uncommitted writes and rolls back with it', async () => {
  const ws = await stack.workspace();
  await expect(
    stack.app.orm.em.fork().transactional(async (tx) => {
      await findOrCreateKnowledgeBase(tx, ws.workspaceId, 'Rolled back', null);
      const [row] = await tx.execute<Array<{ n: string }>>(
        'select count(*) as n from knowledge_bases where workspace_id = ? and name = ?',
        [ws.workspaceId, 'Rolled back'],
      );
      expect(Number(row.n)).toBe(1);
      throw new Error('roll back');
    }),
  ).rejects.toThrow('roll back');
  expect(await stack.app.orm.em.fork().count(KnowledgeBaseSchema, { workspaceId: ws.workspaceId, name: 'Rolled back' })).toBe(0);
});
