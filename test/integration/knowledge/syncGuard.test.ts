/**
 * A knowledge sync whose provider address the outbound guard refuses (issue 27): the worker runs
 * with private networks disallowed, in a Temporal namespace of this file alone (no other file's
 * worker, which may reach loopback, picks up its tasks). The answer is 409 `setup_required` in
 * the envelope, not a 5xx; the run and connector are failed with the reason; the provider is
 * never contacted; and once the address is allowed, a replay of the same key syncs.
 */
import type { ChildProcess } from 'node:child_process';
import { startChatFake, type ChatFake } from '../../fakes/chat';
import { useTestStack } from '../../kit';
import { ensureNamespace } from '../../support/namespaces';
import { killWorker, spawnWorker } from '../../support/workerProcess';
import { createBase, createConnector, createCredential, getConnector, getRun, key, knowledgeConfig, startRun } from './support';

const NAMESPACE = 'knowledge-guarded';
let chat: ChatFake;
let worker: ChildProcess | undefined;
const workerEnv = () => ({ TEMPORAL_NAMESPACE: NAMESPACE });

beforeAll(async () => {
  chat = await startChatFake();
  await ensureNamespace(NAMESPACE);
});
// The worker is a separate process (on its own namespace), not the stack's.
const stack = useTestStack(async () => ({ worker: false, config: await knowledgeConfig(), temporal: { namespace: NAMESPACE } }));
beforeAll(async () => {
  worker = await spawnWorker({ ...workerEnv(), OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false' });
}, 120_000);
stack.beforeClose(async () => {
  if (worker) await killWorker(worker);
});
afterAll(async () => {
  await chat?.close();
});

test('a refused provider address answers 409 setup_required (never 5xx), fails the run with the reason, and a replay syncs once the address is allowed', async () => {
  const kb = await createBase(stack.app, stack.ws.token);
  const credentialId = await createCredential(stack.app, stack.ws.token, stack.ws.workspaceId, 'chat', {
    token: 'xoxb-fake-token',
    baseUrl: chat.url,
  });
  chat.post('C0001', ['Deploys happen on Tuesdays.']);
  const created = await createConnector(stack.app, stack.ws.token, {
    knowledgeBaseId: kb.id,
    providerId: 'chat',
    name: 'guarded chat',
    config: { credentialId, channelIds: ['C0001'] },
  });
  expect(created.status).toBe(201);
  const connectorId = created.body.data.connector.id;
  const requests = chat.requests.length;

  const keys = [key(), key(), key()];
  for (const k of keys) {
    const res = await startRun(stack.app, stack.ws.token, connectorId, { options: { maxPages: 1 } }, k);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      ok: false,
      error: {
        code: 'setup_required',
        message: expect.stringMatching(
          /^Knowledge connector \S+ needs setup: the outbound guard refuses its provider's address .*Outbound request refused: 127\.0\.0\.1 is a loopback address/,
        ),
        retryable: false,
        details: {
          availability: expect.objectContaining({
            status: 'setup_required',
            reason: 'provider_address_refused',
            providerId: 'chat',
            credentialId,
            refusal: expect.stringMatching(/loopback/),
          }),
        },
      },
    });
  }
  expect(chat.requests.length).toBe(requests);
  const runs = await stack.app.orm.em
    .fork()
    .getConnection()
    .execute(`select id, status, error from knowledge_sync_runs where connector_id = ? order by created_at`, [connectorId]);
  expect(runs).toHaveLength(3);
  for (const run of runs) expect(run).toMatchObject({ status: 'failed', error: expect.stringMatching(/outbound guard refuses/) });
  const connector = await getConnector(stack.app, stack.ws.token, connectorId);
  expect(connector).toMatchObject({ status: 'failed', lastError: expect.stringMatching(/outbound guard refuses/) });

  // The deployment allows the address now (as a fixed baseUrl would be allowed): the same key re-queues the failed run and syncs.
  await killWorker(worker!);
  worker = await spawnWorker({ ...workerEnv(), OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
  const replay = await startRun(stack.app, stack.ws.token, connectorId, { options: { maxPages: 1 } }, keys[0]);
  expect(replay.status).toBe(201);
  expect(replay.body.data.run).toMatchObject({ status: 'succeeded', upsertedCount: 1, error: null });
  expect((await getRun(stack.app, stack.ws.token, connectorId, replay.body.data.run.id))?.status).toBe('succeeded');
}, 180_000);
