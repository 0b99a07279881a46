/** Polling groups: provider and interval bounds, identity upsert, PATCH, workspace scoping. */
import type { z } from 'zod';
import type { pollingGroupListSchema, pollingGroupResponseSchema } from '../../../api/schemas/mailer';
import { addUserWithKey, createWorkspace, useTestStack, type CredentialEnvelope, type WorkspaceFixture } from '../../kit';

type PollingGroupResponse = z.infer<typeof pollingGroupResponseSchema>;
type PollingGroupList = z.infer<typeof pollingGroupListSchema>;

const stack = useTestStack({ worker: false });
let other: WorkspaceFixture;
const P = '/api/v1/mailer/polling-groups';

beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other');
});

async function credential(type: string, token = stack.ws.token): Promise<string> {
  const res = await stack.as(token).post<CredentialEnvelope>('/api/v1/credentials', {
    name: `${type}-${Math.random().toString(36).slice(2)}`,
    type,
    value: { token: 'provider-token-0123456789' },
  });
  expect(res.status).toBe(201);
  return res.body.credential.id;
}

test('POST creates (201, default interval 300) and upserts the same identity (200); bounds and provider are checked', async () => {
  const credentialId = await credential('mailA');
  const created = await stack.api.post<PollingGroupResponse>(P, { provider: 'mailA', credentialId });
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

  const upserted = await stack.api.post<PollingGroupResponse>(P, { provider: 'mailA', credentialId, intervalSeconds: 60, enabled: false });
  expect(upserted.status).toBe(200);
  expect(upserted.body.pollingGroup).toMatchObject({
    id: created.body.pollingGroup.id,
    intervalSeconds: 60,
    enabled: false,
    nextPollAt: null,
  });
  const list = await stack.api.get<PollingGroupList>(P);
  expect(list.body.pollingGroups.filter((g) => g.credentialId === credentialId)).toHaveLength(1);

  for (const intervalSeconds of [59, 86_401, 1.5]) {
    expect((await stack.api.post(P, { provider: 'mailA', credentialId, intervalSeconds })).status).toBe(400);
  }
  expect((await stack.api.post(P, { provider: 'imap', credentialId })).status).toBe(400);
  expect((await stack.api.post(P, { provider: 'mailB', credentialId })).status).toBe(400);
  expect((await stack.api.post(P, { provider: 'mailA' })).status).toBe(400);
  expect((await stack.api.post(P, { provider: 'mailB', googleDwdConfigId: 'dwd_1' })).status).toBe(400);
  expect((await stack.api.post(P, { provider: 'mailA', credentialId: 'cred_missing' })).status).toBe(404);
  expect((await stack.as(other.token).post(P, { provider: 'mailA', credentialId })).status).toBe(404);

  const mailB = await credential('mailB');
  expect((await stack.api.post(P, { provider: 'mailB', credentialId: mailB, intervalSeconds: 86_400 })).status).toBe(201);
});

test('GET and PATCH by id; another workspace gets 404 and changes nothing; non-workspace keys 403', async () => {
  const credentialId = await credential('mailB');
  const { body } = await stack.api.post<PollingGroupResponse>(P, { provider: 'mailB', credentialId });
  const id = body.pollingGroup.id;
  expect((await stack.api.get<PollingGroupResponse>(`${P}/${id}`)).body.pollingGroup.id).toBe(id);
  const patched = await stack.api.patch<PollingGroupResponse>(`${P}/${id}`, { intervalSeconds: 3600 });
  expect(patched.status).toBe(200);
  expect(patched.body.pollingGroup).toMatchObject({ intervalSeconds: 3600, enabled: true });
  const off = await stack.api.patch<PollingGroupResponse>(`${P}/${id}`, { enabled: false });
  expect(off.body.pollingGroup).toMatchObject({ enabled: false, nextPollAt: null });
  expect((await stack.api.patch(`${P}/${id}`, { intervalSeconds: 30 })).status).toBe(400);
  expect((await stack.api.patch(`${P}/${id}`, { provider: 'mailA' })).status).toBe(400);

  expect((await stack.as(other.token).get(`${P}/${id}`)).status).toBe(404);
  expect((await stack.as(other.token).patch(`${P}/${id}`, { enabled: true })).status).toBe(404);
  expect((await stack.api.get<PollingGroupResponse>(`${P}/${id}`)).body.pollingGroup.enabled).toBe(false);
  const org = await addUserWithKey(stack.app, stack.ws, 'admin', 'organization');
  expect((await stack.as(org.token).get(P)).status).toBe(403);
  expect((await stack.as(org.token).post(P, { provider: 'mailB', credentialId })).status).toBe(403);
});
