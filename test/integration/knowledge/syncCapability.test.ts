/**
 * The agent capability `knowledge.sync` over real HTTP, PostgreSQL and Temporal with a loopback
 * Slack (chat) server: the same path as POST …/runs (same run id for the same key, replays across
 * both), confirmation and idempotency required, bounded options, uncertified providers and
 * another workspace's connector refused. The deployment sets an explicit CREDENTIALS_KEY: the
 * connector's credential is sealed with it (not with the SECRET_KEY-derived key), and syncs
 * still read it, at queue time (API) and in the activity (worker).
 */
import { createHash, randomBytes } from 'node:crypto';
import { CredentialSchema } from '../../../db/entities';
import { credentialKeyring, openCredential } from '../../../services/credentials';
import { startChatFake, type ChatFake } from '../../fakes/chat';
import type { z } from 'zod';
import type { connectorListSchema, syncRunListSchema } from '../../../api/schemas/knowledge';
import { TEST_SECRET_KEY } from '../../support/harness';
import { createWorkspace, useTestStack, type Enveloped, type WorkspaceFixture } from '../../kit';
import {
  createBase,
  createConnector,
  createCredential,
  getRun,
  key,
  knowledgeConfig,
  startRun,
  type KnowledgeBase,
  type SyncRun,
} from './support';

type SyncRunList = Enveloped<z.infer<typeof syncRunListSchema>>;
type ConnectorList = Enveloped<z.infer<typeof connectorListSchema>>;
/** The capability's answer (its schema is declared in api/routes/knowledgeConnectors.ts): the sync run it started. */
type CapabilityAnswer = Enveloped<{ capability: 'knowledge.sync'; effect: 'write'; run: SyncRun }>;

const CAPABILITY = '/api/v1/knowledge-connectors/capabilities/knowledge.sync';
const CREDENTIALS_KEY = randomBytes(32).toString('base64');
let chat: ChatFake;
let other: WorkspaceFixture;
let token: string;
let kb: KnowledgeBase;
let credentialId: string;
let channel = 0;

const stack = useTestStack(async () => {
  chat = await startChatFake();
  const config = await knowledgeConfig();
  const base = (await import('../../../services/kernel/config')).loadConfig({});
  return { config: { ...config, credentials: { ...base.credentials, key: CREDENTIALS_KEY } } };
});
beforeAll(async () => {
  token = stack.ws.token;
  other = await createWorkspace(stack.app, 'Other');
  kb = await createBase(stack.app, token);
  credentialId = await createCredential(stack.app, token, stack.ws.workspaceId, 'chat', { token: 'xoxb-fake-token', baseUrl: chat.url });
});
afterAll(async () => {
  await chat?.close();
});

async function connectorWith(texts: string[], ws: { token: string } = { token }, base = kb, cred = credentialId): Promise<string> {
  const ch = `K${String(++channel).padStart(4, '0')}`;
  chat.post(ch, texts);
  const res = await createConnector(stack.app, ws.token, {
    knowledgeBaseId: base.id,
    providerId: 'chat',
    name: `chat ${ch}`,
    config: { credentialId: cred, channelIds: [ch] },
  });
  expect(res.status).toBe(201);
  return res.body.data.connector.id;
}
const invoke = (body: unknown, idemKey: string | null = key(), t = token) =>
  stack.as(t).post<CapabilityAnswer>(CAPABILITY, body, { headers: idemKey ? { 'idempotency-key': idemKey } : {} });
const runIdOf = (workspaceId: string, connectorId: string, k: string) =>
  `ksr_${createHash('sha256').update(`${workspaceId}\0${connectorId}\0${k}`).digest('hex').slice(0, 40)}`;

test('the credential is sealed with CREDENTIALS_KEY, which the SECRET_KEY-derived key alone cannot open', async () => {
  const row = await stack.app.orm.em.fork().findOneOrFail(CredentialSchema, { id: credentialId });
  const secretOnly = credentialKeyring({ key: undefined, previousKeys: [], secretKey: TEST_SECRET_KEY })!;
  expect(() => openCredential(secretOnly, row)).toThrow();
  const configured = credentialKeyring({ key: CREDENTIALS_KEY, previousKeys: [], secretKey: TEST_SECRET_KEY })!;
  expect(openCredential(configured, row)).toMatchObject({ token: 'xoxb-fake-token' });
});

test('knowledge.sync runs the connector like POST …/runs: 201 with the applied run, same run id for the same key', async () => {
  const connectorId = await connectorWith(['Invoices are due in 30 days.', 'Refunds take a week.']);
  const k = key();
  const res = await invoke({ input: { connectorId, maxItems: 50 }, confirm: true }, k);
  expect(res.status).toBe(201);
  expect(res.body.ok).toBe(true);
  expect(res.body.data).toEqual({
    capability: 'knowledge.sync',
    effect: 'write',
    run: expect.objectContaining({ id: runIdOf(stack.ws.workspaceId, connectorId, k), connectorId, status: 'succeeded', upsertedCount: 2 }),
  });
  expect(res.body.data.run).not.toHaveProperty('requestFingerprint');

  // The same key and options on the REST route is the same run: a replay, no second apply.
  const calls = chat.requests.length;
  const rest = await startRun(stack.app, token, connectorId, { options: { maxItems: 50 } }, k);
  expect(rest.status).toBe(201);
  expect(rest.headers.get('idempotency-replayed')).toBe('true');
  expect(rest.body.data.run).toEqual(res.body.data.run);
  const again = await invoke({ input: { connectorId, maxItems: 50 }, confirm: true }, k);
  expect(again.headers.get('idempotency-replayed')).toBe('true');
  expect(again.body.data.run).toEqual(res.body.data.run);
  expect(chat.requests.length).toBe(calls);
  // Other options with the same key: 409 as on the runs route.
  const otherOptions = await invoke({ input: { connectorId, maxItems: 51 }, confirm: true }, k);
  expect([otherOptions.status, otherOptions.body.error.code]).toEqual([409, 'conflict']);
});

test('confirmation and idempotency are required; options are bounded; nothing runs when refused', async () => {
  const connectorId = await connectorWith(['refused']);
  const noConfirm = await invoke({ input: { connectorId } });
  expect([noConfirm.status, noConfirm.body.error]).toEqual([
    400,
    { code: 'validation_failed', message: 'knowledge.sync changes the knowledge base: send confirm: true to run it.' },
  ]);
  const falseConfirm = await invoke({ input: { connectorId }, confirm: false });
  expect(falseConfirm.status).toBe(400);
  const noKey = await invoke({ input: { connectorId }, confirm: true }, null);
  expect([noKey.status, noKey.body.error.code]).toEqual([400, 'idempotency_key_invalid']);
  for (const input of [
    {},
    { connectorId, maxPages: 51 },
    { connectorId, maxBytes: 1023 },
    { connectorId, timeoutMs: 120001 },
    { connectorId, records: [] },
  ]) {
    const res = await invoke({ input, confirm: true });
    expect([res.status, res.body.error.code]).toEqual([400, 'validation_failed']);
  }
  expect((await invoke({ input: { connectorId }, confirm: true, options: {} })).status).toBe(400);
  expect((await stack.api.get<SyncRunList>(`/api/v1/knowledge-connectors/${connectorId}/runs`)).body.data.runs).toEqual([]);
});

test("another workspace's key gets 404 for the connector and nothing runs", async () => {
  const connectorId = await connectorWith(['private']);
  const calls = chat.requests.length;
  const k = key();
  const res = await invoke({ input: { connectorId }, confirm: true }, k, other.token);
  expect([res.status, res.body.error.code]).toEqual([404, 'resource_not_found']);
  expect(chat.requests.length).toBe(calls);
  expect(await getRun(stack.app, token, connectorId, runIdOf(stack.ws.workspaceId, connectorId, k))).toBeUndefined();
  expect(await getRun(stack.app, token, connectorId, runIdOf(other.workspaceId, connectorId, k))).toBeUndefined();
});

test('an uncertified provider offers no knowledge.sync capability: 409 and no run', async () => {
  const connectorId = await connectorWith(['uncertified']);
  stack.app.deps.services.knowledge.config.certifiedProviders = stack.app.deps.services.knowledge.config.certifiedProviders.filter(
    (p) => p !== 'chat',
  );
  try {
    const list = await stack.api.get<ConnectorList>('/api/v1/knowledge-connectors');
    expect(list.body.data.providers.find((p) => p.id === 'chat')).toMatchObject({ certified: false, capabilities: [] });
    const res = await invoke({ input: { connectorId }, confirm: true });
    expect([res.status, res.body.error]).toEqual([409, { code: 'conflict', message: 'Provider chat has not passed certification.' }]);
  } finally {
    stack.app.deps.services.knowledge.config.certifiedProviders = [...stack.app.deps.services.knowledge.config.certifiedProviders, 'chat'];
  }
  expect((await stack.api.get<SyncRunList>(`/api/v1/knowledge-connectors/${connectorId}/runs`)).body.data.runs).toEqual([]);
});
