import { hashPassword, passwordHashN, verifyPassword } from '../../../../services/kernel/passwords';
import {
  DEFAULT_MAX_CACHED_WORKFLOWS,
  DEFAULT_OUTBOX_MAX_QUEUED_RUNS,
  DEFAULT_OUTBOX_START_PARALLELISM,
  DEFAULT_RUN_ADMISSION_MAX_ACTIVE,
  loadConfig,
  requireSecretKey,
  sandboxSettings,
} from '../../../../services/kernel/config';
import path from 'node:path';
import { canonicalJson } from '../../../../engine/canonicalJson';
import { requestFingerprint } from '../../../../services/kernel/idempotency';
import { generateApiKeyToken } from '../../../../services/accounts/apiKeys';

test('scrypt hashes verify, are salted, and reject wrong or malformed input', async () => {
  const a = await hashPassword('s3cret-pass');
  const b = await hashPassword('s3cret-pass');
  expect(a).not.toBe(b);
  expect(a).toMatch(/^scrypt\$/);
  expect(await verifyPassword('s3cret-pass', a)).toBe(true);
  expect(await verifyPassword('s3cret-pasS', a)).toBe(false);
  expect(await verifyPassword('s3cret-pass', null)).toBe(false);
  expect(await verifyPassword('s3cret-pass', 'bcrypt$whatever')).toBe(false);
});

test('the cheaper test cost of password hashes applies under NODE_ENV=test only, never in production', () => {
  expect(passwordHashN({ NODE_ENV: 'test', SVC_TEST_PASSWORD_HASH_N: '1024' })).toBe(1024);
  expect(passwordHashN({ NODE_ENV: 'production', SVC_TEST_PASSWORD_HASH_N: '1024' })).toBe(2 ** 15);
  expect(passwordHashN({ SVC_TEST_PASSWORD_HASH_N: '1024' })).toBe(2 ** 15);
  // Not a power of two, below the floor, or not cheaper: the production cost.
  for (const n of ['1000', '512', String(2 ** 16), 'x'])
    expect(passwordHashN({ NODE_ENV: 'test', SVC_TEST_PASSWORD_HASH_N: n })).toBe(2 ** 15);
  expect(passwordHashN({ NODE_ENV: 'test' })).toBe(2 ** 15);
});

test('API key tokens are hise_ plus 24 random bytes in base64url', () => {
  const tokens = new Set(Array.from({ length: 50 }, generateApiKeyToken));
  expect(tokens.size).toBe(50);
  for (const t of tokens) {
    expect(t).toMatch(/^hise_[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(t.slice(5), 'base64url')).toHaveLength(24);
  }
});

test('configuration defaults and readable errors', () => {
  const config = loadConfig({});
  expect(config.port).toBe(3000);
  expect(config.temporal.namespace).toBe('default');
  expect(config.temporal.devUiPort).toBe(8233);
  expect(config.trustProxy).toBe(false);
  expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  expect(() => loadConfig({ TRUST_PROXY: 'maybe' })).toThrow(/TRUST_PROXY/);
});

test('a bad value of any area is refused in the same words, naming the variable (services/kernel/config/<area>.ts)', () => {
  // One variable per area module; the database area has no value it refuses.
  const bad: Record<string, string> = {
    PORT: 'eighty',
    METRICS_PORT: '0',
    API_PROCESSES: '0',
    TEMPORAL_PORT: '0',
    SECRET_KEY: 'short',
    OPERATOR_TOKEN: 'short',
    SIGN_IN_WINDOW_SECONDS: '0',
    OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'maybe',
    RUN_ADMISSION_MAX_WAIT_MS: '-1',
    WEBHOOK_SYNC_BUDGET_MS: '1',
    WORKFLOW_REPOSITORY_ROOT: '',
    BLOB_STORAGE: 'ftp',
    CREDENTIAL_TEST_TIMEOUT_MS: '1',
    DATABASE_QUERY_MAX_ROWS: '0',
    LLM_TIMEOUT_MS: '1',
    COMMAND_CONFIRMATION_TTL_SECONDS: '0',
    EMBEDDINGS_BASE_URL: 'not a url',
    LOCAL_AI_CLI_TIMEOUT_MS: '1',
    GMAIL_API_BASE_URL: 'nope',
    SANDBOX_THREADS: '0',
  };
  for (const [name, value] of Object.entries(bad))
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name}: \\S`));
  expect(() => loadConfig({ SECRET_KEY: 'short' })).toThrow('Invalid configuration: SECRET_KEY: SECRET_KEY must be at least 32 characters');
  // All areas are parsed before any fails: one message names every bad variable.
  let message = '';
  try {
    loadConfig(bad);
  } catch (err) {
    message = (err as Error).message;
  }
  for (const name of Object.keys(bad)) expect(message).toContain(`${name}: `);
  // Checks across variables and the areas' own parsing keep their messages.
  expect(() => loadConfig({ WORKER_HEARTBEAT_MS: '2000', WORKER_HEARTBEAT_STALE_MS: '3000' })).toThrow(
    'Invalid configuration: WORKER_HEARTBEAT_STALE_MS must be at least twice WORKER_HEARTBEAT_MS',
  );
  expect(() => loadConfig({ CREDENTIAL_ENV_ALLOWLIST: 'OK, 9BAD' })).toThrow(
    'Invalid configuration: CREDENTIAL_ENV_ALLOWLIST: "9BAD" is not a variable name',
  );
  expect(() => loadConfig({ LLM_PRICES: '{' })).toThrow(/^Invalid configuration: LLM_PRICES: expected JSON/);
  expect(() => requireSecretKey(undefined)).toThrow(/SECRET_KEY is not configured/);
  // The sandbox area is also parsed on its own, by the first sandbox call of a process: other areas' values do not matter there.
  expect(sandboxSettings({ PORT: 'eighty', SANDBOX_THREADS: '3' })).toMatchObject({ codeThreads: 3, codePerWorkspace: 2 });
  expect(() => sandboxSettings({ SANDBOX_THREADS: '0' })).toThrow(/^Invalid configuration: SANDBOX_THREADS: /);
});

test("areas that default from another area's variable still do", () => {
  expect(loadConfig({ HOST: '10.0.0.5' }).metrics.host).toBe('10.0.0.5');
  expect(loadConfig({ HOST: '10.0.0.5', METRICS_HOST: '127.0.0.1' }).metrics.host).toBe('127.0.0.1');
  const config = loadConfig({ DATA_DIR: '/srv/state' });
  expect(config.dataDir).toBe('/srv/state');
  expect(config.blobs.localDir).toBe(path.join('/srv/state', 'blobs'));
  expect(config.localAiCli.rootDir).toBe(path.join('/srv/state', 'local-ai-cli'));
  expect(loadConfig({ DATA_DIR: '/srv/state', BLOB_DIR: '/mnt/blobs' }).blobs.localDir).toBe('/mnt/blobs');
});

test('sign-in limits: the account-wide limit must be above the per-address one, locks capped at or above the first', () => {
  expect(loadConfig({}).signInLimits).toEqual({
    maxPerAddress: 10,
    maxPerAccount: 50,
    windowMs: 900_000,
    firstLockMs: 300_000,
    maxLockMs: 3_600_000,
    lockMemoryMs: 86_400_000,
    rememberAddressMs: 30 * 86_400_000,
  });
  expect(loadConfig({ SIGN_IN_REMEMBER_ADDRESS_DAYS: '0' }).signInLimits.rememberAddressMs).toBe(0);
  expect(loadConfig({}).trustProxyHops).toBe(1);
  expect(() => loadConfig({ SIGN_IN_MAX_PER_ADDRESS: '20', SIGN_IN_MAX_PER_ACCOUNT: '20' })).toThrow(
    /SIGN_IN_MAX_PER_ACCOUNT must be above/,
  );
  expect(() => loadConfig({ SIGN_IN_FIRST_LOCK_SECONDS: '600', SIGN_IN_MAX_LOCK_SECONDS: '300' })).toThrow(/SIGN_IN_MAX_LOCK_SECONDS/);
});

test('the SDK metrics address is host:port; unset means a private loopback port chosen at start', () => {
  expect(loadConfig({}).temporal.sdkMetricsAddress).toBeUndefined();
  expect(loadConfig({ TEMPORAL_SDK_METRICS_ADDRESS: '0.0.0.0:9464' }).temporal.sdkMetricsAddress).toBe('0.0.0.0:9464');
  expect(loadConfig({ TEMPORAL_SDK_METRICS_ADDRESS: '[::1]:9464' }).temporal.sdkMetricsAddress).toBe('[::1]:9464');
  expect(() => loadConfig({ TEMPORAL_SDK_METRICS_ADDRESS: '9464' })).toThrow(/TEMPORAL_SDK_METRICS_ADDRESS: expected host:port/);
  expect(() => loadConfig({ TEMPORAL_SDK_METRICS_ADDRESS: ':9464' })).toThrow(/TEMPORAL_SDK_METRICS_ADDRESS/);
  expect(() => loadConfig({ TEMPORAL_SDK_METRICS_ADDRESS: 'http://0.0.0.0:9464/metrics' })).toThrow(/TEMPORAL_SDK_METRICS_ADDRESS/);
});

test("the Web UI's origins for the codec's CORS: localhost and 127.0.0.1 on the UI port by default, or TEMPORAL_UI_ORIGINS", () => {
  expect(loadConfig({}).temporal.uiOrigins).toEqual(['http://localhost:8233', 'http://127.0.0.1:8233']);
  expect(loadConfig({ TEMPORAL_UI_PORT: '9000', TEMPORAL_UI_URL: 'https://temporal.example.com/ui' }).temporal.uiOrigins).toEqual([
    'http://localhost:9000',
    'http://127.0.0.1:9000',
    'https://temporal.example.com',
  ]);
  expect(loadConfig({ TEMPORAL_UI_ORIGINS: 'https://ui.example.com, http://localhost:8080/' }).temporal.uiOrigins).toEqual([
    'https://ui.example.com',
    'http://localhost:8080',
  ]);
  expect(() => loadConfig({ TEMPORAL_UI_ORIGINS: 'ui.example.com' })).toThrow(/TEMPORAL_UI_ORIGINS/);
});

test('the worker sticky cache is bounded by default and set by WORKER_MAX_CACHED_WORKFLOWS (at least 2)', () => {
  expect(loadConfig({}).temporal.maxCachedWorkflows).toBe(DEFAULT_MAX_CACHED_WORKFLOWS);
  expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '40' }).temporal.maxCachedWorkflows).toBe(40);
  expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '1' })).toThrow(/WORKER_MAX_CACHED_WORKFLOWS/);
  expect(() => loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: 'many' })).toThrow(/WORKER_MAX_CACHED_WORKFLOWS/);
});

test('run admission: on by default, RUN_ADMISSION_MAX_ACTIVE=0 turns it off, bad values are refused', () => {
  expect(loadConfig({}).runAdmission).toEqual({
    maxActivePerWorkspace: DEFAULT_RUN_ADMISSION_MAX_ACTIVE,
    maxWaitMs: 30_000,
    recheckMs: 50,
  });
  expect(
    loadConfig({ RUN_ADMISSION_MAX_ACTIVE: '0', RUN_ADMISSION_MAX_WAIT_MS: '5000', RUN_ADMISSION_RECHECK_MS: '10' }).runAdmission,
  ).toEqual({ maxActivePerWorkspace: 0, maxWaitMs: 5000, recheckMs: 10 });
  expect(() => loadConfig({ RUN_ADMISSION_MAX_ACTIVE: '-1' })).toThrow(/RUN_ADMISSION_MAX_ACTIVE/);
  expect(() => loadConfig({ RUN_ADMISSION_RECHECK_MS: '0' })).toThrow(/RUN_ADMISSION_RECHECK_MS/);
});

test('the outbox dispatcher backpressure cap and starts in flight default to 200 and 32, set by OUTBOX_MAX_QUEUED_RUNS and OUTBOX_START_PARALLELISM', () => {
  const defaults = loadConfig({});
  expect([DEFAULT_OUTBOX_MAX_QUEUED_RUNS, DEFAULT_OUTBOX_START_PARALLELISM]).toEqual([200, 32]);
  expect(defaults.outboxMaxQueuedRuns).toBe(200);
  expect(defaults.outboxStartParallelism).toBe(32);
  const set = loadConfig({ OUTBOX_MAX_QUEUED_RUNS: '1000', OUTBOX_START_PARALLELISM: '8' });
  expect([set.outboxMaxQueuedRuns, set.outboxStartParallelism]).toEqual([1000, 8]);
  expect(loadConfig({ OUTBOX_START_PARALLELISM: '100' }).outboxStartParallelism).toBe(100);
  for (const bad of ['0', '-5', '2.5', 'lots', '100001'])
    expect(() => loadConfig({ OUTBOX_MAX_QUEUED_RUNS: bad })).toThrow(/OUTBOX_MAX_QUEUED_RUNS/);
  for (const bad of ['0', '101', '1.5', 'many'])
    expect(() => loadConfig({ OUTBOX_START_PARALLELISM: bad })).toThrow(/OUTBOX_START_PARALLELISM/);
});

test('research web search: off by default; searxng needs its URL, brave its key (default URL); half a setting is refused', () => {
  expect(loadConfig({}).research).toEqual({ search: null });
  expect(loadConfig({ RESEARCH_SEARCH_PROVIDER: 'searxng', RESEARCH_SEARCH_URL: 'http://searxng:8080/' }).research.search).toEqual({
    provider: 'searxng',
    baseUrl: 'http://searxng:8080',
    apiKey: undefined,
  });
  expect(loadConfig({ RESEARCH_SEARCH_PROVIDER: 'brave', RESEARCH_SEARCH_API_KEY: 'tok' }).research.search).toEqual({
    provider: 'brave',
    baseUrl: 'https://api.search.brave.com',
    apiKey: 'tok',
  });
  expect(() => loadConfig({ RESEARCH_SEARCH_PROVIDER: 'searxng' })).toThrow(
    /RESEARCH_SEARCH_URL: required when RESEARCH_SEARCH_PROVIDER is searxng/,
  );
  expect(() => loadConfig({ RESEARCH_SEARCH_PROVIDER: 'brave' })).toThrow(
    /RESEARCH_SEARCH_API_KEY: required when RESEARCH_SEARCH_PROVIDER is brave/,
  );
  expect(() => loadConfig({ RESEARCH_SEARCH_URL: 'http://searxng:8080' })).toThrow(/need RESEARCH_SEARCH_PROVIDER/);
  expect(() => loadConfig({ RESEARCH_SEARCH_PROVIDER: 'google' })).toThrow(/RESEARCH_SEARCH_PROVIDER/);
  expect(() => loadConfig({ RESEARCH_SEARCH_PROVIDER: 'searxng', RESEARCH_SEARCH_URL: 'not a url' })).toThrow(/RESEARCH_SEARCH_URL/);
});

test('request fingerprints ignore key order but not values, method or path', () => {
  expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
  const f = requestFingerprint('POST', '/x', { a: 1, b: 2 });
  expect(requestFingerprint('post', '/x', { b: 2, a: 1 })).toBe(f);
  expect(requestFingerprint('POST', '/x', { a: 1, b: 3 })).not.toBe(f);
  expect(requestFingerprint('POST', '/y', { a: 1, b: 2 })).not.toBe(f);
  expect(requestFingerprint('PUT', '/x', { a: 1, b: 2 })).not.toBe(f);
});
