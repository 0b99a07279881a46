/**
 * The knowledge sync run state table, row by row, over real HTTP, PostgreSQL and Temporal with a
 * loopback Slack (chat) server: queue and execute, the lease (claimed, renewed, held, expired and
 * recovered), one-transaction apply, provider and persist failures, cancel, replay, the run id
 * scheme, bounded options and the runs list.
 */
import { createHash } from 'node:crypto';
import { startChatFake, type ChatFake } from '../../fakes/chat';
import type { z } from 'zod';
import type { syncRunListSchema } from '../../../api/schemas/knowledge';
import { startTestWorker } from '../../support/harness';
import { createWorkspace, useTestStack, type Enveloped, type WorkspaceFixture } from '../../kit';
import {
  createBase,
  createConnector,
  createCredential,
  cursorState,
  eventually,
  getConnector,
  getRun,
  requireRun,
  key,
  knowledgeConfig,
  startRun,
  type KnowledgeBase,
  type SearchAnswer,
  type SyncRunAnswer,
} from './support';

type SyncRunList = Enveloped<z.infer<typeof syncRunListSchema>>;

const LEASE_MS = 6_000;
let chat: ChatFake;
let other: WorkspaceFixture;
let token: string;
let kb: KnowledgeBase;
let credentialId: string;
let channel = 0;
/** The worker started after a test stopped the stack's own (the stack closes only the first). */
let replacement: Awaited<ReturnType<typeof startTestWorker>> | null = null;

const stack = useTestStack(async () => {
  chat = await startChatFake();
  return { config: await knowledgeConfig({ leaseMs: LEASE_MS }) };
});
beforeAll(async () => {
  token = stack.ws.token;
  other = await createWorkspace(stack.app, 'Other');
  kb = await createBase(stack.app, token);
  credentialId = await createCredential(stack.app, token, stack.ws.workspaceId, 'chat', { token: 'xoxb-fake-token', baseUrl: chat.url });
});
stack.beforeClose(async () => {
  await replacement?.stop();
});
afterAll(async () => {
  await chat?.close();
});

/** A connector on a fresh channel with `texts` posted. */
async function connectorWith(texts: string[]): Promise<{ id: string; channel: string }> {
  const ch = `C${String(++channel).padStart(4, '0')}`;
  chat.post(ch, texts);
  const res = await createConnector(stack.app, token, {
    knowledgeBaseId: kb.id,
    providerId: 'chat',
    name: `chat ${ch}`,
    config: { credentialId, channelIds: [ch] },
  });
  return { id: res.body.data.connector.id, channel: ch };
}

const runIdOf = (connectorId: string, k: string) =>
  `ksr_${createHash('sha256').update(`${stack.ws.workspaceId}\0${connectorId}\0${k}`).digest('hex').slice(0, 40)}`;

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return stack.app.orm.em.fork().getConnection().execute(query, params);
}

const docsOfRun = (runId: string) =>
  sql<{ external_id: string; enabled: boolean; trashed_at: Date | null; indexing_status: string }>(
    `select external_id, enabled, trashed_at, indexing_status from knowledge_documents where last_sync_run_id = ? order by external_id`,
    [runId],
  );
const historyRequests = (ch: string) =>
  chat.requests.filter((r) => r.path === '/conversations.history' && r.query.get('channel') === ch).length;

describe('(none) → queued → running → succeeded', () => {
  test('POST /runs answers 201 once the batch is applied; the run id is ksr_ + SHA-256(workspace NUL connector NUL key)', async () => {
    const c = await connectorWith(['Deploys happen on Tuesdays.', 'Rollbacks need a ticket.', 'On-call rotates weekly.']);
    const k = key();
    const gate = chat.hold();
    const pending = startRun(stack.app, token, c.id, { options: { maxPages: 5 } }, k);
    await gate.held;
    const runId = runIdOf(c.id, k);
    // running: the lease is claimed (connector syncing) and renewed by heartbeats every third of it.
    const running = await getRun(stack.app, token, c.id, runId);
    expect(running).toMatchObject({ id: runId, status: 'running', startedAt: expect.any(String), finishedAt: null, cursorBefore: null });
    expect((await getConnector(stack.app, token, c.id))?.status).toBe('syncing');
    const [lease] = await sql<{ lease_expires_at: Date }>(`select lease_expires_at from knowledge_sync_runs where id = ?`, [runId]);
    await eventually(async () => {
      const [now] = await sql<{ lease_expires_at: Date }>(`select lease_expires_at from knowledge_sync_runs where id = ?`, [runId]);
      return new Date(now.lease_expires_at) > new Date(lease.lease_expires_at);
    }, 'the lease to be renewed');
    gate.release();

    const res = await pending;
    expect(res.status).toBe(201);
    expect(res.body.ok).toBe(true);
    const run = res.body.data.run;
    expect(run).toEqual({
      id: runId,
      workspaceId: stack.ws.workspaceId,
      connectorId: c.id,
      status: 'succeeded',
      cursorBefore: null,
      cursorAfter: expect.objectContaining({
        state: { [c.channel]: expect.objectContaining({ oldest: expect.any(String), latest: null }) },
      }),
      fullSnapshot: false,
      upsertedCount: 3,
      tombstonedCount: 0,
      error: null,
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    // Lease fields and the fingerprint are never serialized.
    for (const hidden of ['leaseToken', 'leaseExpiresAt', 'requestFingerprint', 'options']) expect(run).not.toHaveProperty(hidden);
    const connector = await getConnector(stack.app, token, c.id);
    expect(connector).toMatchObject({ status: 'succeeded', lastError: null, lastSyncedAt: expect.any(String), cursor: run.cursorAfter });
    for (const hidden of ['syncLeaseRunId', 'syncLeaseToken', 'syncLeaseExpiresAt']) expect(connector).not.toHaveProperty(hidden);
    const docs = await docsOfRun(runId);
    expect(docs.map((d) => d.external_id)).toEqual(
      chat.channels
        .get(c.channel)!
        .map((m) => `chat:${c.channel}:${m.ts}`)
        .sort(),
    );
    expect(docs.every((d) => d.enabled && d.trashed_at === null && ['pending', 'processing', 'ready'].includes(d.indexing_status))).toBe(
      true,
    );
    // The upserted documents are indexed by a child workflow of the run.
    await eventually(
      async () => (await docsOfRun(runId)).every((d) => d.indexing_status === 'ready'),
      'the synced documents to be indexed',
    );
    const search = await stack.api.post<SearchAnswer>('/api/v1/knowledge-bases/search', {
      knowledgeBaseId: kb.id,
      query: 'rollbacks ticket',
      limit: 3,
    });
    expect(search.body.results[0]).toMatchObject({ document: { connectorId: c.id, source: 'connector' } });

    // The execution is the run, visible in Temporal under the workspace's search attributes.
    const description = await stack.app.deps.temporal.client.workflow.getHandle(runId).describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.searchAttributes).toMatchObject({
      WorkspaceId: [stack.ws.workspaceId],
      SvcTrigger: ['knowledge.sync'],
      SvcName: [`chat ${c.channel}`],
    });
    const indexing = await stack.app.deps.temporal.client.workflow.getHandle(`knowledge-index-${runId}`).describe();
    expect(indexing.searchAttributes).toMatchObject({
      WorkspaceId: [stack.ws.workspaceId],
      SvcTrigger: ['knowledge'],
      SvcName: [`chat ${c.channel}`],
    });
  });

  test('the next run starts from the stored cursor and moves it only when the batch returns one', async () => {
    const c = await connectorWith(['one', 'two']);
    const first = (await startRun(stack.app, token, c.id)).body.data.run;
    chat.post(c.channel, ['three']);
    const second = (await startRun(stack.app, token, c.id)).body.data.run;
    expect(second.cursorBefore).toEqual(first.cursorAfter);
    expect(second.upsertedCount).toBe(1);
    const request = chat.requests.filter((r) => r.query.get('channel') === c.channel).pop()!;
    expect(request.query.get('oldest')).toBe(cursorState(first)[c.channel].oldest);
  });
});

describe('running → failed', () => {
  test('a provider failure answers the error envelope; the run is persisted failed and the connector carries its error', async () => {
    const c = await connectorWith(['will fail']);
    chat.failNext(1, { status: 500, json: { ok: false, error: 'internal_error' } });
    const k = key();
    const res = await startRun(stack.app, token, c.id, { options: {} }, k);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      ok: false,
      error: { code: 'internal_error', message: expect.stringContaining('Provider chat answered 500') },
    });
    const run = await requireRun(stack.app, token, c.id, runIdOf(c.id, k));
    expect(run).toMatchObject({ status: 'failed', error: res.body.error.message, finishedAt: expect.any(String), upsertedCount: 0 });
    expect(await getConnector(stack.app, token, c.id)).toMatchObject({ status: 'failed', lastError: run.error, cursor: null });
    expect(await docsOfRun(run.id)).toEqual([]);

    // failed → replay with the same key and options: re-queued and executed again.
    const replay = await startRun(stack.app, token, c.id, { options: {} }, k);
    expect(replay.status).toBe(201);
    expect(replay.body.data.run).toMatchObject({ id: run.id, status: 'succeeded', error: null, upsertedCount: 1 });
    expect(await getConnector(stack.app, token, c.id)).toMatchObject({ status: 'succeeded', lastError: null });
  });

  test('a persist failure rolls the whole batch back: no document of it is kept', async () => {
    const c = await connectorWith(['first fine message', 'second fine message', 'BOOM-PERSIST refuses this one', 'last fine message']);
    await sql(`create or replace function knowledge_test_refuse() returns trigger language plpgsql as $$
               begin if new.content_text like '%BOOM-PERSIST%' then raise exception 'refused by test trigger'; end if; return new; end $$`);
    await sql(
      `create trigger knowledge_test_refuse before insert or update on knowledge_documents for each row execute function knowledge_test_refuse()`,
    );
    try {
      const k = key();
      const res = await startRun(stack.app, token, c.id, { options: {} }, k);
      expect(res.status).toBe(500);
      expect(res.body.error.message).toContain('Persisting the batch failed');
      const run = await requireRun(stack.app, token, c.id, runIdOf(c.id, k));
      expect(run).toMatchObject({ status: 'failed', upsertedCount: 0 });
      expect(await docsOfRun(run.id)).toEqual([]);
      expect(await sql(`select 1 from knowledge_documents where connector_id = ?`, [c.id])).toEqual([]);
      expect((await getConnector(stack.app, token, c.id))?.cursor).toBeNull();
    } finally {
      await sql(`drop trigger if exists knowledge_test_refuse on knowledge_documents`);
    }
  });
});

describe('cancel', () => {
  test('running → cancelled: the execution is cancelled, nothing is applied, terminal runs answer 409', async () => {
    const c = await connectorWith(['never applied']);
    const k = key();
    const runId = runIdOf(c.id, k);
    const gate = chat.hold();
    const pending = startRun(stack.app, token, c.id, { options: {} }, k);
    await gate.held;
    const cancel = await stack.api.post<SyncRunAnswer>(`/api/v1/knowledge-connectors/${c.id}/runs/${runId}/cancel`, undefined, {
      headers: { 'idempotency-key': key() },
    });
    expect(cancel.status).toBe(200);
    expect(cancel.body.data.run).toMatchObject({ id: runId, status: 'cancelled', finishedAt: expect.any(String) });
    const answered = await pending;
    expect(answered.status).toBe(409);
    expect(answered.body.error).toEqual({ code: 'conflict', message: 'Knowledge sync run was cancelled.' });
    gate.release();
    expect((await getConnector(stack.app, token, c.id))?.status).toBe('idle');
    const closed = await eventually(async () => {
      const d = await stack.app.deps.temporal.client.workflow.getHandle(runId).describe();
      return d.status.name !== 'RUNNING' && d;
    }, 'the execution to close');
    expect(closed.status.name).toBe('CANCELLED');
    expect(await docsOfRun(runId)).toEqual([]);

    const again = await stack.api.post<SyncRunAnswer>(`/api/v1/knowledge-connectors/${c.id}/runs/${runId}/cancel`, undefined, {
      headers: { 'idempotency-key': key() },
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toEqual({ code: 'conflict', message: 'Cannot cancel a cancelled knowledge sync run.' });
    expect((await stack.api.post<SyncRunAnswer>(`/api/v1/knowledge-connectors/${c.id}/runs/${runId}/cancel`)).body.error.code).toBe(
      'idempotency_key_invalid',
    );

    // cancelled → replay with the same key and options: re-queued and executed.
    const replay = await startRun(stack.app, token, c.id, { options: {} }, k);
    expect(replay.status).toBe(201);
    expect(replay.body.data.run).toMatchObject({ id: runId, status: 'succeeded', upsertedCount: 1 });
    const done = await stack.api.post<SyncRunAnswer>(`/api/v1/knowledge-connectors/${c.id}/runs/${runId}/cancel`, undefined, {
      headers: { 'idempotency-key': key() },
    });
    expect(done.body.error).toEqual({ code: 'conflict', message: 'Cannot cancel a succeeded knowledge sync run.' });
  });

  test('queued → cancelled; the cancelled run cannot be started: 409 Knowledge sync run is not queued.', async () => {
    const c = await connectorWith(['queued only']);
    const k = key();
    const runId = runIdOf(c.id, k);
    const original = stack.worker;
    await original.stop();
    // The stack closes its first worker again at the end; stopping twice is harmless.
    let pending: ReturnType<typeof startRun> | undefined;
    try {
      pending = startRun(stack.app, token, c.id, { options: {} }, k);
      const queued = await eventually(async () => getRun(stack.app, token, c.id, runId), 'the run to be queued');
      expect(queued.status).toBe('queued');
      const cancel = await stack.api.post<SyncRunAnswer>(`/api/v1/knowledge-connectors/${c.id}/runs/${runId}/cancel`, undefined, {
        headers: { 'idempotency-key': key() },
      });
      expect(cancel.body.data.run.status).toBe('cancelled');
    } finally {
      replacement = await startTestWorker(stack.app);
    }
    const res = await pending!;
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({ code: 'conflict', message: 'Knowledge sync run is not queued.' });
    expect((await getRun(stack.app, token, c.id, runId))?.status).toBe('cancelled');
    expect(historyRequests(c.channel)).toBe(0);
  });
});

describe('replay and options', () => {
  test('succeeded → replay returns the run unchanged without a second apply; other options with the same key 409', async () => {
    const c = await connectorWith(['applied once']);
    const k = key();
    const first = await startRun(stack.app, token, c.id, { options: { maxItems: 10 } }, k);
    const calls = historyRequests(c.channel);
    const replay = await startRun(stack.app, token, c.id, { options: { maxItems: 10 } }, k);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(historyRequests(c.channel)).toBe(calls);
    const otherOptions = await startRun(stack.app, token, c.id, { options: { maxItems: 11 } }, k);
    expect(otherOptions.status).toBe(409);
    expect(otherOptions.body.error.code).toBe('conflict');
  });

  test.each([
    ['records', { records: [{ id: 'x' }] }, 'Only bounded sync options are accepted.'],
    ['cursor', { cursor: { x: 1 } }, 'Only bounded sync options are accepted.'],
    ['defer', { defer: true, options: {} }, 'Only bounded sync options are accepted.'],
    ['maxPages 0', { options: { maxPages: 0 } }, null],
    ['maxPages 51', { options: { maxPages: 51 } }, null],
    ['maxItems 5001', { options: { maxItems: 5001 } }, null],
    ['maxBytes 1023', { options: { maxBytes: 1023 } }, null],
    ['maxBytes 52428801', { options: { maxBytes: 52428801 } }, null],
    ['timeoutMs 999', { options: { timeoutMs: 999 } }, null],
    ['timeoutMs 120001', { options: { timeoutMs: 120001 } }, null],
    ['a non-number', { options: { maxItems: '10' } }, null],
    ['an unknown option', { options: { maxRecords: 10 } }, null],
  ])('400 validation_failed for %s; no run is created', async (_what, body, message) => {
    const c = await connectorWith(['x']);
    const res = await startRun(stack.app, token, c.id, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    if (message) expect(res.body.error.message).toBe(message);
    expect((await stack.api.get<SyncRunList>(`/api/v1/knowledge-connectors/${c.id}/runs`)).body.data.runs).toEqual([]);
  });

  test('bounds are inclusive, and an empty body means the defaults; a missing key is 400', async () => {
    const c = await connectorWith(['bounds']);
    expect(
      (await startRun(stack.app, token, c.id, { options: { maxPages: 50, maxItems: 5000, maxBytes: 52428800, timeoutMs: 120000 } })).status,
    ).toBe(201);
    expect(
      (await startRun(stack.app, token, c.id, { options: { maxPages: 1, maxItems: 1, maxBytes: 1024, timeoutMs: 1000 } })).status,
    ).toBe(201);
    expect((await startRun(stack.app, token, c.id, {})).status).toBe(201);
    const noKey = await stack.api.post<SyncRunAnswer>(`/api/v1/knowledge-connectors/${c.id}/runs`, { options: {} });
    expect([noKey.status, noKey.body.error.code]).toEqual([400, 'idempotency_key_invalid']);
  });

  test('runs list: newest first, cursor is the last run id, limit 1 to 100', async () => {
    const c = await connectorWith(['listed']);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await startRun(stack.app, token, c.id)).body.data.run.id);
    const page1 = await stack.api.get<SyncRunList>(`/api/v1/knowledge-connectors/${c.id}/runs?limit=2`);
    expect(page1.body.data.runs.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    expect(page1.body.data.nextCursor).toBe(ids[1]);
    const page2 = await stack.api.get<SyncRunList>(`/api/v1/knowledge-connectors/${c.id}/runs?limit=2&cursor=${ids[1]}`);
    expect(page2.body.data).toEqual({ runs: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    expect((await stack.api.get<SyncRunList>(`/api/v1/knowledge-connectors/${c.id}/runs?cursor=ksr_nope`)).body.error.code).toBe(
      'validation_failed',
    );
    expect((await stack.api.get<SyncRunList>(`/api/v1/knowledge-connectors/${c.id}/runs?limit=0`)).body.error.code).toBe(
      'request_malformed',
    );
    expect((await stack.as(other.token).get<SyncRunAnswer>(`/api/v1/knowledge-connectors/${c.id}/runs/${ids[0]}`)).status).toBe(404);
  });
});

describe('lease', () => {
  test('running → failed when a newer start finds the lease expired; while it holds, a newer run is refused and stays queued', async () => {
    const c = await connectorWith(['lease one', 'lease two']);
    const kA = key();
    const runA = runIdOf(c.id, kA);
    const gate = chat.hold();
    const pendingA = startRun(stack.app, token, c.id, { options: {} }, kA);
    await gate.held;
    // The execution of A is lost (terminated, as an operator could): its lease is no longer renewed.
    await stack.app.deps.temporal.client.workflow.getHandle(runA).terminate('test: lost execution');
    expect((await pendingA).status).toBe(500);
    expect((await getRun(stack.app, token, c.id, runA))?.status).toBe('running');

    const kB = key();
    const runB = runIdOf(c.id, kB);
    const refused = await startRun(stack.app, token, c.id, { options: {} }, kB);
    const [{ expires }] = await sql<{ expires: Date }>(`select sync_lease_expires_at as expires from knowledge_connectors where id = ?`, [
      c.id,
    ]);
    if (new Date(expires) > new Date()) {
      expect(refused.status).toBe(409);
      expect(refused.body.error).toEqual({ code: 'conflict', message: expect.stringContaining(`is already syncing (run ${runA})`) });
      expect((await getRun(stack.app, token, c.id, runB))?.status).toBe('queued');
    }
    // A's activity learns from its next heartbeat that its execution is gone and stops renewing.
    await eventually(
      async () => (await sql(`select 1 from knowledge_connectors where id = ? and sync_lease_expires_at < now()`, [c.id])).length > 0,
      'the lease of A to expire',
      LEASE_MS * 4,
    );
    gate.release();

    const recovered = await startRun(stack.app, token, c.id, { options: {} }, kB);
    expect(recovered.status).toBe(201);
    expect(recovered.body.data.run).toMatchObject({ id: runB, status: 'succeeded', upsertedCount: 2 });
    expect(await getRun(stack.app, token, c.id, runA)).toMatchObject({
      status: 'failed',
      error: 'Knowledge sync run lease expired and was recovered by a newer run.',
    });
    expect(await docsOfRun(runA)).toEqual([]);
  });
});
