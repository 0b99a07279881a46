/**
 * Expired idempotency records are purged in bounded passes (services/kernel/idempotencyPurge.ts), one
 * process at a time, and a fresh key keeps replaying its stored answer.
 */
import { IdempotencyRecordSchema } from '../../../db/entities';
import { newId } from '../../../services/kernel/ids';
import { purgeExpiredIdempotencyRecordsOnce } from '../../../services/kernel/idempotencyPurge';
import { http, useTestStack } from '../../kit';

const stack = useTestStack({ worker: false, workspaceName: 'Idempotency purge' });

const HOUR = 3600_000;

/** Writes an expired record straight into the table, as one left by a request a day ago would be. */
async function insertExpired(key: string, expiredAgoMs: number): Promise<void> {
  const expiresAt = new Date(Date.now() - expiredAgoMs);
  await stack.app.orm.em.fork().execute(
    `insert into idempotency_records (id, workspace_id, key, principal_id, fingerprint, state, response_status, response_body, response_headers, created_at, expires_at)
     values (?, ?, ?, 'fixture', 'fixture', 'completed', 201, '{}'::jsonb, '{}'::jsonb, ?, ?)`,
    [newId('idem'), stack.ws.workspaceId, key, new Date(expiresAt.getTime() - 24 * HOUR), expiresAt],
  );
}

const keysOfWorkspace = async () =>
  (await stack.app.orm.em.fork().find(IdempotencyRecordSchema, { workspaceId: stack.ws.workspaceId })).map((r) => r.key).sort();

test('a pass deletes at most its batch of expired records; the fresh ones stay and still replay', async () => {
  const addMember = () =>
    http(stack.app, 'POST', '/api/v1/workspace-members', {
      token: stack.ws.token,
      body: { email: 'fresh-purge@example.test', role: 'member' },
      headers: { 'idempotency-key': 'fresh-key' },
    });
  const first = await addMember();
  expect(first.status).toBe(201);
  for (let i = 0; i < 5; i++) await insertExpired(`expired-${i}`, (i + 1) * HOUR);
  expect(await keysOfWorkspace()).toEqual(['expired-0', 'expired-1', 'expired-2', 'expired-3', 'expired-4', 'fresh-key']);

  // Other test files of this lane may have left expired rows too; the batch bounds the pass either way.
  expect(await purgeExpiredIdempotencyRecordsOnce(stack.app.orm, { batch: 3 })).toBe(3);
  expect((await keysOfWorkspace()).length).toBeGreaterThanOrEqual(3);
  while ((await purgeExpiredIdempotencyRecordsOnce(stack.app.orm, { batch: 3 })) > 0);
  expect(await keysOfWorkspace()).toEqual(['fresh-key']);

  const replay = await addMember();
  expect(replay.status).toBe(201);
  expect(replay.headers.get('idempotency-replayed')).toBe('true');
  expect(replay.body).toEqual(first.body);
});

test('a pass skips while another process holds the purge lock', async () => {
  await insertExpired('expired-locked', HOUR);
  const other = stack.app.orm.em.fork();
  await other.transactional(async (tx) => {
    await tx.execute(`select pg_advisory_xact_lock(hashtext('idempotency-purge'))`);
    expect(await purgeExpiredIdempotencyRecordsOnce(stack.app.orm)).toBe(0);
    expect(await keysOfWorkspace()).toContain('expired-locked');
  });
  expect(await purgeExpiredIdempotencyRecordsOnce(stack.app.orm)).toBeGreaterThanOrEqual(1);
  expect(await keysOfWorkspace()).toEqual(['fresh-key']);
});
