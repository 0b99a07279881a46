/**
 * Credentials bound to destinations (issue 27 item 5), over real HTTP, PostgreSQL and Temporal:
 * each type carries the hosts it may be sent to (given at creation, named by its value, its
 * provider's configured base URL) and shows them in its masked view; changing the type or the
 * hosts needs the secret again; an http node sends a credential to a host it is bound to and
 * fails before any connection anywhere else, naming the host and the credential. The finding's
 * attack (a writer retypes a provider token to `bearer` and sends it elsewhere) is refused.
 */
import {
  BACKFILL_OBSERVED_HOSTS,
  BACKFILL_REPOSITORY_REMOTES,
} from '../../../db/migrations/Migration20261127201000_credential_destinations';
import { startFakeApi, type FakeApi } from '../../fakes/identity';
import { SecretTracker } from '../../support/secrets';
import type { z } from 'zod';
import type { credentialEnvelopeSchema, credentialListSchema, workflowCredentialTestSchema } from '../../../api/schemas/credentials';
import { addUserWithKey, http, node, trackedRuns, useTestStack, type NodeInput } from '../../kit';

const C = '/api/v1/credentials';
const WF = '/api/v1/workflows';
/** The service a credential is for, and another host on the same machine it must never reach. */
let api: FakeApi;
let other: FakeApi;
let apiHost: string;
let otherHost: string;
let writer: string;
const tracker = new SecretTracker();
const secret = (label: string) => tracker.secret(label);
const oauth = { refreshToken: 'dest-refresh-token-0123456789', clientId: 'dest-client', clientSecret: 'dest-client-secret-0123456789' };

/** A credential route's answer: the credential, or on a refusal its `error`. */
type CredentialAnswer = z.infer<typeof credentialEnvelopeSchema> & { error?: string };
type WorkflowCredentialTest = z.infer<typeof workflowCredentialTestSchema>;

async function call<T = CredentialAnswer>(method: string, path: string, opts: Parameters<typeof http>[3] = {}) {
  const res = await http<T>(stack.app, method, path, opts);
  tracker.seen(res.text);
  return res;
}

const httpNode = (id: string, url: string, credentialId: string): NodeInput => node.of('http', id, { method: 'GET', url, credentialId });
const requestsTo = (fake: FakeApi, path: string) => fake.requests.filter((r) => r.path === path);
type CredentialList = z.infer<typeof credentialListSchema>;
const credentials = async () => (await call<CredentialList>('GET', C, { token: stack.ws.token })).body.credentials;
const listed = async (id: string) => (await credentials()).find((c) => c.id === id);

const stack = useTestStack(async () => {
  tracker.add(oauth.refreshToken, oauth.clientSecret, 'dest-env-token-0123456789');
  process.env.DEST_ENV_TOKEN = 'dest-env-token-0123456789';
  tracker.add('dest-env-bound-0123456789');
  [api, other] = await Promise.all([startFakeApi(oauth), startFakeApi(oauth)]);
  apiHost = new URL(api.url).host;
  otherHost = new URL(other.url).host;
  api.accept('authorization', 'Bearer dest-env-bound-0123456789');
  // The operator binds an env-sourced credential in the variable itself.
  process.env.DEST_ENV_BOUND = JSON.stringify({ token: 'dest-env-bound-0123456789', allowedHosts: [apiHost] });
  return {
    config: {
      outboundAllowPrivateNetworks: true,
      credentials: {
        key: undefined,
        previousKeys: [],
        envAllowlist: [
          { name: 'DEST_ENV_TOKEN', type: null },
          { name: 'DEST_ENV_BOUND', type: 'bearer' },
        ],
        testTimeoutMs: 2_000,
        providerBaseUrls: { repo: `${api.url}/repo` },
      },
    },
  };
});

const { deployed, runToEnd } = trackedRuns(stack, tracker, 'destinations');
beforeAll(async () => {
  writer = (await addUserWithKey(stack.app, stack.ws, 'member')).token;
});
afterAll(async () => {
  await Promise.all([api?.close(), other?.close()]);
});

/** One http credential of each type, its value and the header the fake API accepts for it. */
function httpCases() {
  const apiKey = secret('dest-api-key');
  const token = secret('dest-bearer');
  const password = secret('dest-basic');
  const headerValue = secret('dest-header');
  const accessToken = secret('dest-access');
  return [
    { type: 'api_key', value: { headerName: 'X-Api-Token', apiKey }, header: ['x-api-token', apiKey] },
    { type: 'bearer', value: token, header: ['authorization', `Bearer ${token}`] },
    {
      type: 'basic',
      value: { username: 'dest-user', password },
      header: ['authorization', `Basic ${Buffer.from(`dest-user:${password}`).toString('base64')}`],
    },
    {
      type: 'oauth2',
      value: {
        accessToken,
        refreshToken: oauth.refreshToken,
        tokenUrl: `${api.url}/oauth/token`,
        clientId: oauth.clientId,
        clientSecret: oauth.clientSecret,
      },
      header: ['authorization', `Bearer ${accessToken}`],
    },
    { type: 'http_header', value: { headerName: 'X-Custom-Auth', headerValue }, header: ['x-custom-auth', headerValue] },
  ] as const;
}

test('each http type: created with hosts, shown in its masked view, sent to an allowed host, refused before any connection elsewhere', async () => {
  for (const c of httpCases()) {
    api.accept(c.header[0], c.header[1]);
    other.accept(c.header[0], c.header[1]);
    const created = await call('POST', C, {
      token: stack.ws.token,
      body: { name: `dest ${c.type}`, type: c.type, value: c.value, allowedHosts: [apiHost.toUpperCase(), '*.Example.test'] },
    });
    expect({ type: c.type, status: created.status }).toEqual({ type: c.type, status: 201 });
    const id = created.body.credential.id;
    expect(created.body.credential.allowedHosts).toEqual([apiHost, '*.example.test']);
    expect(await listed(id)).toMatchObject({
      type: c.type,
      allowedHosts: [apiHost, '*.example.test'],
      maskedValue: expect.stringContaining('••••••••'),
    });

    const allowed = await runToEnd(await deployed([httpNode('call', `${api.url}/probe/dest-${c.type}`, id)]));
    expect({ type: c.type, status: allowed.status }).toEqual({ type: c.type, status: 'succeeded' });
    expect(requestsTo(api, `/probe/dest-${c.type}`)).toHaveLength(1);

    const before = other.requests.length;
    const refused = await runToEnd(await deployed([httpNode('call', `${other.url}/probe/dest-${c.type}`, id)]));
    expect({ type: c.type, status: refused.status }).toEqual({ type: c.type, status: 'failed' });
    const error = JSON.stringify(refused.error);
    expect(error).toContain(
      `Credential \\"dest ${c.type}\\" may not be sent to ${otherHost}: it may be sent only to ${apiHost}, *.example.test.`,
    );
    // Nothing reached the other host: not the request, not a connection that carried it.
    expect(other.requests.length).toBe(before);
  }
});

test('other types show the hosts their value and provider imply, with those given', async () => {
  const cases: Array<{ type: string; value: unknown; allowedHosts?: string[]; expected: string[] }> = [
    { type: 'smtp', value: { host: 'SMTP.example.test', username: 'u', password: secret('dest-smtp') }, expected: ['smtp.example.test'] },
    {
      type: 'imap',
      value: { host: 'imap.example.test', username: 'u', password: secret('dest-imap') },
      allowedHosts: ['imap2.example.test'],
      expected: ['imap2.example.test', 'imap.example.test'],
    },
    // A provider without a baseUrl: CREDENTIAL_PROVIDER_BASE_URLS, then the knowledge connectors' base URL of the provider.
    { type: 'repo', value: secret('dest-repo'), expected: [apiHost, new URL(stack.app.deps.config.knowledge.providerBaseUrls.repo).host] },
    {
      type: 'chat',
      value: { token: secret('dest-chat'), baseUrl: 'https://chat.example.test:8443/api' },
      expected: ['chat.example.test:8443'],
    },
    {
      type: 'ci',
      value: { token: secret('dest-ci'), username: 'builder' },
      allowedHosts: ['ci.example.test'],
      expected: ['ci.example.test'],
    },
    {
      type: 'llm',
      value: { baseUrl: 'https://llm.example.test/v1', apiKey: secret('dest-llm'), model: 'm' },
      expected: ['llm.example.test'],
    },
    { type: 'bearer', value: { token: secret('dest-probe'), probeUrl: `${api.url}/probe/x` }, expected: [apiHost] },
  ];
  for (const c of cases) {
    const res = await call('POST', C, {
      token: stack.ws.token,
      body: { name: `implied ${c.type}`, type: c.type, value: c.value, ...(c.allowedHosts ? { allowedHosts: c.allowedHosts } : {}) },
    });
    expect({ type: c.type, status: res.status, hosts: res.body.credential?.allowedHosts }).toEqual({
      type: c.type,
      status: 201,
      hosts: c.expected,
    });
    expect({ type: c.type, hosts: (await listed(res.body.credential.id))?.allowedHosts }).toEqual({ type: c.type, hosts: c.expected });
  }
  // A bearer credential given no hosts and no probe URL is bound to nothing: shown as such, and refused everywhere.
  const unbound = await call('POST', C, {
    token: stack.ws.token,
    body: { name: 'unbound', type: 'bearer', value: secret('dest-unbound') },
  });
  expect(unbound.body.credential.allowedHosts).toEqual([]);
  const run = await runToEnd(await deployed([httpNode('call', `${api.url}/probe/unbound`, 'unbound')]));
  expect(run.status).toBe('failed');
  expect(JSON.stringify(run.error)).toContain(
    `Credential \\"unbound\\" may not be sent to ${apiHost}: it is bound to no host. Save it again with its secret and allowedHosts naming the hosts it is for.`,
  );
  expect(requestsTo(api, '/probe/unbound')).toHaveLength(0);
});

test('allowedHosts must be hosts: schemes, paths, "*" alone and top-level wildcards are a 400', async () => {
  for (const bad of [
    'https://api.example.test',
    'api.example.test/path',
    '*',
    '*.test',
    'user@api.example.test',
    'api.example.test:0',
    'bad host',
  ]) {
    const res = await call('POST', C, {
      token: stack.ws.token,
      body: { name: 'bad hosts', type: 'bearer', value: secret('dest-bad'), allowedHosts: [bad] },
    });
    expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
    expect(res.body.error).toMatch(/^allowedHosts\[0\]: /);
  }
  const many = await call('POST', C, {
    token: stack.ws.token,
    body: {
      name: 'bad hosts',
      type: 'bearer',
      value: secret('dest-bad'),
      allowedHosts: Array.from({ length: 51 }, (_, i) => `h${i}.example.test`),
    },
  });
  expect(many.status).toBe(400);
  expect((await credentials()).some((c) => c.name === 'bad hosts')).toBe(false);
});

test('changing the type or the hosts needs the secret; with it the change applies', async () => {
  const token = secret('dest-change');
  api.accept('authorization', `Bearer ${token}`);
  const { body } = await call('POST', C, {
    token: stack.ws.token,
    body: { name: 'change me', type: 'bearer', value: token, allowedHosts: [apiHost] },
  });
  const id = body.credential.id;
  const path = `${C}/${id}`;

  const retype = await call('PATCH', path, { token: stack.ws.token, body: { type: 'api_key' } });
  expect(retype.status).toBe(400);
  expect(retype.body.error).toBe("Changing a credential's type requires its secret: send value (or envVar) with the new type.");
  const rehost = await call('PATCH', path, { token: stack.ws.token, body: { allowedHosts: [otherHost] } });
  expect(rehost.status).toBe(400);
  expect(rehost.body.error).toBe("Changing a credential's allowedHosts requires its secret: send value (or envVar) with the new hosts.");
  expect(await listed(id)).toMatchObject({ type: 'bearer', allowedHosts: [apiHost] });
  // Renaming, or sending the same hosts and type, is no change of destination.
  const same = await call('PATCH', path, {
    token: stack.ws.token,
    body: { name: 'changed', type: 'bearer', allowedHosts: [apiHost.toUpperCase()] },
  });
  expect(same.status).toBe(200);
  expect(same.body.credential).toMatchObject({ name: 'changed', allowedHosts: [apiHost] });

  // With the secret, the hosts move: the old host is refused, the new one works.
  other.accept('authorization', `Bearer ${token}`);
  const moved = await call('PATCH', path, { token: stack.ws.token, body: { value: token, allowedHosts: [otherHost] } });
  expect(moved.status).toBe(200);
  expect(moved.body.credential.allowedHosts).toEqual([otherHost]);
  const toOld = await runToEnd(await deployed([httpNode('call', `${api.url}/probe/moved`, id)]));
  expect(toOld.status).toBe('failed');
  expect(requestsTo(api, '/probe/moved')).toHaveLength(0);
  const toNew = await runToEnd(await deployed([httpNode('call', `${other.url}/probe/moved`, id)]));
  expect(toNew.status).toBe('succeeded');
  // Omitting allowedHosts with a new value keeps the hosts.
  expect((await call('PATCH', path, { token: stack.ws.token, body: { value: token } })).body.credential.allowedHosts).toEqual([otherHost]);
});

test('the finding: a writer cannot retype a provider token to bearer without its value, nor send it to another host', async () => {
  const repoToken = secret('dest-provider-token');
  const created = await call('POST', C, { token: stack.ws.token, body: { name: 'repo token', type: 'repo', value: repoToken } });
  expect(created.status).toBe(201);
  const id = created.body.credential.id;
  const providerHosts = [apiHost, new URL(stack.app.deps.config.knowledge.providerBaseUrls.repo).host];
  expect(created.body.credential.allowedHosts).toEqual(providerHosts);

  const retype = await call('PATCH', `${C}/${id}`, { token: writer, body: { type: 'bearer' } });
  expect(retype.status).toBe(400);
  expect(retype.body.error).toBe("Changing a credential's type requires its secret: send value (or envVar) with the new type.");
  const rehost = await call('PATCH', `${C}/${id}`, { token: writer, body: { allowedHosts: [otherHost] } });
  expect(rehost.status).toBe(400);
  expect(await listed(id)).toMatchObject({
    type: 'repo',
    allowedHosts: providerHosts,
    maskedValue: `${repoToken.slice(0, 4)}••••••••${repoToken.slice(-2)}`,
  });

  // Sent as it is from an http node, at the other host: refused before any connection.
  const before = other.requests.length;
  const run = await runToEnd(await deployed([httpNode('steal', `${other.url}/steal`, 'repo token')], writer), writer);
  expect(run.status).toBe('failed');
  expect(other.requests.length).toBe(before);

  // A bearer credential bound to the API, pointed at the other host by the writer: refused, nothing sent.
  const bearer = await call('POST', C, {
    token: stack.ws.token,
    body: { name: 'bound bearer', type: 'bearer', value: secret('dest-bound-bearer'), allowedHosts: [apiHost] },
  });
  const steal = await runToEnd(await deployed([httpNode('steal', `${other.url}/steal`, bearer.body.credential.id)], writer), writer);
  expect(steal.status).toBe('failed');
  expect(JSON.stringify(steal.error)).toContain(`Credential \\"bound bearer\\" may not be sent to ${otherHost}`);
  expect(other.requests.length).toBe(before);
});

test('migration: existing http credentials are bound to the hosts of the literal URLs of the nodes that name them', async () => {
  const named = await call('POST', C, {
    token: stack.ws.token,
    body: { name: 'Legacy Named', type: 'bearer', value: secret('dest-legacy-1') },
  });
  const byId = await call('POST', C, {
    token: stack.ws.token,
    body: { name: 'legacy by id', type: 'api_key', value: secret('dest-legacy-2') },
  });
  const unused = await call('POST', C, {
    token: stack.ws.token,
    body: { name: 'legacy unused', type: 'bearer', value: secret('dest-legacy-3') },
  });
  const provider = await call('POST', C, {
    token: stack.ws.token,
    body: { name: 'legacy provider', type: 'chat', value: secret('dest-legacy-4') },
  });
  const ids = [named, byId, unused, provider].map((r) => r.body.credential.id);
  const nodes = [
    httpNode('a', 'https://API.Legacy.test:8443/x?y=1', 'legacy named'),
    httpNode('b', 'http://user@legacy-b.test/path', ids[1]),
    httpNode('c', '=$input.url', ids[1]),
    httpNode('d', 'https://chat.legacy.test/', ids[3]),
  ];
  const chain = [{ id: 'start', type: 'start', config: {} }, ...nodes];
  const edges = chain.slice(1).map((n, i) => ({ source: chain[i].id, target: n.id }));
  const created = await call('POST', WF, { token: stack.ws.token, body: { name: 'legacy', nodes: chain, edges } });
  expect(created.status).toBe(201);
  const conn = stack.app.orm.em.fork().getConnection();
  await conn.execute(`update credentials set allowed_hosts = '{}' where id in (${ids.map(() => '?').join(', ')})`, ids);
  await conn.execute(BACKFILL_OBSERVED_HOSTS);
  const rows: Array<{ id: string; allowed_hosts: string[] }> = await conn.execute(
    `select id, allowed_hosts from credentials where id in (${ids.map(() => '?').join(', ')})`,
    ids,
  );
  const hosts = Object.fromEntries(rows.map((r) => [r.id, r.allowed_hosts]));
  expect(ids.map((id) => hosts[id])).toEqual([['api.legacy.test:8443'], ['legacy-b.test'], [], []]);

  // A repo credential is bound to the Git remote its workspace repository names.
  const repo = await call('POST', C, {
    token: stack.ws.token,
    body: { name: 'legacy repo', type: 'repo', value: secret('dest-legacy-5') },
  });
  const repoId = repo.body.credential.id;
  await conn.execute(
    `insert into workspace_repositories (workspace_id, local_path, remote_url, branch, path_prefix, credential_id, pulls_repo, updated_at) values (?, null, 'https://Git.Legacy.test/team.git', 'main', '', ?, 'acme/flows', now())`,
    [stack.ws.workspaceId, repoId],
  );
  try {
    await conn.execute(BACKFILL_REPOSITORY_REMOTES);
    expect((await conn.execute('select allowed_hosts from credentials where id = ?', [repoId]))[0].allowed_hosts).toEqual([
      'git.legacy.test',
    ]);
  } finally {
    await conn.execute('delete from workspace_repositories where workspace_id = ?', [stack.ws.workspaceId]);
  }
});

test('a credential copied from envVar is bound only where the variable says: no allowedHosts with envVar, and a new variable value drops the old hosts', async () => {
  const refused = await call('POST', C, {
    token: writer,
    body: { name: 'from env', type: 'bearer', envVar: 'DEST_ENV_TOKEN', allowedHosts: [otherHost] },
  });
  expect(refused.status).toBe(400);
  expect(refused.body.error).toBe(
    'allowedHosts cannot be given with envVar: a credential copied from a deployment variable goes only where the variable (its allowedHosts, probeUrl, baseUrl or host) or its provider says.',
  );

  // A writer's own junk secret bound to the other host, then switched to the deployment's variable: the hosts go with the old value.
  const own = await call('POST', C, {
    token: writer,
    body: { name: 'switched to env', type: 'bearer', value: secret('dest-junk'), allowedHosts: [otherHost] },
  });
  expect(own.body.credential.allowedHosts).toEqual([otherHost]);
  const switched = await call('PATCH', `${C}/${own.body.credential.id}`, { token: writer, body: { envVar: 'DEST_ENV_TOKEN' } });
  expect(switched.status).toBe(200);
  expect(switched.body.credential).toMatchObject({ source: 'env', allowedHosts: [] });
  const before = other.requests.length;
  const run = await runToEnd(await deployed([httpNode('steal', `${other.url}/steal-env`, own.body.credential.id)], writer), writer);
  expect(run.status).toBe('failed');
  expect(other.requests.length).toBe(before);

  // A variable whose JSON names allowedHosts binds the credential there: usable at the API, nowhere else.
  const bound = await call('POST', C, { token: writer, body: { name: 'env bound', type: 'bearer', envVar: 'DEST_ENV_BOUND' } });
  expect(bound.status).toBe(201);
  expect(bound.body.credential).toMatchObject({ source: 'env', allowedHosts: [apiHost] });
  const ok = await runToEnd(await deployed([httpNode('call', `${api.url}/probe/env-bound`, 'env bound')], writer), writer);
  expect(ok.status).toBe('succeeded');
  const elsewhere = await runToEnd(await deployed([httpNode('steal', `${other.url}/steal-env-bound`, 'env bound')], writer), writer);
  expect(elsewhere.status).toBe('failed');
  expect(other.requests.length).toBe(before);
});

test('POST /workflows/{id}/credentials/test reports a node that would send a credential to a host it is not bound to, without sending it', async () => {
  const token = secret('dest-wf-test');
  api.accept('authorization', `Bearer ${token}`);
  other.accept('authorization', `Bearer ${token}`);
  await call('POST', C, {
    token: stack.ws.token,
    body: { name: 'wf tested', type: 'bearer', value: { token, probeUrl: `${api.url}/probe/wf-tested` } },
  });
  const good = await deployed([httpNode('call', `${api.url}/probe/wf-call`, 'wf tested')]);
  const goodTest = await call<WorkflowCredentialTest>('POST', `${WF}/${good}/credentials/test`, { token: stack.ws.token });
  expect(goodTest.body.credentials[0].result).toMatchObject({ ok: true, status: 'passed' });

  const before = other.requests.length;
  const bad = await deployed([
    httpNode('call', `${api.url}/probe/wf-call`, 'wf tested'),
    httpNode('elsewhere', `${other.url}/probe/wf-call`, 'wf tested'),
  ]);
  const badTest = await call<WorkflowCredentialTest>('POST', `${WF}/${bad}/credentials/test`, { token: stack.ws.token });
  expect(badTest.body.ok).toBe(false);
  expect(badTest.body.credentials[0].result).toMatchObject({
    ok: false,
    status: 'refused',
    message: `Node "elsewhere" would send credential "wf tested" to ${otherHost}: it may be sent only to ${apiHost}. Add the host to its allowedHosts (with its secret).`,
  });
  expect(other.requests.length).toBe(before);
});
