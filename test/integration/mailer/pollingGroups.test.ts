/** Polling groups: provider and interval bounds, identity upsert, PATCH, workspace scoping. */
import { addUserWithKey, createWorkspace, http, startTestApp, type TestApp, type WorkspaceFixture } from '../../support/harness';

let app: TestApp;
let ws: WorkspaceFixture;
let other: WorkspaceFixture;
const P = '/api/v1/mailer/polling-groups';

beforeAll(async () => {
  app = await startTestApp();
  ws = await createWorkspace(app);
  other = await createWorkspace(app, 'Other');
});
afterAll(() => app?.close());

async function credential(type: string, token = ws.token): Promise<string> {
  const res = await http(app, 'POST', '/api/v1/credentials', {
    token,
    body: { name: `${type}-${Math.random().toString(36).slice(2)}`, type, value: { token: 'provider-token-0123456789' } },
  });
  expect(res.status).toBe(201);
  return res.body.credential.id;
}

test('POST creates (201, default interval 300) and upserts the same identity (200); bounds and provider are checked', async () => {
  const credentialId = await credential('mailA');
  const created = await http(app, 'POST', P, { token: ws.token, body: { provider: 'mailA', credentialId } });
  expect(created.status).toBe(201);
  expect(created.body.pollingGroup).toMatchObject({
    provider: 'mailA',
    credentialId,
    googleDwdConfigId: null,
    intervalSeconds: 300,
    enabled: true,
    cursor: null,
    lastPolledAt: null,
    lastError: null,
  });
  expect(created.body.pollingGroup.nextPollAt).toEqual(expect.any(String));

  const upserted = await http(app, 'POST', P, {
    token: ws.token,
    body: { provider: 'mailA', credentialId, intervalSeconds: 60, enabled: false },
  });
  expect(upserted.status).toBe(200);
  expect(upserted.body.pollingGroup).toMatchObject({
    id: created.body.pollingGroup.id,
    intervalSeconds: 60,
    enabled: false,
    nextPollAt: null,
  });
  const list = await http(app, 'GET', P, { token: ws.token });
  expect(list.body.pollingGroups.filter((g: { credentialId: string }) => g.credentialId === credentialId)).toHaveLength(1);

  for (const intervalSeconds of [59, 86_401, 1.5]) {
    expect((await http(app, 'POST', P, { token: ws.token, body: { provider: 'mailA', credentialId, intervalSeconds } })).status).toBe(400);
  }
  expect((await http(app, 'POST', P, { token: ws.token, body: { provider: 'imap', credentialId } })).status).toBe(400);
  expect((await http(app, 'POST', P, { token: ws.token, body: { provider: 'mailB', credentialId } })).status).toBe(400);
  expect((await http(app, 'POST', P, { token: ws.token, body: { provider: 'mailA' } })).status).toBe(400);
  expect((await http(app, 'POST', P, { token: ws.token, body: { provider: 'mailB', googleDwdConfigId: 'dwd_1' } })).status).toBe(400);
  expect((await http(app, 'POST', P, { token: ws.token, body: { provider: 'mailA', credentialId: 'cred_missing' } })).status).toBe(404);
  expect((await http(app, 'POST', P, { token: other.token, body: { provider: 'mailA', credentialId } })).status).toBe(404);

  const mailB = await credential('mailB');
  expect(
    (await http(app, 'POST', P, { token: ws.token, body: { provider: 'mailB', credentialId: mailB, intervalSeconds: 86_400 } })).status,
  ).toBe(201);
});

test('GET and PATCH by id; another workspace gets 404 and changes nothing; non-workspace keys 403', async () => {
  const credentialId = await credential('mailB');
  const { body } = await http(app, 'POST', P, { token: ws.token, body: { provider: 'mailB', credentialId } });
  const id = body.pollingGroup.id;
  expect((await http(app, 'GET', `${P}/${id}`, { token: ws.token })).body.pollingGroup.id).toBe(id);
  const patched = await http(app, 'PATCH', `${P}/${id}`, { token: ws.token, body: { intervalSeconds: 3600 } });
  expect(patched.status).toBe(200);
  expect(patched.body.pollingGroup).toMatchObject({ intervalSeconds: 3600, enabled: true });
  const off = await http(app, 'PATCH', `${P}/${id}`, { token: ws.token, body: { enabled: false } });
  expect(off.body.pollingGroup).toMatchObject({ enabled: false, nextPollAt: null });
  expect((await http(app, 'PATCH', `${P}/${id}`, { token: ws.token, body: { intervalSeconds: 30 } })).status).toBe(400);
  expect((await http(app, 'PATCH', `${P}/${id}`, { token: ws.token, body: { provider: 'mailA' } })).status).toBe(400);

  expect((await http(app, 'GET', `${P}/${id}`, { token: other.token })).status).toBe(404);
  expect((await http(app, 'PATCH', `${P}/${id}`, { token: other.token, body: { enabled: true } })).status).toBe(404);
  expect((await http(app, 'GET', `${P}/${id}`, { token: ws.token })).body.pollingGroup.enabled).toBe(false);
  const org = await addUserWithKey(app, ws, 'admin', 'organization');
  expect((await http(app, 'GET', P, { token: org.token })).status).toBe(403);
  expect((await http(app, 'POST', P, { token: org.token, body: { provider: 'mailB', credentialId } })).status).toBe(403);
});
