/**
 * Local AI CLI sessions over real HTTP, PostgreSQL and Temporal, with fake CLIs (node scripts
 * written to a temp directory) in place of the real tools: prepare, verify, token (cliA), login
 * and callback, models, disconnect; one workspace's session invisible to another; bad kinds and
 * actions; a hanging CLI; a missing CLI; the scrubbed environment; tokens never answered,
 * logged or stored in the clear; the model-provider seam; the status and doctor sections.
 */
import { loadConfig } from '../../../services/kernel/config';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { CredentialSchema, LocalAiCliSessionSchema } from '../../../db/entities';
import { keySettingsOf } from '../../../services/credentials';
import { localAiCliProvider } from '../../../services/workers/localAiCli';
import { writeFakeCli, type FakeCli } from '../../fakes/localAiCli';
import { startProviderFake, type ProviderFake } from '../../fakes/providerServer';
import type { z } from 'zod';
import type { credentialListSchema } from '../../../api/schemas/credentials';
import type {
  localAiCliLoginResultSchema,
  localAiCliModelsResultSchema,
  localAiCliSessionResultSchema,
  workerDoctorSchema,
  workerStatusSchema,
} from '../../../api/schemas/workers';
import {
  addUserWithKey,
  createWorkspace,
  signInCookie,
  useTestStack,
  type CredentialEnvelope,
  type Refusable,
  type WorkspaceFixture,
} from '../../kit';

type SessionResult = Refusable<z.infer<typeof localAiCliSessionResultSchema>>;
type LoginResult = Refusable<z.infer<typeof localAiCliLoginResultSchema>>;
type ModelsResult = Refusable<z.infer<typeof localAiCliModelsResultSchema>>;
type WorkerStatus = z.infer<typeof workerStatusSchema>;
type WorkerDoctor = z.infer<typeof workerDoctorSchema>;
type CredentialList = z.infer<typeof credentialListSchema>;

const BASE = '/api/v1/workers/local-ai-cli';
const VALID_TOKEN = 'tok-valid-5b1f0c2e9d7a4c3b8e6f';
const CANARY = 'canary-value-7d1e2f3a4b5c';

let tmp: string;
let cliA: FakeCli;
let cliB: FakeCli;
let a: WorkspaceFixture;
let b: WorkspaceFixture;
let modelApi: ProviderFake;
const logs = new PassThrough();
let logText = '';

const stack = useTestStack(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'local-ai-cli-test-'));
  cliA = await writeFakeCli(tmp, 'cliA');
  cliB = await writeFakeCli(tmp, 'cliB');
  process.env.SVC_TEST_CANARY_SECRET = CANARY;
  logs.on('data', (chunk: Buffer) => (logText += chunk.toString('utf8')));
  modelApi = await startProviderFake({
    authorized: () => true,
    unauthorized: {},
    handle: () => ({ json: { data: [{ id: 'gpt-test' }] } }),
  });
  return {
    config: {
      logLevel: 'debug',
      outboundAllowPrivateNetworks: true,
      llm: { ...loadConfig({}).llm, baseUrl: `${modelApi.url}/v1` },
      localAiCli: { paths: { cliA: cliA.path, cliB: cliB.path }, timeoutMs: 10_000, rootDir: path.join(tmp, 'data', 'local-ai-cli') },
    },
    temporal: { logStream: logs },
    worker: false,
    workspaceName: 'CLI workspace A',
  };
});
beforeAll(async () => {
  a = stack.ws;
  b = await createWorkspace(stack.app, 'CLI workspace B');
});

afterAll(async () => {
  await modelApi?.close();
  delete process.env.SVC_TEST_CANARY_SECRET;
  await rm(tmp, { recursive: true, force: true });
});

const session = (ws: WorkspaceFixture, body: Record<string, unknown>) => stack.as(ws.token).post<SessionResult>(`${BASE}/session`, body);

function expectNoSecrets(text: string) {
  for (const secret of [
    'postgres://',
    'postgresql://',
    'DATABASE_URL',
    'LLM_',
    'LOCAL_AI_CLI_',
    'SECRET_KEY',
    'CREDENTIALS_KEY',
    VALID_TOKEN,
    CANARY,
    stack.app.deps.config.secretKey!,
  ]) {
    expect(text).not.toContain(secret);
  }
}

describe('sessions', () => {
  test('verify (the default) before prepare: installed, version measured, not prepared', async () => {
    const res = await session(a, { kind: 'cliA' });
    expect(res.status).toBe(200);
    expect(res.body.session).toMatchObject({
      workspaceId: a.workspaceId,
      kind: 'cliA',
      action: 'verify',
      status: 'not_prepared',
      configured: true,
      installed: true,
      version: 'cliA 1.2.3 (fake)',
      authenticated: false,
      configDirReady: false,
    });
    expect(res.body.session.lastVerifiedAt).not.toBeNull();
  });

  test('prepare creates the workspace directory (0700) and finds the CLI signed out', async () => {
    const res = await session(a, { action: 'prepare', kind: 'cliA' });
    expect(res.status).toBe(200);
    expect(res.body.session).toMatchObject({ action: 'prepare', status: 'needs_login', configDirReady: true, authenticated: false });
    const dir = await stat(path.join(tmp, 'data', 'local-ai-cli', a.workspaceId, 'cliA'));
    expect(dir.isDirectory()).toBe(true);
    expect(dir.mode & 0o777).toBe(0o700);
  });

  test('a token is checked by the CLI, stored encrypted as a credential, never answered or logged', async () => {
    const refused = await stack.api.post<SessionResult>(`${BASE}/token`, { kind: 'cliA', token: 'tok-bad-123' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('cliA refused the token.');
    expect(await stack.app.orm.em.fork().count(CredentialSchema, { workspaceId: a.workspaceId, type: 'cliA' })).toBe(0);

    const res = await stack.api.post<SessionResult>(`${BASE}/token`, { kind: 'cliA', token: VALID_TOKEN });
    expect(res.status).toBe(200);
    expect(res.body.session).toMatchObject({
      workspaceId: a.workspaceId,
      kind: 'cliA',
      action: 'token',
      status: 'connected',
      authenticated: true,
      authMethod: 'token',
    });
    expectNoSecrets(res.text);

    const em = stack.app.orm.em.fork();
    const credential = await em.findOneOrFail(CredentialSchema, { workspaceId: a.workspaceId, type: 'cliA' });
    expect(credential.secretEncrypted).toMatch(/^k1\./);
    expect(credential.secretEncrypted).not.toContain(VALID_TOKEN);
    const row = await em.findOneOrFail(LocalAiCliSessionSchema, { workspaceId: a.workspaceId, kind: 'cliA' });
    expect(row).toMatchObject({ status: 'connected', authMethod: 'token', credentialId: credential.id });

    const list = await stack.api.get<CredentialList>('/api/v1/credentials');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(VALID_TOKEN);
    // The stack.app's log lines are captured (the token request is among them) and none carries the token.
    expect(logText).toContain('/api/v1/workers/local-ai-cli/token');
    expect(logText).not.toContain(VALID_TOKEN);
  });

  test('models of the signed-in CLI', async () => {
    const res = await stack.api.get<ModelsResult>(`${BASE}/models?kind=cliA`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kind: 'cliA',
      models: [
        { id: 'cliA-large', name: 'Large' },
        { id: 'cliA-small', name: 'cliA-small' },
      ],
    });
  });

  test("workspace A's session is invisible to workspace B", async () => {
    const verify = await session(b, { kind: 'cliA' });
    expect(verify.status).toBe(200);
    expect(verify.body.session).toMatchObject({
      workspaceId: b.workspaceId,
      status: 'not_prepared',
      authenticated: false,
      authMethod: null,
    });
    const prepared = await session(b, { action: 'prepare', kind: 'cliA' });
    expect(prepared.body.session.status).toBe('needs_login');
    const models = await stack.as(b.token).get<ModelsResult>(`${BASE}/models?kind=cliA`);
    expect(models.status).toBe(409);
    expect(models.body.error).toContain('cliA could not list its models (exit code 3)');
    // B's disconnect does not touch A's session.
    expect((await session(b, { action: 'disconnect', kind: 'cliA' })).status).toBe(200);
    expect((await session(a, { kind: 'cliA' })).body.session.status).toBe('connected');
    const status = await stack.as(b.token).get<WorkerStatus>('/api/v1/workers/status');
    expect(status.body.status.localAiCli?.cliA.connected).toBe(false);
  });

  test('a browser login: the authorization URL, a callback only its own workspace can complete, then connected', async () => {
    const login = await stack.api.post<LoginResult>(`${BASE}/login`, { kind: 'cliB' });
    expect(login.status).toBe(200);
    const authorizationUrl = new URL(login.body.login.authorizationUrl);
    expect(authorizationUrl.origin).toBe('https://auth.example.test');
    expect(login.body.login.kind).toBe('cliB');
    expect(login.body.session).toMatchObject({ kind: 'cliB', status: 'login_pending', loginPending: true });
    const redirect = new URL(authorizationUrl.searchParams.get('redirect_uri')!);
    const state = authorizationUrl.searchParams.get('state')!;
    const callbackUrl = `${redirect.origin}${redirect.pathname}?code=abc123&state=${state}`;

    const verifying = await session(a, { kind: 'cliB' });
    expect(verifying.body.session).toMatchObject({ status: 'login_pending', loginPending: true });

    // Another workspace cannot complete it.
    const foreign = await stack.as(b.token).post<SessionResult>(`${BASE}/callback`, { callbackUrl });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('No pending login of this workspace matches the callback URL.');
    // A wrong state matches no login; a non-loopback address is refused.
    const wrongState = await stack.api.post<SessionResult>(`${BASE}/callback`, {
      callbackUrl: `${redirect.origin}${redirect.pathname}?code=x&state=nope`,
    });
    expect(wrongState.status).toBe(400);
    const outside = await stack.api.post<SessionResult>(`${BASE}/callback`, { callbackUrl: 'http://example.com:80/callback?code=x' });
    expect(outside.status).toBe(400);
    expect(outside.body.error).toBe('callbackUrl must be the http://localhost address the login redirected to.');

    const done = await stack.api.post<SessionResult>(`${BASE}/callback`, { callbackUrl });
    expect(done.status).toBe(200);
    expect(done.body.session).toMatchObject({
      workspaceId: a.workspaceId,
      kind: 'cliB',
      action: 'callback',
      status: 'connected',
      authMethod: 'login',
      loginPending: false,
    });
    const models = await stack.api.get<ModelsResult>(`${BASE}/models?kind=cliB`);
    expect(models.body.models.map((m: { id: string }) => m.id)).toEqual(['cliB-large', 'cliB-small']);
    // B's cliB stays signed out (its own directory).
    expect((await session(b, { action: 'prepare', kind: 'cliB' })).body.session.status).toBe('needs_login');
  });

  test('a login that fails before its URL is a 503 and leaves nothing pending', async () => {
    await cliB.setMode('loginFails');
    try {
      const res = await stack.as(b.token).post<LoginResult>(`${BASE}/login`, { kind: 'cliB' });
      expect(res.status).toBe(503);
      expect(res.body.error).toBe('cliB login exited with code 2 before giving an authorization URL.');
      expect((await session(b, { kind: 'cliB' })).body.session.loginPending).toBe(false);
    } finally {
      await cliB.setMode('normal');
    }
  });

  test('a login the CLI refuses at its callback is a 400; disconnect ends a pending login', async () => {
    const start = async () => {
      const res = await stack.as(b.token).post<LoginResult>(`${BASE}/login`, { kind: 'cliB' });
      expect(res.status).toBe(200);
      const url = new URL(res.body.login.authorizationUrl);
      const redirect = new URL(url.searchParams.get('redirect_uri')!);
      return `${redirect.origin}${redirect.pathname}?state=${url.searchParams.get('state')}`;
    };
    // The right state but no code: the CLI exits 4.
    const refused = await stack.as(b.token).post<SessionResult>(`${BASE}/callback`, { callbackUrl: await start() });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('cliB refused the login (exit code 4).');
    expect((await session(b, { kind: 'cliB' })).body.session).toMatchObject({ status: 'needs_login', loginPending: false });

    const pending = await start();
    expect((await session(b, { action: 'disconnect', kind: 'cliB' })).body.session).toMatchObject({
      status: 'disconnected',
      loginPending: false,
    });
    const late = await stack.as(b.token).post<SessionResult>(`${BASE}/callback`, { callbackUrl: `${pending}&code=late` });
    expect(late.status).toBe(400);
    expect(late.body.error).toBe('No pending login of this workspace matches the callback URL.');
  });

  test('the model-provider seam: connected CLIs run for their workspace with its token', async () => {
    const deps = { config: stack.app.deps.config.localAiCli, keys: keySettingsOf(stack.app.deps.config) };
    const provider = await localAiCliProvider(stack.app.orm.em.fork(), deps, a.workspaceId, 'cliA');
    expect(provider).toMatchObject({ kind: 'cliA', connected: true, reason: null });
    expect(provider.promptArgs('hello', 'cliA-large')).toEqual(['-p', 'hello', '--output-format', 'json', '--model', 'cliA-large']);
    const result = await provider.invoke(['models', '--json']);
    expect(result).toMatchObject({ kind: 'exited', code: 0 });
    const foreign = await localAiCliProvider(stack.app.orm.em.fork(), deps, b.workspaceId, 'cliA');
    expect(foreign).toMatchObject({ connected: false, reason: 'cliA is not connected for this workspace; verify or sign in first.' });
    await expect(foreign.invoke(['models', '--json'])).rejects.toThrow('not connected');
  });

  test('status and doctor report the sessions, the agent runtime and the transports, without secrets', async () => {
    const status = await stack.api.get<WorkerStatus>('/api/v1/workers/status');
    expect(status.status).toBe(200);
    const s = status.body.status;
    expect(s.localAiCli?.cliA).toMatchObject({ kind: 'cliA', configured: true, status: 'connected', connected: true, authMethod: 'token' });
    expect(s.localAiCli?.cliB).toMatchObject({ status: 'connected', authMethod: 'login' });
    expect(s.agentRuntime).toEqual({
      modelEndpoint: { configured: true, reachable: true, status: 'reachable', httpStatus: 200, latencyMs: expect.any(Number) },
      connectedLocalAiClis: ['cliA', 'cliB'],
      ready: true,
    });
    expect(modelApi.requests.some((r) => r.path === '/v1/models')).toBe(true);
    expect(s.sideEffectTransports).toEqual({
      mail: { inbound: 'signed-webhook', outbound: null, providers: [], imapCredentials: 0 },
      smtp: { configured: false, credentials: 0 },
      httpGuard: { enabled: true, privateNetworksAllowed: true },
    });
    expect(s.queue).toMatchObject({ mode: 'temporal', queueName: 'workflow-runs', counts: { queued: 0, running: 0, waiting: 0 } });
    expect(s.managedWorkspaces).toMatchObject({ mode: 'shared-task-queue', allWorkspaces: true });
    expect(s.deployment.labels).toMatchObject({
      role: 'api',
      chatModel: 'configured',
      localAiCli: 'cliA,cliB',
      credentialsEncryption: 'derived-key',
    });
    expectNoSecrets(status.text);
    expect(status.text).not.toContain(modelApi.url);

    const doctor = await stack.api.get<WorkerDoctor>('/api/v1/workers/doctor?bundlePath=bundles/x.json');
    expect(doctor.status).toBe(200);
    const d = doctor.body.doctor;
    expect(d.localAiCli?.cliA.connected).toBe(true);
    expect(d.agentRuntime.ready).toBe(true);
    expect(d.deployment).toEqual({ missingRequired: [], missingOptional: ['embeddings endpoint', 'malware scanner daemon'] });
    expect(d.extflowBundle).toEqual({
      imported: false,
      bundlePath: 'bundles/x.json',
      workflows: 0,
      message: 'No extflow bundle has been imported.',
    });
    expect(d.managedWorkspaces.mode).toBe('shared-task-queue');
    expect(d.warnings.some((w: string) => w.includes('chat model'))).toBe(false);
    expectNoSecrets(doctor.text);
  });

  test('disconnect removes the token credential and the directory; the CLI is signed out again', async () => {
    const res = await session(a, { action: 'disconnect', kind: 'cliA' });
    expect(res.status).toBe(200);
    expect(res.body.session).toMatchObject({ action: 'disconnect', status: 'disconnected', authenticated: false, configDirReady: false });
    expect(await stack.app.orm.em.fork().count(CredentialSchema, { workspaceId: a.workspaceId, type: 'cliA' })).toBe(0);
    await expect(stat(path.join(tmp, 'data', 'local-ai-cli', a.workspaceId, 'cliA'))).rejects.toThrow();
    expect((await session(a, { kind: 'cliA' })).body.session.status).toBe('not_prepared');
    const models = await stack.api.get<ModelsResult>(`${BASE}/models?kind=cliA`);
    expect(models.status).toBe(409);
  });
});

describe('persistence', () => {
  test('a database failure after a successful verify is a 500 that shows nothing of it', async () => {
    const c = await createWorkspace(stack.app, 'CLI workspace C');
    const conn = stack.app.orm.em.getConnection();
    // Only this workspace's session writes fail, so nothing else sharing the database notices.
    await conn.execute(
      `create function lac_fail_c() returns trigger language plpgsql as $$ begin if new.workspace_id = '${c.workspaceId}' then raise exception 'lac persistence down'; end if; return new; end $$`,
    );
    await conn.execute(
      'create trigger lac_fail_c before insert or update on local_ai_cli_sessions for each row execute function lac_fail_c()',
    );
    try {
      const res = await session(c, { kind: 'cliA' });
      expect(res.status).toBe(500);
      expect(res.text).not.toContain('lac persistence down');
      expectNoSecrets(res.text);
    } finally {
      await conn.execute('drop trigger lac_fail_c on local_ai_cli_sessions');
      await conn.execute('drop function lac_fail_c()');
    }
    expect((await session(c, { kind: 'cliA' })).status).toBe(200);
  });
});

describe('the CLI process', () => {
  test('runs with a scrubbed environment whose HOME is the workspace directory', async () => {
    await cliA.setMode('printEnv');
    try {
      const res = await stack.as(b.token).get<ModelsResult>(`${BASE}/models?kind=cliA`);
      expect(res.status).toBe(200);
      const names = res.body.models.map((m: { id: string }) => m.id).sort();
      for (const name of names) expect(['HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'PATH', 'TZ', 'XDG_CONFIG_HOME']).toContain(name);
      expect(names).toContain('HOME');
      expect(res.body.models.find((m) => m.id === 'HOME')?.name).toBe(path.join(tmp, 'data', 'local-ai-cli', b.workspaceId, 'cliA'));
      expect(res.text).not.toContain(CANARY);
      expect(res.text).not.toContain('SVC_TEST_CANARY_SECRET');
    } finally {
      await cliA.setMode('normal');
    }
  });

  test('a CLI that hangs is killed at its time budget: verify reports unavailable, models and login are 408', async () => {
    await cliA.setMode('hang');
    const config = stack.app.deps.config.localAiCli;
    const budget = config.timeoutMs;
    config.timeoutMs = 500;
    try {
      const verify = await session(a, { kind: 'cliA' });
      expect(verify.status).toBe(200);
      expect(verify.body.session).toMatchObject({ status: 'unavailable', message: 'cliA did not answer within 500 ms.' });
      const models = await stack.api.get<ModelsResult>(`${BASE}/models?kind=cliA`);
      expect(models.status).toBe(408);
      expect(models.body.error).toBe('cliA did not answer within 500 ms.');
      const login = await stack.api.post<LoginResult>(`${BASE}/login`, { kind: 'cliA' });
      expect(login.status).toBe(408);
      expect(login.body.error).toBe('cliA did not give an authorization URL within 500 ms.');
    } finally {
      config.timeoutMs = budget;
      await cliA.setMode('normal');
    }
  });

  test('a CLI without a configured path is not_configured (409 where it must run); a missing executable is not_installed', async () => {
    const paths = stack.app.deps.config.localAiCli.paths;
    const original = paths.cliB;
    paths.cliB = undefined;
    try {
      const verify = await session(a, { kind: 'cliB' });
      expect(verify.status).toBe(200);
      expect(verify.body.session).toMatchObject({
        status: 'not_configured',
        configured: false,
        installed: null,
        message: 'cliB is not configured on this server.',
      });
      for (const [method, route, body] of [
        ['POST', 'login', { kind: 'cliB' }],
        ['GET', 'models?kind=cliB', undefined],
      ] as const) {
        const res = await stack.api.request<Refusable<object>>(method, `${BASE}/${route}`, { body });
        expect(res.status).toBe(409);
        expect(res.body.error).toBe('cliB is not configured on this server.');
      }
      const status = await stack.api.get<WorkerStatus>('/api/v1/workers/status');
      expect(status.body.status.localAiCli?.cliB).toMatchObject({ configured: false, status: 'not_configured', connected: false });
      expectNoSecrets(status.text);

      paths.cliB = path.join(tmp, 'no-such-cli');
      const missing = await session(a, { kind: 'cliB' });
      expect(missing.body.session).toMatchObject({ status: 'not_installed', configured: true, installed: false });
      expect(missing.text).not.toContain(tmp);
    } finally {
      paths.cliB = original;
    }
  });
});

describe('input and access', () => {
  test('bad kinds and actions are 400', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', `${BASE}/session`, { kind: 'cliC' }, 'kind must be cliA or cliB'],
      ['POST', `${BASE}/session`, { action: 'explode' }, 'action must be prepare, verify or disconnect'],
      ['POST', `${BASE}/session`, { kind: 'cliA', extra: true }, 'extra'],
      ['POST', `${BASE}/login`, {}, 'kind must be cliA or cliB'],
      ['POST', `${BASE}/login`, { kind: 'other' }, 'kind must be cliA or cliB'],
      ['POST', `${BASE}/callback`, {}, 'callbackUrl is required'],
      [
        'POST',
        `${BASE}/callback`,
        { callbackUrl: 'not a url' },
        'callbackUrl must be the http://localhost address the login redirected to.',
      ],
      ['POST', `${BASE}/token`, { kind: 'cliB', token: VALID_TOKEN }, 'kind must be cliA: only cliA signs in with a token'],
      ['POST', `${BASE}/token`, { kind: 'cliA' }, 'token is required'],
      ['GET', `${BASE}/models?kind=cliZ`, undefined, 'kind must be cliA or cliB'],
    ];
    for (const [method, route, body, message] of cases) {
      const res = await stack.api.request<Refusable<object>>(method, route, { body });
      expect([route, res.status]).toEqual([route, 400]);
      expect(res.body.error).toContain(message);
      expectNoSecrets(res.text);
    }
    expect(logText).not.toContain(VALID_TOKEN);
  });

  test("a token is not stored over another credential of the workspace's that has its name (409)", async () => {
    const c = await createWorkspace(stack.app, 'CLI workspace D');
    const created = await stack
      .as(c.token)
      .post<CredentialEnvelope>('/api/v1/credentials', { name: 'LOCAL-AI-CLI/cliA', type: 'bearer', value: { token: 'other-secret' } });
    expect(created.status).toBe(201);
    const res = await stack.as(c.token).post<SessionResult>(`${BASE}/token`, { kind: 'cliA', token: VALID_TOKEN });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe(
      'A credential named "local-ai-cli/cliA" already exists in this workspace; rename it to sign cliA in with a token.',
    );
    expectNoSecrets(res.text);
  });

  test('a personal key gets 403, no key 401; the session twins use the sign-in session', async () => {
    const personal = await addUserWithKey(stack.app, a, 'member', 'personal');
    for (const [method, route] of [
      ['POST', 'session'],
      ['POST', 'login'],
      ['POST', 'callback'],
      ['POST', 'token'],
      ['GET', 'models'],
    ] as const) {
      const body = method === 'POST' ? {} : undefined;
      expect((await stack.as(personal.token).request(method, `${BASE}/${route}`, { body })).status).toBe(403);
      expect((await stack.as().request(method, `${BASE}/${route}`, { body })).status).toBe(401);
    }
    const cookie = await signInCookie(stack.app, a.ownerEmail, a.ownerPassword, a.workspaceId);
    const twin = await stack.as().post<SessionResult>('/api/workers/local-ai-cli/session', { kind: 'cliB' }, { cookie });
    expect(twin.status).toBe(200);
    expect(twin.body.session).toMatchObject({ workspaceId: a.workspaceId, kind: 'cliB', status: 'connected' });
    expect((await stack.as().get('/api/workers/local-ai-cli/models?kind=cliB', { cookie })).status).toBe(200);
  });
});
