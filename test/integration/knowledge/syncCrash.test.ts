/**
 * A worker process SIGKILLed in the middle of a sync run (its provider request in flight) is
 * replaced: Temporal notices the missing heartbeats before the lease expires and retries the
 * activity on the new worker, which renews the same lease; the waiting POST answers 201 and the
 * batch is applied exactly once.
 */
import type { ChildProcess } from 'node:child_process';
import { startChatFake, type ChatFake } from '../../fakes/chat';
import { http, useTestStack } from '../../kit';
import { createBase, createConnector, createCredential, getRun, key, killWorker, knowledgeConfig, spawnWorker, startRun } from './support';

const LEASE_MS = 6_000;
let chat: ChatFake;
let workerEnv: Record<string, string>;

beforeAll(async () => {
  chat = await startChatFake();
});
// The worker is a separate process the test kills: the stack runs none of its own.
const stack = useTestStack(async () => {
  const config = await knowledgeConfig({ leaseMs: LEASE_MS });
  workerEnv = { BLOB_DIR: config.blobs!.localDir, KNOWLEDGE_SYNC_LEASE_MS: String(LEASE_MS) };
  return { worker: false, config };
});
afterAll(async () => {
  await chat?.close();
});

test('a sync run survives its worker being killed mid-fetch and applies its batch once', async () => {
  let worker: ChildProcess = await spawnWorker(workerEnv);
  try {
    const kb = await createBase(stack.app, stack.ws.token);
    const credentialId = await createCredential(stack.app, stack.ws.token, stack.ws.workspaceId, 'chat', {
      token: 'xoxb-fake-token',
      baseUrl: chat.url,
    });
    chat.post('CCRASH', ['before the crash', 'during the crash', 'after the crash']);
    const connector = (
      await createConnector(stack.app, stack.ws.token, {
        knowledgeBaseId: kb.id,
        providerId: 'chat',
        name: 'crash',
        config: { credentialId, channelIds: ['CCRASH'] },
      })
    ).body.data.connector;
    const k = key();
    const gate = chat.hold();
    const pending = startRun(stack.app, stack.ws.token, connector.id, { options: {} }, k);
    await gate.held;
    const list = await http<{ data: { runs: Array<{ id: string }> } }>(
      stack.app,
      'GET',
      `/api/v1/knowledge-connectors/${connector.id}/runs`,
      { token: stack.ws.token },
    );
    const runId = list.body.data.runs[0].id;
    expect((await getRun(stack.app, stack.ws.token, connector.id, runId))?.status).toBe('running');

    await killWorker(worker);
    gate.release();
    worker = await spawnWorker(workerEnv);

    const res = await pending;
    expect(res.status).toBe(201);
    expect(res.body.data.run).toMatchObject({ id: runId, status: 'succeeded', upsertedCount: 3 });
    const docs = await stack.app.orm.em
      .fork()
      .getConnection()
      .execute(`select external_id from knowledge_documents where connector_id = ?`, [connector.id]);
    expect(docs.length).toBe(3);
    // The first attempt's request and the retry's: the batch was fetched twice and applied once.
    expect(chat.requests.filter((r) => r.query.get('channel') === 'CCRASH').length).toBe(2);
  } finally {
    await killWorker(worker);
  }
}, 150_000);
