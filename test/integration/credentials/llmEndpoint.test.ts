/**
 * Which model endpoint a workspace's agent calls go to (services/models/chat.ts
 * resolveChatEndpoint): its own `llm` credential, else the deployment's LLM_* settings.
 */
import { keySettingsOf } from '../../../services/credentials';
import { createChatClient, resolveChatEndpoint } from '../../../services/models/chat';
import { startFakeLlm, type FakeLlmServer } from '../../fakes/llm';
import { http, useTestStack, type CredentialEnvelope } from '../../kit';

let llm: FakeLlmServer;
const deployment = {
  baseUrl: 'http://127.0.0.1:9/v1',
  apiKey: 'sk-deployment',
  model: 'deployment-model',
  timeoutMs: 5_000,
  maxRetries: 0,
  prices: { '*': { input: 1, output: 2 } },
};

beforeAll(async () => {
  llm = await startFakeLlm({ apiKey: 'sk-workspace', model: 'workspace-model' });
});
const stack = useTestStack({ worker: false, config: { llm: deployment } });
afterAll(async () => {
  await llm.close();
});

const deps = () => ({ llm: deployment, keys: keySettingsOf(stack.app.deps.config) });

async function createCredential(token: string, name: string, type: string, value: Record<string, unknown>): Promise<string> {
  const res = await http<CredentialEnvelope>(stack.app, 'POST', '/api/v1/credentials', { token, body: { name, type, value } });
  expect(res.status).toBe(201);
  return res.body.credential.id;
}

test("a workspace's llm credential is used for its model calls, and another workspace keeps the deployment's", async () => {
  const ws = await stack.workspace();
  const other = await stack.workspace();
  await createCredential(ws.token, 'model', 'llm', { baseUrl: llm.url, apiKey: 'sk-workspace', model: 'workspace-model' });

  const endpoint = await resolveChatEndpoint(stack.app.orm.em.fork(), deps(), ws.workspaceId);
  expect(endpoint).toEqual({ baseUrl: llm.url, apiKey: 'sk-workspace', model: 'workspace-model', source: 'credential' });
  const answer = await createChatClient(endpoint, {
    allowPrivateNetworks: true,
    timeoutMs: 5_000,
    maxRetries: 0,
    prices: deployment.prices,
  }).chat({ messages: [{ role: 'user', content: 'hi' }] });
  expect(answer.content).toBe('echo: hi');
  expect(llm.chats[llm.chats.length - 1].model).toBe('workspace-model');

  await expect(resolveChatEndpoint(stack.app.orm.em.fork(), deps(), other.workspaceId)).resolves.toMatchObject({
    baseUrl: deployment.baseUrl,
    model: 'deployment-model',
    source: 'deployment',
  });
});

test('the most recently updated llm credential wins when a workspace has several', async () => {
  const ws = await stack.workspace();
  await createCredential(ws.token, 'older', 'llm', { baseUrl: llm.url, apiKey: 'sk-a', model: 'model-a' });
  await new Promise((r) => setTimeout(r, 20));
  await createCredential(ws.token, 'newer', 'llm', { baseUrl: llm.url, apiKey: 'sk-b', model: 'model-b' });
  expect((await resolveChatEndpoint(stack.app.orm.em.fork(), deps(), ws.workspaceId)).model).toBe('model-b');
});

test('a named credential must be an llm credential of the workspace', async () => {
  const ws = await stack.workspace();
  const other = await stack.workspace();
  const bearer = await createCredential(ws.token, 'api', 'bearer', { token: 'secret-token' });
  const foreign = await createCredential(other.token, 'model', 'llm', { baseUrl: llm.url, apiKey: 'sk-x', model: 'x' });
  await expect(resolveChatEndpoint(stack.app.orm.em.fork(), deps(), ws.workspaceId, bearer)).rejects.toMatchObject({ kind: 'invalid' });
  await expect(resolveChatEndpoint(stack.app.orm.em.fork(), deps(), ws.workspaceId, foreign)).rejects.toMatchObject({ kind: 'not_found' });
});

test('with neither a credential nor a deployment endpoint the call is unavailable', async () => {
  const ws = await stack.workspace();
  await expect(
    resolveChatEndpoint(stack.app.orm.em.fork(), { ...deps(), llm: { ...deployment, baseUrl: undefined } }, ws.workspaceId),
  ).rejects.toMatchObject({ kind: 'unavailable' });
});
