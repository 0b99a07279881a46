/**
 * `POST /api/v1/credentials/{id}/test`: a real connection check per type against loopback fakes
 * speaking the real protocols (an HTTP API with OAuth2 refresh and provider identity endpoints,
 * an SMTP server, an IMAP responder), through the outbound guard, within the time budget.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startFakeApi, type FakeApi } from '../../fakes/identity';
import { startFakeImap } from '../../fakes/imap';
import { startFakeSmtp } from '../../fakes/smtp';
import { SecretTracker } from '../../support/secrets';
import type { z } from 'zod';
import type { credentialTestResultSchema, credentialTestSchema } from '../../../api/schemas/credentials';
import { startTestApp } from '../../support/harness';
import { addUserWithKey, createWorkspace, http, useTestStack, type CredentialEnvelope, type TestApp } from '../../kit';

const C = '/api/v1/credentials';
type CredentialTest = z.infer<typeof credentialTestSchema>;
let api: FakeApi;
let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
let imap: Awaited<ReturnType<typeof startFakeImap>>;
const tracker = new SecretTracker();
const secret = (label: string) => tracker.secret(label);
const oauth = { refreshToken: 'refresh-token-0123456789', clientId: 'client-1', clientSecret: 'client-secret-0123456789' };
const smtpPassword = 'smtp-password-0123456789';
const imapPassword = 'imap "quoted\\ password" 0123';

async function createAndTest(
  name: string,
  type: string,
  value: unknown,
  opts: { app?: TestApp; token?: string } = {},
): Promise<z.infer<typeof credentialTestResultSchema>> {
  const target = opts.app ?? stack.app;
  const created = await http<CredentialEnvelope>(target, 'POST', C, { token: opts.token ?? stack.ws.token, body: { name, type, value } });
  expect({ name, status: created.status }).toEqual({ name, status: 201 });
  const res = await http<CredentialTest>(target, 'POST', `${C}/${created.body.credential.id}/test`, {
    token: opts.token ?? stack.ws.token,
  });
  tracker.seen(created.text);
  tracker.seen(res.text);
  expect(res.status).toBe(200);
  expect(res.body.result).toEqual({
    ok: expect.any(Boolean),
    status: expect.any(String),
    message: expect.any(String),
    checkedAt: expect.any(String),
    latencyMs: expect.any(Number),
  });
  return res.body.result;
}

beforeAll(async () => {
  tracker.add(oauth.refreshToken, oauth.clientSecret, smtpPassword, imapPassword);
  [api, smtp, imap] = await Promise.all([
    startFakeApi(oauth),
    startFakeSmtp({ username: 'mailer', password: smtpPassword }),
    startFakeImap({ username: 'reader@example.test', password: imapPassword }),
  ]);
});
const stack = useTestStack(() => ({
  worker: false,
  workspaceName: 'Connection tests',
  config: {
    outboundAllowPrivateNetworks: true,
    credentials: {
      key: undefined,
      previousKeys: [],
      envAllowlist: [],
      testTimeoutMs: 1_500,
      providerBaseUrls: { repo: `${api.url}/repo`, chat: `${api.url}/chat/`, mailA: `${api.url}/mailA` },
    },
  },
}));
afterAll(async () => {
  await Promise.all([api?.close(), smtp?.close(), imap?.close()]);
});

describe('http types call their probe URL with the credential', () => {
  test('api_key, bearer, basic, http_header: accepted → passed, refused → auth_failed', async () => {
    const good = { apiKey: secret('api-key'), token: secret('bearer'), password: secret('basic'), header: secret('header') };
    api.accept('x-api-token', good.apiKey);
    api.accept('authorization', `Bearer ${good.token}`);
    api.accept('authorization', `Basic ${Buffer.from(`alice:${good.password}`).toString('base64')}`);
    api.accept('x-custom-auth', good.header);
    const probeUrl = `${api.url}/probe`;
    const cases: Array<[string, unknown, unknown]> = [
      [
        'api_key',
        { headerName: 'X-Api-Token', apiKey: good.apiKey, probeUrl },
        { headerName: 'X-Api-Token', apiKey: secret('wrong'), probeUrl },
      ],
      ['bearer', { token: good.token, probeUrl }, { token: secret('wrong'), probeUrl }],
      ['basic', { username: 'alice', password: good.password, probeUrl }, { username: 'alice', password: secret('wrong'), probeUrl }],
      [
        'http_header',
        { headerName: 'X-Custom-Auth', headerValue: good.header, probeUrl },
        { headerName: 'X-Custom-Auth', headerValue: secret('wrong'), probeUrl },
      ],
    ];
    for (const [type, ok, bad] of cases) {
      expect(await createAndTest(`${type} ok`, type, ok)).toMatchObject({
        ok: true,
        status: 'passed',
        message: 'The probe URL answered HTTP 200.',
      });
      expect(await createAndTest(`${type} bad`, type, bad)).toMatchObject({
        ok: false,
        status: 'auth_failed',
        message: 'The probe URL refused the credential: HTTP 401.',
      });
    }
  });

  test('oauth2: an expired access token is refreshed once on 401 and the new token is stored', async () => {
    const value = {
      accessToken: secret('expired-access'),
      refreshToken: oauth.refreshToken,
      tokenUrl: `${api.url}/oauth/token`,
      clientId: oauth.clientId,
      clientSecret: oauth.clientSecret,
      probeUrl: `${api.url}/probe`,
    };
    const before = api.oauth.refreshes;
    const created = await http<CredentialEnvelope>(stack.app, 'POST', C, {
      token: stack.ws.token,
      body: { name: 'oauth refresh', type: 'oauth2', value },
    });
    const first = await http<CredentialTest>(stack.app, 'POST', `${C}/${created.body.credential.id}/test`, { token: stack.ws.token });
    tracker.seen(first.text);
    expect(first.body.result).toMatchObject({
      ok: true,
      status: 'passed',
      message: 'The probe URL answered HTTP 200. The access token was refreshed.',
    });
    expect(api.oauth.refreshes).toBe(before + 1);
    // The refreshed token was stored: the next test needs no refresh.
    const second = await http<CredentialTest>(stack.app, 'POST', `${C}/${created.body.credential.id}/test`, { token: stack.ws.token });
    expect(second.body.result).toMatchObject({ ok: true, message: 'The probe URL answered HTTP 200.' });
    expect(api.oauth.refreshes).toBe(before + 1);
    tracker.add(...api.oauth.issued);
    // The token endpoint got a form-encoded refresh-token grant with the client's id and secret.
    const grant = api.requests.filter((r) => r.path === '/oauth/token').pop()!;
    expect(grant.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(grant.body))).toEqual({
      grant_type: 'refresh_token',
      refresh_token: oauth.refreshToken,
      client_id: oauth.clientId,
      client_secret: oauth.clientSecret,
    });

    const badRefresh = { ...value, refreshToken: secret('bad-refresh') };
    expect(await createAndTest('oauth bad refresh', 'oauth2', badRefresh)).toMatchObject({
      ok: false,
      status: 'auth_failed',
      message: 'The OAuth2 token endpoint refused the refresh: HTTP 400 (invalid_grant).',
    });
    expect(api.oauth.refreshes).toBe(before + 1);
    // Without a refresh token a 401 is final.
    expect(
      await createAndTest('oauth no refresh', 'oauth2', { accessToken: secret('access'), probeUrl: `${api.url}/probe` }),
    ).toMatchObject({ status: 'auth_failed' });
  });

  test('without a probe URL the result says not_configured; a hanging probe times out; an unreachable one is reported', async () => {
    expect(await createAndTest('no probe', 'bearer', secret('no-probe'))).toMatchObject({
      ok: false,
      status: 'not_configured',
      latencyMs: expect.any(Number),
    });
    expect(await createAndTest('hanging', 'bearer', { token: secret('hang'), probeUrl: `${api.url}/hang` })).toMatchObject({
      ok: false,
      status: 'timeout',
      message: 'Request timed out after 1500 ms.',
    });
    const closedPort = await freePort();
    expect(
      await createAndTest('unreachable', 'bearer', { token: secret('closed'), probeUrl: `http://127.0.0.1:${closedPort}/` }),
    ).toMatchObject({ ok: false, status: 'unreachable' });
  });
});

describe('mail protocols open a session and authenticate', () => {
  test('smtp: verify() logs in; a wrong password is auth_failed; a closed port is unreachable', async () => {
    expect(
      await createAndTest('smtp ok', 'smtp', {
        host: '127.0.0.1',
        port: smtp.port,
        secure: false,
        username: 'mailer',
        password: smtpPassword,
      }),
    ).toMatchObject({ ok: true, status: 'passed', message: 'Authenticated with the SMTP server.' });
    expect(smtp.logins).toContainEqual({ username: 'mailer', ok: true });
    expect(
      await createAndTest('smtp bad', 'smtp', {
        host: '127.0.0.1',
        port: smtp.port,
        secure: false,
        username: 'mailer',
        password: secret('smtp-wrong'),
      }),
    ).toMatchObject({ ok: false, status: 'auth_failed' });
    expect(smtp.logins).toContainEqual({ username: 'mailer', ok: false });
    const closedPort = await freePort();
    expect(
      await createAndTest('smtp closed', 'smtp', {
        host: '127.0.0.1',
        port: closedPort,
        secure: false,
        username: 'mailer',
        password: smtpPassword,
      }),
    ).toMatchObject({ ok: false, status: 'unreachable' });
  });

  test('imap: LOGIN with quoted strings, then LOGOUT; a refused login is auth_failed', async () => {
    expect(
      await createAndTest('imap ok', 'imap', {
        host: '127.0.0.1',
        port: imap.port,
        secure: false,
        username: 'reader@example.test',
        password: imapPassword,
      }),
    ).toMatchObject({ ok: true, status: 'passed', message: 'Logged in to the IMAP server.' });
    expect(
      await createAndTest('imap bad', 'imap', {
        host: '127.0.0.1',
        port: imap.port,
        secure: false,
        username: 'reader@example.test',
        password: secret('imap-wrong'),
      }),
    ).toMatchObject({ ok: false, status: 'auth_failed', message: 'The IMAP server refused the user name or password.' });
    expect(imap.logins).toEqual([
      { username: 'reader@example.test', ok: true },
      { username: 'reader@example.test', ok: false },
    ]);
  });
});

describe('providers call their identity endpoint at the configured base URL', () => {
  test('every provider: passed with an accepted token, auth_failed with another; chat reads ok: false from a 200', async () => {
    const bases: Record<string, string | undefined> = {
      mailA: undefined, // from CREDENTIAL_PROVIDER_BASE_URLS
      mailB: `${api.url}/mailB`,
      drive: `${api.url}/drive/`,
      wiki: `${api.url}/wiki`,
      chat: undefined,
      repo: undefined,
      ci: `${api.url}/ci`,
      errtracker: `${api.url}/errtracker/`,
    };
    for (const [provider, baseUrl] of Object.entries(bases)) {
      const token = secret(`${provider}-token`);
      const username = provider === 'ci' || provider === 'wiki' ? `${provider}-user` : undefined;
      api.accept('authorization', username ? `Basic ${Buffer.from(`${username}:${token}`).toString('base64')}` : `Bearer ${token}`);
      const value = { token, ...(username ? { username } : {}), ...(baseUrl ? { baseUrl } : {}) };
      expect({ provider, result: await createAndTest(`${provider} ok`, provider, value) }).toMatchObject({
        provider,
        result: { ok: true, status: 'passed' },
      });
      const bad = await createAndTest(`${provider} bad`, provider, { ...value, token: secret(`${provider}-wrong`) });
      expect({ provider, result: bad }).toMatchObject({ provider, result: { ok: false, status: 'auth_failed' } });
    }
    expect(api.requests.some((r) => r.method === 'POST' && r.path === '/chat/auth.test')).toBe(true);
    expect(await createAndTest('chat bad message', 'chat', secret('chat-bad'))).toMatchObject({
      message: 'The chat identity endpoint answered ok: false (invalid_auth).',
    });
    expect(await createAndTest('drive unconfigured', 'drive', secret('drive-none'))).toMatchObject({
      ok: false,
      status: 'not_configured',
      message: 'No base URL is configured for drive: set baseUrl in the credential or drive=… in CREDENTIAL_PROVIDER_BASE_URLS.',
    });
  });

  test('llm lists the models of its OpenAI-compatible endpoint and looks for the model', async () => {
    const apiKey = secret('llm-key');
    api.accept('authorization', `Bearer ${apiKey}`);
    expect(await createAndTest('llm ok', 'llm', { baseUrl: `${api.url}/llm`, apiKey, model: 'model-b' })).toMatchObject({
      ok: true,
      status: 'passed',
      message: 'The model endpoint accepted the key and offers model model-b.',
    });
    expect(await createAndTest('llm no model', 'llm', { baseUrl: `${api.url}/llm`, apiKey, model: 'model-z' })).toMatchObject({
      ok: false,
      status: 'failed',
    });
    expect(
      await createAndTest('llm bad key', 'llm', { baseUrl: `${api.url}/llm`, apiKey: secret('llm-wrong'), model: 'model-b' }),
    ).toMatchObject({ ok: false, status: 'auth_failed' });
  });
});

test('the outbound guard applies: loopback targets are refused where private networks are not allowed', async () => {
  const guarded = await startTestApp({ outboundAllowPrivateNetworks: false });
  try {
    const other = await createWorkspace(guarded, 'Guarded');
    const probe = await createAndTest(
      'guarded probe',
      'bearer',
      { token: secret('guarded'), probeUrl: `${api.url}/probe` },
      { app: guarded, token: other.token },
    );
    expect(probe).toMatchObject({
      ok: false,
      status: 'refused',
      message: expect.stringMatching(/^Outbound request refused: 127\.0\.0\.1 is a loopback address/),
    });
    const mail = await createAndTest(
      'guarded smtp',
      'smtp',
      { host: 'localhost', port: smtp.port, username: 'mailer', password: smtpPassword },
      { app: guarded, token: other.token },
    );
    expect(mail).toMatchObject({ ok: false, status: 'refused' });
    const imapRefused = await createAndTest(
      'guarded imap',
      'imap',
      { host: '127.0.0.1', port: imap.port, username: 'u', password: imapPassword },
      { app: guarded, token: other.token },
    );
    expect(imapRefused).toMatchObject({ ok: false, status: 'refused' });
  } finally {
    await guarded.close();
  }
});

test('a personal key of the workspace may run a test; the answer is the same result', async () => {
  const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
  const token = secret('personal-run');
  api.accept('authorization', `Bearer ${token}`);
  const created = await http<CredentialEnvelope>(stack.app, 'POST', C, {
    token: stack.ws.token,
    body: { name: 'for personal', type: 'bearer', value: { token, probeUrl: `${api.url}/probe` } },
  });
  const res = await http<CredentialTest>(stack.app, 'POST', `${C}/${created.body.credential.id}/test`, { token: personal.token });
  tracker.seen(res.text);
  expect(res.body.result).toMatchObject({ ok: true, status: 'passed' });
});

test('no test result or response carried a secret', () => {
  tracker.add(...api.oauth.issued);
  expect(tracker.texts.length).toBeGreaterThan(40);
  expect(tracker.leaksInSeen()).toEqual([]);
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
