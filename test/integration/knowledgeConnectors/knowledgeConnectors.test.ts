/**
 * Knowledge connectors in the envelope family, over real HTTP and PostgreSQL: create, list (with
 * the providers registry and cursor), get, patch, delete (runs cascade, documents keep their rows
 * with connectorId cleared), required Idempotency-Key, validation, duplicate names, certification,
 * setup_required, and another workspace's ids.
 */
import { startChatFake, type ChatFake } from '../../fakes/chat';
import type { z } from 'zod';
import type { connectorDeletedSchema, connectorListSchema, syncRunListSchema } from '../../../api/schemas/knowledge';
import { startTestApp } from '../../support/harness';
import { addUserWithKey, client, createWorkspace, useTestStack, type Enveloped, type TestApp, type WorkspaceFixture } from '../../kit';
import {
  createBase,
  createConnector,
  createCredential,
  getConnector,
  key,
  knowledgeConfig,
  startRun,
  type ConnectorAnswer,
  type KnowledgeBase,
  type SyncRunAnswer,
} from '../knowledge/support';

type ConnectorList = Enveloped<z.infer<typeof connectorListSchema>>;
type SyncRunList = Enveloped<z.infer<typeof syncRunListSchema>>;
type ConnectorDeleted = Enveloped<z.infer<typeof connectorDeletedSchema>>;

let uncertifiedApp: TestApp;
let chat: ChatFake;
let other: WorkspaceFixture;
let token: string;
let kb: KnowledgeBase;
let credentialId: string;
const META = { contractVersion: 'api-contracts.v1' };

const stack = useTestStack(async () => {
  chat = await startChatFake();
  return { config: await knowledgeConfig() };
});
beforeAll(async () => {
  uncertifiedApp = await startTestApp(await knowledgeConfig({ certified: ['drive', 'wiki', 'repo'] }));
  token = stack.ws.token;
  other = await createWorkspace(stack.app, 'Other');
  kb = await createBase(stack.app, token);
  credentialId = await createCredential(stack.app, token, stack.ws.workspaceId, 'chat', { token: 'xoxb-fake-token', baseUrl: chat.url });
});
stack.beforeClose(async () => {
  await uncertifiedApp?.close();
});
afterAll(async () => {
  await chat?.close();
});

const body = (over: Record<string, unknown> = {}) => ({
  knowledgeBaseId: kb.id,
  providerId: 'chat',
  name: `chat ${key()}`,
  config: { credentialId, channelIds: ['C1'] },
  ...over,
});

describe('create', () => {
  test('201 { connector } in the envelope', async () => {
    const res = await createConnector(stack.app, token, body({ name: '  Support channel  ' }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      ok: true,
      meta: META,
      data: {
        connector: {
          id: expect.stringMatching(/^kc_/),
          workspaceId: stack.ws.workspaceId,
          knowledgeBaseId: kb.id,
          name: 'Support channel',
          providerId: 'chat',
          status: 'idle',
          config: { credentialId, channelIds: ['C1'] },
          cursor: null,
          lastSyncedAt: null,
          nextSyncAt: null,
          lastError: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
      },
    });
  });

  test('Idempotency-Key is required; a replay returns the stored answer', async () => {
    const missing = await stack.api.post<ConnectorAnswer>('/api/v1/knowledge-connectors', body());
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ ok: false, error: { code: 'idempotency_key_invalid', message: expect.any(String) } });
    const bad = await stack.api.post<ConnectorAnswer>('/api/v1/knowledge-connectors', body(), {
      headers: { 'idempotency-key': 'has space' },
    });
    expect(bad.body.error.code).toBe('idempotency_key_invalid');
    const k = key();
    const b = body();
    const first = await createConnector(stack.app, token, b, k);
    const again = await createConnector(stack.app, token, b, k);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  test.each([
    ['unknown providerId', { providerId: 'mail' }],
    ['blank name', { name: '   ' }],
    ['config without credentialId', { config: { channelIds: ['C1'] } }],
    ['config with a blank credentialId', { config: { credentialId: '  ' } }],
    ['config not an object', { config: 'x' }],
    ['missing knowledgeBaseId', { knowledgeBaseId: undefined }],
    ['unknown field', { schedule: '* * * * *' }],
  ])('400 validation_failed: %s', async (_what, over) => {
    const res = await createConnector(stack.app, token, body(over));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
  });

  test('missing, trashed or foreign knowledge base: 404 resource_not_found', async () => {
    expect((await createConnector(stack.app, token, body({ knowledgeBaseId: 'kb_missing' }))).body.error.code).toBe('resource_not_found');
    const trashed = await createBase(stack.app, token);
    await stack.api.patch(`/api/v1/knowledge-bases/${trashed.id}`, { trashed: true });
    expect((await createConnector(stack.app, token, body({ knowledgeBaseId: trashed.id }))).status).toBe(404);
    expect((await createConnector(stack.app, other.token, body())).status).toBe(404);
  });

  test('a duplicate name in the same knowledge base is 409 conflict; another base may reuse it', async () => {
    await createConnector(stack.app, token, body({ name: 'Dup' }));
    const dup = await createConnector(stack.app, token, body({ name: 'Dup' }));
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('conflict');
    const otherKb = await createBase(stack.app, token);
    expect((await createConnector(stack.app, token, body({ name: 'Dup', knowledgeBaseId: otherKb.id }))).status).toBe(201);
  });

  test('config may be omitted (the run then needs setup)', async () => {
    const res = await createConnector(stack.app, token, { knowledgeBaseId: kb.id, providerId: 'repo', name: `bare ${key()}` });
    expect(res.status).toBe(201);
    expect(res.body.data.connector.config).toEqual({});
  });

  test('401 without a key; 403 authorization_failed for a personal key and for a viewer writing', async () => {
    expect((await stack.as().get<ConnectorList>('/api/v1/knowledge-connectors')).body).toEqual({
      ok: false,
      error: { code: 'authentication_required', message: 'Valid bearer API key is required' },
    });
    const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
    expect((await stack.as(personal.token).get<ConnectorList>('/api/v1/knowledge-connectors')).body.error.code).toBe(
      'authorization_failed',
    );
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    expect((await createConnector(stack.app, viewer.token, body())).body.error.code).toBe('authorization_failed');
  });
});

describe('list, get, patch, delete', () => {
  test('list: providers registry, knowledgeBaseId filter, cursor pagination, limit bounds', async () => {
    const kb2 = await createBase(stack.app, token);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await createConnector(stack.app, token, body({ knowledgeBaseId: kb2.id }))).body.data.connector.id);
    const page1 = await stack.api.get<ConnectorList>(`/api/v1/knowledge-connectors?knowledgeBaseId=${kb2.id}&limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.data.connectors.map((c) => c.id)).toEqual([ids[2], ids[1]]);
    expect(page1.body.data.nextCursor).toBe(ids[1]);
    expect(page1.body.data.providers).toEqual(
      ['drive', 'wiki', 'chat', 'repo'].map((id) => ({
        id,
        label: expect.any(String),
        scopes: expect.any(Array),
        certified: true,
        capabilities: ['knowledge.sync'],
      })),
    );
    const page2 = await stack.api.get<ConnectorList>(`/api/v1/knowledge-connectors?knowledgeBaseId=${kb2.id}&limit=2&cursor=${ids[1]}`);
    expect(page2.body.data.connectors.map((c) => c.id)).toEqual([ids[0]]);
    expect(page2.body.data.nextCursor).toBeNull();
    const badCursor = await stack.api.get<ConnectorList>('/api/v1/knowledge-connectors?cursor=kc_unknown');
    expect([badCursor.status, badCursor.body.error.code]).toEqual([400, 'validation_failed']);
    for (const limit of ['0', '101', 'x']) {
      const res = await stack.api.get<ConnectorList>(`/api/v1/knowledge-connectors?limit=${limit}`);
      expect([res.status, res.body.error.code]).toEqual([400, 'request_malformed']);
    }
    const theirs = await stack.as(other.token).get<ConnectorList>('/api/v1/knowledge-connectors');
    expect(theirs.body.data.connectors).toEqual([]);
  });

  test('patch: name, config (with credentialId) and nextSyncAt; validation and duplicates', async () => {
    const c = (await createConnector(stack.app, token, body())).body.data.connector;
    const patch = (b: unknown, k = key()) =>
      stack.api.patch<ConnectorAnswer>(`/api/v1/knowledge-connectors/${c.id}`, b, { headers: { 'idempotency-key': k } });
    const res = await patch({ name: 'Renamed', config: { credentialId, channelIds: ['C2'] }, nextSyncAt: '2030-01-01T00:00:00Z' });
    expect(res.status).toBe(200);
    expect(res.body.data.connector).toMatchObject({
      name: 'Renamed',
      config: { credentialId, channelIds: ['C2'] },
      nextSyncAt: '2030-01-01T00:00:00.000Z',
    });
    expect((await patch({ nextSyncAt: null })).body.data.connector.nextSyncAt).toBeNull();
    expect((await patch({ config: { channelIds: ['C3'] } })).body.error.code).toBe('validation_failed');
    expect((await patch({ name: '' })).body.error.code).toBe('validation_failed');
    expect((await patch({ nextSyncAt: 'tomorrow' })).body.error.code).toBe('validation_failed');
    expect((await patch({ providerId: 'repo' })).body.error.code).toBe('validation_failed');
    await createConnector(stack.app, token, body({ name: 'Taken' }));
    expect((await patch({ name: 'Taken' })).body.error.code).toBe('conflict');
    expect((await stack.api.patch<ConnectorAnswer>(`/api/v1/knowledge-connectors/${c.id}`, { name: 'x' })).body.error.code).toBe(
      'idempotency_key_invalid',
    );
    expect((await getConnector(stack.app, token, c.id))?.name).toBe('Renamed');
  });

  test("another workspace's connector: 404 on every route, nothing changed", async () => {
    const c = (await createConnector(stack.app, token, body())).body.data.connector;
    const h = { 'idempotency-key': key() };
    const calls = [
      stack.as(other.token).get<ConnectorAnswer>(`/api/v1/knowledge-connectors/${c.id}`),
      stack.as(other.token).patch<ConnectorAnswer>(`/api/v1/knowledge-connectors/${c.id}`, { name: 'stolen' }, { headers: h }),
      stack.as(other.token).delete<ConnectorDeleted>(`/api/v1/knowledge-connectors/${c.id}`, { headers: { 'idempotency-key': key() } }),
      stack.as(other.token).get<SyncRunList>(`/api/v1/knowledge-connectors/${c.id}/runs`),
      startRun(stack.app, other.token, c.id),
      stack.as(other.token).get<SyncRunAnswer>(`/api/v1/knowledge-connectors/${c.id}/runs/ksr_x`),
      stack.as(other.token).post<SyncRunAnswer>(`/api/v1/knowledge-connectors/${c.id}/runs/ksr_x/cancel`, undefined, {
        headers: { 'idempotency-key': key() },
      }),
    ];
    for (const res of await Promise.all(calls)) expect([res.status, res.body.error.code]).toEqual([404, 'resource_not_found']);
    expect(await getConnector(stack.app, token, c.id)).toEqual(c);
  });

  test('delete: { deleted: true, connectorId }; runs go, documents stay with connectorId cleared', async () => {
    chat.post('CDEL', ['first message to keep', 'second message to keep']);
    const c = (await createConnector(stack.app, token, body({ config: { credentialId, channelIds: ['CDEL'] } }))).body.data.connector;
    const run = await startRun(stack.app, token, c.id);
    expect(run.status).toBe(201);
    const del = await stack.api.delete<ConnectorDeleted>(`/api/v1/knowledge-connectors/${c.id}`, { headers: { 'idempotency-key': key() } });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ deleted: true, connectorId: c.id });
    expect((await stack.api.get<ConnectorAnswer>(`/api/v1/knowledge-connectors/${c.id}`)).status).toBe(404);
    const em = stack.app.orm.em.fork();
    const runs = await em.getConnection().execute(`select id from knowledge_sync_runs where connector_id = ?`, [c.id]);
    expect(runs).toEqual([]);
    const docs = await em
      .getConnection()
      .execute<Array<{ connector_id: string | null; external_id: string }>>(
        `select connector_id, external_id from knowledge_documents where last_sync_run_id = ?`,
        [run.body.data.run.id],
      );
    expect(docs.length).toBe(2);
    expect(docs.every((d) => d.connector_id === null)).toBe(true);
  });
});

describe('queue preconditions', () => {
  test('an uncertified provider is listed without capabilities and cannot be queued (409)', async () => {
    const list = await client(uncertifiedApp, token).get<ConnectorList>('/api/v1/knowledge-connectors');
    expect(list.body.data.providers.find((p) => p.id === 'chat')).toEqual({
      id: 'chat',
      label: expect.any(String),
      scopes: expect.any(Array),
      certified: false,
      capabilities: [],
    });
    const c = (await createConnector(uncertifiedApp, token, body())).body.data.connector;
    const res = await startRun(uncertifiedApp, token, c.id);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ ok: false, error: { code: 'conflict', message: 'Provider chat has not passed certification.' } });
    expect((await client(uncertifiedApp, token).get<SyncRunList>(`/api/v1/knowledge-connectors/${c.id}/runs`)).body.data.runs).toEqual([]);
  });

  test.each([
    ['no credentialId', undefined, 'credential_missing'],
    ['an unknown credential', 'cred_unknown', 'credential_not_found'],
    ['a credential of another type', 'repo', 'credential_type_incompatible'],
    ["another workspace's credential", 'foreign', 'credential_not_found'],
  ])('setup_required (409, retryable false, details.availability) with %s; no run is created', async (_what, which, reason) => {
    let cred: string | undefined = which;
    if (which === 'repo') cred = await createCredential(stack.app, token, stack.ws.workspaceId, 'repo', { token: 'ghp_x' });
    if (which === 'foreign') cred = await createCredential(stack.app, other.token, other.workspaceId, 'chat', { token: 'xoxb-other' });
    const c = (
      await createConnector(stack.app, token, {
        knowledgeBaseId: kb.id,
        providerId: 'chat',
        name: `setup ${key()}`,
        ...(cred ? { config: { credentialId: cred, channelIds: ['C1'] } } : {}),
      })
    ).body.data.connector;
    const res = await startRun(stack.app, token, c.id);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      ok: false,
      error: {
        code: 'setup_required',
        message: expect.any(String),
        retryable: false,
        details: {
          availability: expect.objectContaining({
            status: 'setup_required',
            reason,
            providerId: 'chat',
            acceptedCredentialTypes: ['chat', 'oauth2'],
          }),
        },
      },
    });
    expect((await stack.api.get<SyncRunList>(`/api/v1/knowledge-connectors/${c.id}/runs`)).body.data.runs).toEqual([]);
  });

  test('an OAuth2 credential without the provider scopes is setup_required with the missing scopes', async () => {
    const cred = await createCredential(stack.app, token, stack.ws.workspaceId, 'oauth2', {
      accessToken: 'xoxb-fake-token',
      scopes: ['channels:history'],
    });
    const c = (await createConnector(stack.app, token, body({ config: { credentialId: cred, channelIds: ['C1'] } }))).body.data.connector;
    const res = await startRun(stack.app, token, c.id);
    expect(res.body.error).toMatchObject({
      code: 'setup_required',
      details: { availability: { reason: 'credential_scopes_missing', missingScopes: ['groups:history'] } },
    });
  });
});
