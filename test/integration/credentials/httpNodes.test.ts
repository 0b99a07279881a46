/**
 * http nodes with `credentialId` over real HTTP, PostgreSQL and Temporal: each HTTP credential
 * type against a loopback API, OAuth2 refresh on 401 once, references by name, failures that
 * name the problem, credential headers dropped on cross-origin redirects, and — for every run —
 * no secret in any response, log line (the pino output of the app and the worker), PostgreSQL
 * row or Temporal history (payloads decoded through the client's data converter). Also the
 * workflow routes: credentials/test and credentials/bootstrap-from-env.
 */
import { Writable } from 'node:stream';
import { startFakeApi, type FakeApi } from '../../fakes/identity';
import type { z } from 'zod';
import type {
  bootstrapReportSchema,
  credentialEnvelopeSchema,
  credentialListSchema,
  credentialTestSchema,
} from '../../../api/schemas/credentials';
import { SecretTracker } from '../../support/secrets';
import { addUserWithKey, createWorkspace, http, node, trackedRuns, useTestStack, type NodeInput } from '../../kit';
import { historyText } from '../../support/temporalHistory';

const C = '/api/v1/credentials';
const WF = '/api/v1/workflows';
let api: FakeApi;
let other: FakeApi;
const logLines: string[] = [];
const runIds: string[] = [];
const tracker = new SecretTracker();
const secret = (label: string) => tracker.secret(label);
const oauth = { refreshToken: 'node-refresh-token-0123456789', clientId: 'node-client', clientSecret: 'node-client-secret-0123456789' };
/** Credential ids by type, created in beforeAll. */
const cred: Record<string, string> = {};
const values: Record<string, { token?: string; apiKey?: string; password?: string; headerValue?: string; accessToken?: string }> = {};

/** A credential route's answer: the credential, or on a refusal its `error`. */
type CredentialList = z.infer<typeof credentialListSchema>;
type CredentialTest = z.infer<typeof credentialTestSchema>;
type BootstrapReport = z.infer<typeof bootstrapReportSchema>;
type CredentialAnswer = z.infer<typeof credentialEnvelopeSchema> & { error?: string };

async function call<T = CredentialAnswer>(method: string, path: string, opts: Parameters<typeof http>[3] = {}) {
  const res = await http<T>(stack.app, method, path, opts);
  tracker.seen(res.text);
  return res;
}

/** Credentials are bound to the loopback API they are for (issue 27); destinations.test.ts covers other hosts. */
async function createCredential(name: string, type: string, value: unknown, token = stack.ws.token): Promise<string> {
  const res = await call('POST', C, { token, body: { name, type, value, allowedHosts: [new URL(api.url).host] } });
  expect({ name, status: res.status }).toEqual({ name, status: 201 });
  return res.body.credential.id;
}

const httpNode = (id: string, method: string, url: string, credentialId: string, extra: object = {}): NodeInput =>
  node.of('http', id, { method, url, credentialId, ...extra });
const requestsTo = (fake: FakeApi, path: string) => fake.requests.filter((r) => r.path === path);

const stack = useTestStack(async () => {
  tracker.add(oauth.refreshToken, oauth.clientSecret, 'bootstrap-repo-token-0123456789');
  process.env.NODE_REPO_TOKEN = 'bootstrap-repo-token-0123456789';
  process.env.NODE_BAD_SMTP = 'not-json-and-not-a-smtp-object';
  tracker.add('not-json-and-not-a-smtp-object');
  [api, other] = await Promise.all([startFakeApi(oauth), startFakeApi(oauth)]);
  const logStream = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(String(chunk));
      callback();
    },
  });
  return {
    config: {
      logLevel: 'debug',
      outboundAllowPrivateNetworks: true,
      credentials: {
        key: undefined,
        previousKeys: [],
        envAllowlist: [
          { name: 'NODE_REPO_TOKEN', type: 'repo' },
          { name: 'NODE_MAIL_TOKEN', type: 'mailA' },
          { name: 'NODE_BAD_SMTP', type: 'smtp' },
          { name: 'NODE_UNTYPED', type: null },
        ],
        testTimeoutMs: 2_000,
        providerBaseUrls: { repo: `${api.url}/repo` },
      },
    },
    temporal: { logStream },
  };
});

const { deployed, runToEnd } = trackedRuns(stack, tracker, 'credentials', (id) => runIds.push(id));

beforeAll(async () => {
  values.api_key = { apiKey: secret('node-api-key') };
  values.bearer = { token: secret('node-bearer') };
  values.basic = { password: secret('node-basic') };
  values.http_header = { headerValue: secret('node-header') };
  values.oauth2 = { accessToken: secret('node-expired-access') };
  api.accept('x-api-token', values.api_key.apiKey!);
  api.accept('authorization', `Bearer ${values.bearer.token}`);
  api.accept('authorization', `Basic ${Buffer.from(`node-user:${values.basic.password}`).toString('base64')}`);
  api.accept('x-custom-auth', values.http_header.headerValue!);
  cred.api_key = await createCredential('Node API key', 'api_key', { headerName: 'X-Api-Token', apiKey: values.api_key.apiKey });
  cred.bearer = await createCredential('Bearer For Nodes', 'bearer', values.bearer.token);
  cred.basic = await createCredential('Node basic', 'basic', { username: 'node-user', password: values.basic.password });
  cred.http_header = await createCredential('Node header', 'http_header', {
    headerName: 'X-Custom-Auth',
    headerValue: values.http_header.headerValue,
  });
  cred.oauth2 = await createCredential('Node OAuth', 'oauth2', {
    accessToken: values.oauth2.accessToken,
    refreshToken: oauth.refreshToken,
    tokenUrl: `${api.url}/oauth/token`,
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    scopes: ['read'],
  });
});
afterAll(async () => {
  await Promise.all([api?.close(), other?.close()]);
});

test('an http node calls a loopback server with each credential type (local and regular activities alike)', async () => {
  const workflowId = await deployed([
    httpNode('with_api_key', 'GET', `${api.url}/probe/api_key`, cred.api_key),
    httpNode('with_bearer', 'POST', `${api.url}/probe/bearer`, cred.bearer, { body: { hello: 'world' } }),
    httpNode('with_basic', 'GET', `${api.url}/probe/basic`, cred.basic),
    httpNode('with_header', 'PUT', `${api.url}/probe/http_header`, cred.http_header, {
      headers: { 'X-Custom-Auth': 'overridden-by-the-credential' },
    }),
    httpNode('with_oauth2', 'GET', `${api.url}/probe/oauth2`, cred.oauth2),
  ]);
  const refreshesBefore = api.oauth.refreshes;
  const run = await runToEnd(workflowId);
  expect(run.status).toBe('succeeded');
  for (const step of run.steps.filter((s) => s.nodeId !== 'start'))
    expect({ node: step.nodeId, output: step.output }).toEqual({
      node: step.nodeId,
      output: expect.objectContaining({ status: 200, body: { authenticated: true } }),
    });

  expect(requestsTo(api, '/probe/api_key')[0].headers['x-api-token']).toBe(values.api_key.apiKey);
  expect(requestsTo(api, '/probe/bearer')[0].headers.authorization).toBe(`Bearer ${values.bearer.token}`);
  expect(requestsTo(api, '/probe/basic')[0].headers.authorization).toBe(
    `Basic ${Buffer.from(`node-user:${values.basic.password}`).toString('base64')}`,
  );
  expect(requestsTo(api, '/probe/http_header')[0].headers['x-custom-auth']).toBe(values.http_header.headerValue);

  // oauth2: the expired token got a 401, the token was refreshed once, the call repeated once.
  const oauthCalls = requestsTo(api, '/probe/oauth2');
  expect(api.oauth.refreshes).toBe(refreshesBefore + 1);
  const fresh = api.oauth.issued[api.oauth.issued.length - 1];
  tracker.add(fresh);
  expect(oauthCalls.map((r) => r.headers.authorization)).toEqual([`Bearer ${values.oauth2.accessToken}`, `Bearer ${fresh}`]);

  // The refreshed token was stored: the next run calls once, with it, without refreshing.
  const again = await runToEnd(workflowId);
  expect(again.status).toBe('succeeded');
  expect(api.oauth.refreshes).toBe(refreshesBefore + 1);
  expect(
    requestsTo(api, '/probe/oauth2')
      .slice(2)
      .map((r) => r.headers.authorization),
  ).toEqual([`Bearer ${fresh}`]);
});

test('oauth2 refreshes at most once: a refused refresh fails the node without a second try', async () => {
  const id = await createCredential('Broken refresh', 'oauth2', {
    accessToken: secret('expired-2'),
    refreshToken: secret('revoked-refresh'),
    tokenUrl: `${api.url}/oauth/token`,
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
  });
  const refreshesBefore = api.oauth.refreshes;
  const grantsBefore = requestsTo(api, '/oauth/token').length;
  const run = await runToEnd(await deployed([httpNode('call', 'GET', `${api.url}/probe/broken`, id)]));
  expect(run.status).toBe('failed');
  expect(JSON.stringify(run.error)).toContain('The OAuth2 token endpoint refused the refresh: HTTP 400 (invalid_grant).');
  expect(api.oauth.refreshes).toBe(refreshesBefore);
  expect(requestsTo(api, '/oauth/token').length).toBe(grantsBefore + 1);
  expect(requestsTo(api, '/probe/broken')).toHaveLength(1);
});

test('a node may name its credential by name; missing, foreign and non-HTTP credentials fail the node with a clear message', async () => {
  const byName = await runToEnd(await deployed([httpNode('call', 'GET', `${api.url}/probe/by-name`, 'bearer for nodes')]));
  expect(byName.status).toBe('succeeded');
  expect(requestsTo(api, '/probe/by-name')[0].headers.authorization).toBe(`Bearer ${values.bearer.token}`);

  const missing = await runToEnd(await deployed([httpNode('call', 'GET', `${api.url}/probe/missing`, 'no-such-credential')]));
  expect(missing.status).toBe('failed');
  expect(JSON.stringify(missing.error)).toContain('Credential \\"no-such-credential\\" was not found in this workspace.');

  // Another workspace's credential id is not found from this workspace's runs.
  const elsewhere = await createWorkspace(stack.app, 'Elsewhere');
  const foreignId = await createCredential('Foreign', 'bearer', secret('foreign'), elsewhere.token);
  const foreign = await runToEnd(await deployed([httpNode('call', 'GET', `${api.url}/probe/foreign`, foreignId)]));
  expect(foreign.status).toBe('failed');
  expect(JSON.stringify(foreign.error)).toContain('was not found in this workspace');
  expect(requestsTo(api, '/probe/foreign')).toHaveLength(0);

  const smtpId = await createCredential('Node SMTP', 'smtp', { host: 'smtp.example.test', username: 'u', password: secret('node-smtp') });
  const smtp = await runToEnd(await deployed([httpNode('call', 'GET', `${api.url}/probe/smtp`, smtpId)]));
  expect(smtp.status).toBe('failed');
  expect(JSON.stringify(smtp.error)).toContain(
    'is a smtp credential; http nodes take api_key, bearer, basic, oauth2, http_header, http_query, http_custom.',
  );
});

test('what a called service echoes back is redacted; credential headers do not follow a redirect to another origin', async () => {
  const echo = await runToEnd(await deployed([httpNode('echo', 'GET', `${api.url}/echo`, cred.bearer)]));
  expect(echo.status).toBe('succeeded');
  expect(echo.output).toMatchObject({ body: { headers: { authorization: 'Bearer [redacted]' } } });

  other.accept('x-api-token', 'never-accepted-here');
  const redirected = await runToEnd(
    await deployed([
      {
        ...httpNode('hop', 'GET', `${api.url}/redirect?to=${encodeURIComponent(`${other.url}/probe/landing`)}`, cred.api_key),
        onError: 'continue',
      },
    ]),
  );
  expect(redirected.status).toBe('succeeded');
  const landed = requestsTo(other, '/probe/landing');
  expect(landed).toHaveLength(1);
  expect(landed[0].headers['x-api-token']).toBeUndefined();
  expect(landed[0].headers.authorization).toBeUndefined();
});

test('POST /workflows/{id}/credentials/test tests every credential the nodes name; any valid key; other workspaces get 403', async () => {
  const workflowId = await deployed([
    httpNode('a', 'GET', `${api.url}/probe/a`, cred.bearer),
    httpNode('b', 'GET', `${api.url}/probe/b`, 'Bearer For Nodes'),
    httpNode('c', 'GET', `${api.url}/probe/c`, 'not-there'),
  ]);
  await call('PATCH', `${C}/${cred.bearer}`, {
    token: stack.ws.token,
    body: { value: { token: values.bearer.token, probeUrl: `${api.url}/probe/check` } },
  });
  const res = await call('POST', `${WF}/${workflowId}/credentials/test`, { token: stack.ws.token });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    workflowId,
    ok: false,
    credentials: [
      {
        reference: cred.bearer,
        nodeIds: ['a'],
        credential: { id: cred.bearer, name: 'Bearer For Nodes', type: 'bearer' },
        result: expect.objectContaining({ ok: true, status: 'passed' }),
      },
      {
        reference: 'Bearer For Nodes',
        nodeIds: ['b'],
        credential: { id: cred.bearer, name: 'Bearer For Nodes', type: 'bearer' },
        result: expect.objectContaining({ ok: true, status: 'passed' }),
      },
      { reference: 'not-there', nodeIds: ['c'], credential: null, result: expect.objectContaining({ ok: false, status: 'missing' }) },
    ],
  });
  const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
  expect((await call('POST', `${WF}/${workflowId}/credentials/test`, { token: personal.token })).status).toBe(200);
  const stranger = await createWorkspace(stack.app, 'Stranger');
  const foreign = await call('POST', `${WF}/${workflowId}/credentials/test`, { token: stranger.token });
  expect(foreign.status).toBe(403);
  expect(foreign.body).toEqual({ error: 'API key cannot access this workflow' });
  expect((await call('POST', `${WF}/wf_missing/credentials/test`, { token: stack.ws.token })).status).toBe(404);
});

test('POST /workflows/{id}/credentials/bootstrap-from-env creates the missing credentials from allowed variables and reports counts without values', async () => {
  const workflowId = await deployed([
    httpNode('a', 'GET', `${api.url}/probe/a`, 'node-repo-token'),
    httpNode('b', 'GET', `${api.url}/probe/b`, 'Node Basic'),
    httpNode('c', 'GET', `${api.url}/probe/c`, 'node-mail-token'),
    httpNode('d', 'GET', `${api.url}/probe/d`, 'node-bad-smtp'),
    httpNode('e', 'GET', `${api.url}/probe/e`, 'node-untyped'),
    httpNode('f', 'GET', `${api.url}/probe/f`, 'home'),
  ]);
  process.env.NODE_UNTYPED = 'untyped-value-0123456789';
  process.env.HOME ??= '/root';
  tracker.add('untyped-value-0123456789');
  const path = `${WF}/${workflowId}/credentials/bootstrap-from-env`;
  const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
  expect((await call('POST', path, { token: personal.token })).body).toEqual({ error: 'A workspace API key is required.' });

  const res = await call<BootstrapReport>('POST', path, { token: stack.ws.token });
  expect(res.status).toBe(200);
  expect(res.body.bootstrap).toEqual({
    workflowId,
    created: 1,
    skipped: 5,
    credentials: [
      { reference: 'node-repo-token', outcome: 'created', credentialId: expect.stringMatching(/^cred_/) },
      { reference: 'Node Basic', outcome: 'exists', credentialId: cred.basic },
      { reference: 'node-mail-token', outcome: 'unset', credentialId: null },
      { reference: 'node-bad-smtp', outcome: 'invalid', credentialId: null },
      { reference: 'node-untyped', outcome: 'not_allowed', credentialId: null },
      { reference: 'home', outcome: 'not_allowed', credentialId: null },
    ],
  });
  expect(res.text).not.toContain('NODE_REPO_TOKEN');
  const created = (await call<CredentialList>('GET', C, { token: stack.ws.token })).body.credentials.find(
    (c) => c.name === 'node-repo-token',
  );
  expect(created).toMatchObject({ type: 'repo', source: 'env', readable: true });
  // The created credential works: its identity check passes against the configured base URL.
  api.accept('authorization', 'Bearer bootstrap-repo-token-0123456789');
  expect((await call<CredentialTest>('POST', `${C}/${created?.id}/test`, { token: stack.ws.token })).body.result).toMatchObject({
    ok: true,
    status: 'passed',
  });
  // Again: nothing left to create.
  expect((await call<BootstrapReport>('POST', path, { token: stack.ws.token })).body.bootstrap).toMatchObject({ created: 0, skipped: 6 });
  const stranger = await createWorkspace(stack.app, 'Bootstrap stranger');
  expect((await call('POST', path, { token: stranger.token })).status).toBe(403);
});

test('no secret reached a response, a log line, a PostgreSQL row of the runs or a Temporal history', async () => {
  tracker.add(...api.oauth.issued);
  expect(runIds.length).toBeGreaterThanOrEqual(8);
  const leaksIn = (where: string, text: string) => tracker.leaksIn(where, text);

  expect(tracker.leaksInSeen()).toEqual([]);

  // The logs were captured (the app's request lines and the worker's SDK lines are there) and hold no secret.
  const logs = logLines.join('');
  expect(logs).toContain('"msg":"request"');
  expect(logs).toContain('temporal-sdk');
  expect(leaksIn('logs', logs)).toEqual([]);

  const conn = stack.app.orm.em.fork().getConnection();
  for (const table of ['runs', 'run_steps', 'run_logs']) {
    const column = table === 'runs' ? 'id' : 'run_id';
    const rows = await conn.execute(`select * from ${table} where ${column} in (${runIds.map(() => '?').join(',')})`, runIds);
    expect(leaksIn(table, JSON.stringify(rows))).toEqual([]);
  }

  for (const runId of runIds) {
    const history = await historyText(stack.app.deps.temporal.client, runId);
    // Decoded payloads are in the text: the activity inputs name the credential, never its value.
    expect(history).toContain('"credentialId"');
    expect(leaksIn(`history of ${runId}`, history)).toEqual([]);
  }
});
