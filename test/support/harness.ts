/**
 * Starts the real HTTP app for a test file: real PostgreSQL (the throwaway database of
 * global setup), real Temporal (the dev server of global setup), listening on a free
 * loopback port. Fixtures go through the same services the API uses; nothing is mocked.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { createApp } from '../../api/app';
import type { AppDeps } from '../../api/deps';
import { listen } from '../../api/server';
import { buildAppDeps, startApiBackground } from '../../main/wiring';
import type { AnyRoute } from '../../api/http/route';
import { openOrm } from '../../db/orm';
import { MembershipSchema, type ApiKeyScope, type MembershipRole } from '../../db/entities';
import { issueApiKey } from '../../services/accounts/apiKeys';
import { provisionWorkspace } from '../../services/accounts/bootstrap';
import { loadConfig, type AppConfig } from '../../services/kernel/config';
import { newId, randomToken } from '../../services/kernel/ids';
import { closeSandboxPool } from '../../services/kernel/sandbox/sandbox';
import { closeUserSql } from '../../services/databases';
import { createLogger } from '../../services/kernel/logger';
import { grantMembership } from '../../services/accounts/workspaces';
import { readFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { keySettingsOf } from '../../services/credentials';
import { connectTemporalClient, connectWorkerConnection } from '../../temporal/client';
import { createServiceWorker } from '../../main/worker';
import { createWorkerServices, type WorkerServices } from '../../main/services';
import { testEnv } from './env';
import { payloadCodecFor, payloadCodecFromConfig, type PayloadEncryptionCodec } from '../../services/kernel/payloadCodec';

/** One key for every test app, so webhook URLs made by one app resolve in another. */
export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef-0123456789';

/** The payload codec of every test app and worker (derived from TEST_SECRET_KEY, as in production from SECRET_KEY). */
export const testPayloadCodec: PayloadEncryptionCodec = payloadCodecFor({ secretKey: TEST_SECRET_KEY })!;

export interface TestApp {
  url: string;
  deps: AppDeps;
  orm: MikroORM;
  close(): Promise<void>;
}

/**
 * `routes` replaces the service's routes, for tests of the route machinery itself. Response
 * checking (VALIDATE_RESPONSES) is on: an answer that breaks its route's declared schema comes
 * back as a 500 `response_contract_violation` listing the zod issues.
 */
export async function startTestApp(
  overrides: Partial<AppConfig> = {},
  routes?: AnyRoute[],
  temporalOpts: {
    namespace?: string;
    /** run the webhook outbox dispatcher, as the api process does */
    dispatcher?: boolean;
    /** another Temporal server than global setup's */
    temporalAddress?: string;
    /** where the app's log lines go (tests that search them); the level is `config.logLevel` */
    logStream?: Writable;
  } = {},
): Promise<TestApp> {
  // Every answer a test receives is checked against its route's declared response schema.
  const config: AppConfig = {
    ...loadConfig({
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      HOST: '127.0.0.1',
      PORT: '0',
      SECRET_KEY: TEST_SECRET_KEY,
      VALIDATE_RESPONSES: 'true',
    }),
    ...overrides,
  };
  // `databaseUrl` in the overrides points one app at another database of the test server.
  const orm = await openOrm(overrides.databaseUrl ?? testEnv('databaseUrl'), { poolMax: 5 });
  const namespace = temporalOpts.namespace ?? 'default';
  const temporal = await connectTemporalClient({
    address: temporalOpts.temporalAddress ?? testEnv('temporalAddress'),
    namespace,
    payloadCodec: payloadCodecFromConfig(config),
  });
  const deps = buildAppDeps({
    config,
    orm,
    temporal,
    namespace,
    logger: createLogger(config.logLevel, { stream: temporalOpts.logStream }),
  });
  const server = await listen(createApp(deps, routes), { port: 0, host: '127.0.0.1', lifecycle: deps.lifecycle });
  const dispatcher = temporalOpts.dispatcher ? startApiBackground(deps, { pollMs: 100, rssScheduleSync: false }) : null;
  return {
    url: server.url,
    deps,
    orm,
    close: async () => {
      await server.close(1_000);
      await dispatcher?.stop();
      await deps.services.auth.credentials.cache.close();
      await deps.services.auth.credentials.uses.flush();
      await closeSandboxPool();
      await temporal.connection.close();
      await closeUserSql(orm.em);
      await orm.close();
    },
  };
}

export interface WorkspaceFixture {
  workspaceId: string;
  ownerId: string;
  ownerEmail: string;
  ownerPassword: string;
  /** Workspace-scoped key of the owner. */
  token: string;
  keyId: string;
}

/** A fresh workspace with an owner (unique email, known password) and a workspace key. */
export async function createWorkspace(app: TestApp, name = 'Test workspace'): Promise<WorkspaceFixture> {
  const ownerEmail = `owner-${randomToken(6).toLowerCase()}@example.test`;
  const ownerPassword = 'correct horse battery staple';
  const p = await provisionWorkspace(app.orm.em.fork(), { name, ownerEmail, ownerPassword });
  return { workspaceId: p.workspace.id, ownerId: p.user.id, ownerEmail, ownerPassword, token: p.apiKey.token, keyId: p.apiKey.id };
}

/**
 * Adds a user with `role` to the workspace and issues them a key of `scope`, straight
 * through the services (HTTP key creation is tested on its own).
 */
export async function addUserWithKey(
  app: TestApp,
  ws: WorkspaceFixture,
  role: MembershipRole,
  scope: ApiKeyScope = 'workspace',
): Promise<{ userId: string; email: string; token: string; keyId: string }> {
  const em = app.orm.em.fork();
  const email = `${role}-${randomToken(6).toLowerCase()}@example.test`;
  const owner = {
    kind: 'session' as const,
    sessionId: 'fixture',
    principalId: `user:${ws.ownerId}`,
    userId: ws.ownerId,
    workspaceId: ws.workspaceId,
    role: 'owner' as const,
  };
  const { member } = role === 'owner' ? await addOwner(app, ws, email) : await grantMembership(em, owner, { email, role });
  const { apiKey, token } = await issueApiKey(em, null, {
    name: `${scope} key ${newId('n')}`,
    scope,
    workspaceId: scope === 'organization' ? null : ws.workspaceId,
    auditWorkspaceId: ws.workspaceId,
    createdById: member.userId,
    organization: scope === 'organization' ? { workspaceSelection: 'selected', workspaceIds: [ws.workspaceId], permission: 'read' } : null,
    allowedWorkflowIds: scope === 'end_user_gateway' ? ['wf_fixture'] : null,
  });
  return { userId: member.userId, email, token, keyId: apiKey.id };
}

async function addOwner(app: TestApp, ws: WorkspaceFixture, email: string) {
  const em = app.orm.em.fork();
  const owner = {
    kind: 'session' as const,
    sessionId: 'fixture',
    principalId: `user:${ws.ownerId}`,
    userId: ws.ownerId,
    workspaceId: ws.workspaceId,
    role: 'owner' as const,
  };
  const result = await grantMembership(em, owner, { email, role: 'admin' });
  await em.nativeUpdate(MembershipSchema, { workspaceId: ws.workspaceId, userId: result.member.userId }, { role: 'owner' });
  return result;
}

export interface HttpResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

/** Real HTTP to the app with fetch. `token` sets the bearer header; `body` objects are sent as JSON. */
export async function http<T = any>(
  app: { url: string },
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; cookie?: string } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.cookie) headers.cookie = opts.cookie;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  if (opts.rawBody !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${app.url}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

/** Signs in over HTTP and returns the session cookie to send back. */
export async function signInCookie(app: TestApp, email: string, password: string, workspaceId?: string): Promise<string> {
  const res = await http(app, 'POST', '/api/auth/sign-in', { body: { email, password, ...(workspaceId ? { workspaceId } : {}) } });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  return setCookie.split(';')[0];
}

export interface TestWorker {
  stop(): Promise<void>;
  /** Runs held in the worker's sticky cache now (the SDK's own count). */
  cachedWorkflows(): number;
}

/**
 * The services of a test worker: those of the app it runs beside, as the worker process builds
 * them (with the app's configuration and blob store), outbound calls to loopback fakes allowed.
 * Without an app, only the database and the credential keys of TEST_SECRET_KEY.
 */
function testWorkerServices(app: { orm: MikroORM; deps?: AppDeps }): WorkerServices {
  if (!app.deps)
    return {
      orm: app.orm,
      allowPrivateNetworks: true,
      credentials: keySettingsOf({
        credentials: { key: undefined, previousKeys: [], envAllowlist: [], testTimeoutMs: 10_000, providerBaseUrls: {} },
        secretKey: TEST_SECRET_KEY,
      }),
    };
  const { files } = app.deps.services;
  return createWorkerServices(
    { ...app.deps.config, outboundAllowPrivateNetworks: true },
    { orm: app.orm, blobs: files.blobs, scanners: files.scanners },
  );
}

/**
 * A real worker on `workflow-runs` in this test process, using the workflow bundle built by
 * global setup. Stopping it mid-run and starting another is how crash tests simulate a
 * worker dying.
 */
export async function startTestWorker(
  app: { orm: MikroORM; deps?: AppDeps },
  opts: {
    identity?: string;
    temporalAddress?: string;
    logStream?: Writable;
    logLevel?: string;
    payloadCodec?: PayloadEncryptionCodec;
    maxCachedWorkflows?: number;
    codeTimeoutMs?: number;
    /** false: the worker's outbound guard refuses private and loopback addresses, as in production (default: allowed, for loopback fakes). */
    allowPrivateNetworks?: boolean;
  } = {},
): Promise<TestWorker> {
  // The SDK runtime (and its logger) is installed by the first worker of the process.
  const logger = createLogger(opts.logLevel ?? process.env.TEST_LOG_LEVEL ?? 'error', { stream: opts.logStream });
  const connection = await connectWorkerConnection(
    { address: opts.temporalAddress ?? testEnv('temporalAddress'), namespace: 'default' },
    { logger },
  );
  const bundle = { code: await readFile(testEnv('workflowBundle'), 'utf8') };
  const worker = await createServiceWorker({
    connection,
    namespace: 'default',
    services: {
      ...testWorkerServices(app),
      codeTimeoutMs: opts.codeTimeoutMs,
      ...(opts.allowPrivateNetworks === false ? { allowPrivateNetworks: false } : {}),
    },
    workflowBundle: bundle,
    identity: opts.identity,
    payloadCodec: opts.payloadCodec ?? testPayloadCodec,
    maxCachedWorkflows: opts.maxCachedWorkflows,
  });
  const running = worker.run();
  let stopped = false;
  return {
    stop: async () => {
      // Idempotent: a test that stops a stack's worker mid-way leaves the stack's close to stop it again.
      if (stopped) return;
      stopped = true;
      worker.shutdown();
      await running.catch(() => undefined);
      await closeSandboxPool();
      await connection.close();
    },
    cachedWorkflows: () => worker.getStatus().numCachedWorkflows,
  };
}

export interface TestStack {
  app: TestApp;
  worker: TestWorker;
  /** A fresh workspace with its owner and a workspace key. */
  ws: WorkspaceFixture;
  /** Stops the worker, then the app. */
  close(): Promise<void>;
}

/**
 * The shared setup of a test file that runs workflows: the app (options as `startTestApp`), a
 * worker on `workflow-runs` in this process, and a fresh workspace. If a later part fails to
 * start, the parts already started are closed before the error is rethrown.
 */
export async function startTestStack(
  opts: {
    config?: Partial<AppConfig>;
    temporal?: Parameters<typeof startTestApp>[2];
    workspaceName?: string;
    /** The worker's outbound guard (startTestWorker): false refuses private and loopback addresses. */
    allowPrivateNetworks?: boolean;
  } = {},
): Promise<TestStack> {
  const app = await startTestApp(opts.config, undefined, opts.temporal);
  let worker: TestWorker | undefined;
  try {
    const logStream = opts.temporal?.logStream;
    worker = await startTestWorker(app, {
      temporalAddress: opts.temporal?.temporalAddress,
      logStream,
      logLevel: logStream ? app.deps.config.logLevel : undefined,
      allowPrivateNetworks: opts.allowPrivateNetworks,
    });
    const ws = await createWorkspace(app, opts.workspaceName);
    const started = worker;
    return {
      app,
      worker,
      ws,
      close: async () => {
        await started.stop();
        await app.close();
      },
    };
  } catch (err) {
    await worker?.stop();
    await app.close();
    throw err;
  }
}

/** Polls a run over HTTP until `done(run)` holds; fails with the last state after `timeoutMs`. */
export async function waitForRun(
  app: { url: string },
  token: string,
  runId: string,
  done: (run: any) => boolean = (run) => ['succeeded', 'failed', 'canceled'].includes(run.status),
  timeoutMs = 30_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const res = await http(app, 'GET', `/api/v1/runs/${runId}`, { token });
    last = res.body;
    if (res.status === 200 && done(res.body.run)) return res.body.run;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${runId} did not reach the expected state: ${JSON.stringify(last)}`);
}

/** Calls `fn` until `ok` accepts its value or `timeoutMs` passed; returns the last value (assert on it). */
export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await fn();
  while (!ok(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = await fn();
  }
  return value;
}
