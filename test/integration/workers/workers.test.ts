/**
 * The worker routes over real HTTP, PostgreSQL and Temporal: a smoke test that no worker
 * picks up (attention, 202) and one a real worker completes (passed, remembered as the
 * latest), the measured status (task queue pollers, database, migrations, schedules, runs)
 * without secrets, the doctor's warnings and next actions, the workspace's own Temporal
 * Schedules counted, session twins and key scopes.
 */
import { loadConfig } from '../../../services/kernel/config';
import { Connection } from '@temporalio/client';
import { SmokeTestSchema } from '../../../db/entities';
import { ensureTemporalCli } from '../../../scripts/lib/temporalCli';
import { startTemporalDevServer, type TemporalDevServer } from '../../../scripts/lib/temporalDevServer';
import { registerSearchAttributes } from '../../../temporal/searchAttributes';
import { startProviderFake, type ProviderFake } from '../../fakes/providerServer';
import type { z } from 'zod';
import type { smokeTestResultSchema, workerDoctorSchema, workerStatusSchema } from '../../../api/schemas/workers';
import { startTestWorker } from '../../support/harness';
import { addUserWithKey, createWorkspace, signInCookie, useTestStack, type TestWorker, type WorkspaceFixture } from '../../kit';

type WorkerStatus = z.infer<typeof workerStatusSchema>;
type WorkerDoctor = z.infer<typeof workerDoctorSchema>;
type SmokeTestResult = z.infer<typeof smokeTestResultSchema>;

/** The smoke test's Temporal workflow id; fails the test when it has none. */
function smokeWorkflowId(smokeTest: SmokeTestResult['smokeTest']): string {
  const id = smokeTest.temporal.workflowId;
  if (!id) throw new Error(`smoke test ${smokeTest.id} has no Temporal workflow id`);
  return id;
}

let other: WorkspaceFixture;
let workflowId: string;
let otherWorkflowId: string;

const STATUS = '/api/v1/workers/status';
const DOCTOR = '/api/v1/workers/doctor';
const SMOKE = '/api/v1/workers/smoke-test';

function expectNoSecrets(text: string) {
  for (const secret of [
    'postgres://',
    'postgresql://',
    'DATABASE_URL',
    'TEMPORAL_ADDRESS',
    'SVC_TEST_',
    'LLM_',
    'LOCAL_AI_CLI_',
    'SECRET_KEY',
    modelApi.url,
    temporal.address,
  ]) {
    expect(text).not.toContain(secret);
  }
}

// A Temporal server of its own: the no-worker assertions must not see pollers that other test
// files' workers left on the shared server's task queue (Temporal lists pollers for a while).
let temporal: TemporalDevServer;
// The chat model endpoint the agent runtime section probes (a loopback fake of its /models).
let modelApi: ProviderFake;

/** No worker until the describe that starts one; the stack.app runs against this file's own Temporal server. */
const stack = useTestStack(async () => {
  temporal = await startTemporalDevServer({ binary: await ensureTemporalCli(), uiPort: null, startTimeoutMs: 120_000 });
  const connection = await Connection.connect({ address: temporal.address });
  await registerSearchAttributes(connection, 'default');
  await connection.close();
  modelApi = await startProviderFake({ authorized: () => true, unauthorized: {}, handle: () => ({ json: { data: [] } }) });
  return {
    config: { outboundAllowPrivateNetworks: true, llm: { ...loadConfig({}).llm, baseUrl: `${modelApi.url}/v1/` } },
    temporal: { temporalAddress: temporal.address },
    worker: false,
    workspaceName: 'Workers workspace',
  };
});
beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other workers workspace');
  const wf = await stack.api.workflows.create({ name: 'Smoke target' });
  expect(wf.status).toBe(201);
  workflowId = wf.body.workflow.id;
  const otherWf = await stack.as(other.token).workflows.create({ name: 'Foreign' });
  otherWorkflowId = otherWf.body.workflow.id;
});

afterAll(async () => {
  await temporal?.stop();
  await modelApi?.close();
});

describe('without a worker', () => {
  test('the doctor reports no latest smoke test and how to start a worker', async () => {
    const res = await stack.api.get<WorkerDoctor>(DOCTOR);
    expect(res.status).toBe(200);
    const { doctor } = res.body;
    expect(doctor).toMatchObject({
      workspaceId: stack.ws.workspaceId,
      source: 'api',
      appUrl: stack.app.url,
      persistence: { durable: true, mode: 'postgresql' },
    });
    expect(doctor.database).toMatchObject({ reachable: true, migrationsCurrent: true, pendingMigrations: [] });
    expect(doctor.queue).toMatchObject({ mode: 'temporal', queueName: 'workflow-runs', workerConcurrency: 0 });
    expect(doctor.scheduler).toEqual({ mode: 'temporal-schedules', schedules: 0 });
    expect(doctor.status).toBe('attention');
    expect(doctor.blockers).toEqual([]);
    expect(doctor.warnings.some((w) => w.includes('No worker is polling the workflow-runs'))).toBe(true);
    expect(doctor.warnings.some((w) => w.includes('No smoke test'))).toBe(true);
    expect(doctor.nextActions).toContain('Start a worker: npm run start:worker');
    expect(doctor.nextActions).toContain('Run a smoke test: POST /api/v1/workers/smoke-test');
    expectNoSecrets(res.text);
  });

  test('a smoke test no worker picks up is `attention` (202), terminated and remembered', async () => {
    const res = await stack.api.post<SmokeTestResult>(SMOKE, { waitForWorkerMs: 500, targetWorkflowId: workflowId });
    expect(res.status).toBe(202);
    const { smokeTest } = res.body;
    expect(smokeTest).toMatchObject({
      status: 'attention',
      targetWorkflowId: workflowId,
      temporal: { taskQueue: 'workflow-runs', mode: 'temporal' },
    });
    expect(smokeTest.message).toContain('no worker is polling the workflow-runs task queue');
    expect(smokeTest.temporal.workflowId).toMatch(/^smoke_[0-9a-f-]{36}$/);
    expect(smokeTest.durationMs).toBeGreaterThanOrEqual(500);
    const description = await stack.app.deps.temporal.client.workflow.getHandle(smokeWorkflowId(smokeTest)).describe();
    expect(description.status.name).toBe('TERMINATED');
    expect(description.searchAttributes.WorkspaceId).toEqual([stack.ws.workspaceId]);
    const stored = await stack.app.orm.em.fork().findOneOrFail(SmokeTestSchema, { id: smokeTest.id });
    expect(stored).toMatchObject({ workspaceId: stack.ws.workspaceId, status: 'attention' });

    const doctor = await stack.api.get<WorkerDoctor>(DOCTOR);
    expect(doctor.body.doctor.workerHealth.latestSmokeTest?.id).toBe(smokeTest.id);
    expect(doctor.body.doctor.warnings.some((w) => w.includes('latest smoke test did not pass'))).toBe(true);
  });

  test('status answers measured fields, honours ?now= and leaks no connection details', async () => {
    const res = await stack.api.get<WorkerStatus>(`${STATUS}?now=2026-01-02T03:04:05.000Z`);
    expect(res.status).toBe(200);
    const { status } = res.body;
    expect(status.checkedAt).toBe('2026-01-02T03:04:05.000Z');
    expect(status.queue).toMatchObject({ mode: 'temporal', queueName: 'workflow-runs', workerConcurrency: 0, pollers: [], error: null });
    expect(status.persistence).toEqual({ durable: true, mode: 'postgresql' });
    expect(status.database.reachable).toBe(true);
    expect(typeof status.database.latencyMs).toBe('number');
    expect(status.health.ok).toBe(false);
    expect(status.health.checks).toMatchObject({ database: true, migrations: true, temporal: true, workers: false });
    expect(status.runs).toMatchObject({ total: 0, queued: 0, succeeded: 0, failed: 0 });
    expect(status.recentRuns).toEqual([]);
    expect(status.latestSmokeTest?.status).toBe('attention');
    expect(status.queue.counts).toEqual({ queued: 0, running: 0, waiting: 0 });
    expect(status.localAiCli).toEqual({
      cliA: {
        kind: 'cliA',
        configured: false,
        status: 'not_configured',
        connected: false,
        authMethod: null,
        loginPending: false,
        lastVerifiedAt: null,
      },
      cliB: {
        kind: 'cliB',
        configured: false,
        status: 'not_configured',
        connected: false,
        authMethod: null,
        loginPending: false,
        lastVerifiedAt: null,
      },
    });
    expect(status.managedWorkspaces).toEqual({ mode: 'shared-task-queue', allWorkspaces: true, thisWorkspaceServed: false });
    expect(status.agentRuntime).toMatchObject({
      modelEndpoint: { configured: true, reachable: true, status: 'reachable', httpStatus: 200 },
      connectedLocalAiClis: [],
      ready: true,
    });
    expect(status.sideEffectTransports?.httpGuard).toEqual({ enabled: true, privateNetworksAllowed: true });
    expect(status.deployment.labels).toMatchObject({
      role: 'api',
      temporalNamespace: 'default',
      blobStorage: 'local',
      chatModel: 'configured',
      localAiCli: 'none',
    });
    expectNoSecrets(res.text);
  });

  test('the agent runtime: an unreachable, refused or missing chat model endpoint is a doctor warning', async () => {
    const config = stack.app.deps.config;
    const original = config.llm.baseUrl;
    try {
      config.llm.baseUrl = 'http://127.0.0.1:1/v1';
      let res = await stack.api.get<WorkerDoctor>(DOCTOR);
      expect(res.body.doctor.agentRuntime.modelEndpoint).toMatchObject({
        configured: true,
        reachable: false,
        status: 'unreachable',
        httpStatus: null,
      });
      expect(res.body.doctor.warnings).toContain(
        'The chat model endpoint is not reachable (unreachable); command jobs and research that use it will fail.',
      );
      expect(res.body.doctor.nextActions).toContain('Ask the operator to check the chat model endpoint.');
      expectNoSecrets(res.text);
      expect(res.text).not.toContain('127.0.0.1:1');

      config.llm.baseUrl = original;
      config.outboundAllowPrivateNetworks = false;
      const refused = await stack.api.get<WorkerStatus>(STATUS);
      expect(refused.body.status.agentRuntime.modelEndpoint).toMatchObject({ reachable: false, status: 'refused' });
      expect(refused.body.status.sideEffectTransports?.httpGuard.privateNetworksAllowed).toBe(false);
      config.outboundAllowPrivateNetworks = true;

      config.llm.baseUrl = undefined;
      res = await stack.api.get<WorkerDoctor>(DOCTOR);
      expect(res.body.doctor.agentRuntime).toEqual({
        modelEndpoint: { configured: false, reachable: null, status: 'not_configured', httpStatus: null, latencyMs: null },
        connectedLocalAiClis: [],
        ready: false,
      });
      expect(res.body.doctor.warnings).toContain(
        'No chat model endpoint is configured and no local AI CLI is connected; command jobs and research cannot call a model.',
      );
      expect(res.body.doctor.nextActions).toContain('Ask the operator to configure a chat model endpoint or a local AI CLI.');
      expect(res.body.doctor.deployment.missingOptional).toContain('chat model endpoint');
    } finally {
      config.llm.baseUrl = original;
      config.outboundAllowPrivateNetworks = true;
    }
  });

  test('a deployment without a secret key is blocked, and says so in labels only', async () => {
    const config = stack.app.deps.config;
    const secretKey = config.secretKey;
    try {
      config.secretKey = undefined;
      const res = await stack.api.get<WorkerDoctor>(DOCTOR);
      expect(res.body.doctor.status).toBe('blocked');
      expect(res.body.doctor.deployment.missingRequired).toEqual(['secret key (webhook URLs and encrypted credentials)']);
      expect(res.body.doctor.blockers).toContain(
        'The deployment lacks a required setting: secret key (webhook URLs and encrypted credentials).',
      );
      expectNoSecrets(res.text);
    } finally {
      config.secretKey = secretKey;
    }
  });

  test('?now= that is not ISO is a 400', async () => {
    expect((await stack.api.get<WorkerStatus>(`${STATUS}?now=bad`)).status).toBe(400);
    expect((await stack.api.get<WorkerDoctor>(`${DOCTOR}?now=bad`)).status).toBe(400);
  });

  test('the smoke body is strict and the target must be a workflow of the workspace', async () => {
    expect((await stack.api.post<SmokeTestResult>(SMOKE, { waitForWorkerMs: 500, extra: 1 })).status).toBe(400);
    expect((await stack.api.post<SmokeTestResult>(SMOKE, { targetWorkflowId: 'wf_missing' })).status).toBe(404);
    expect((await stack.api.post<SmokeTestResult>(SMOKE, { targetWorkflowId: otherWorkflowId })).status).toBe(403);
  });

  test('a personal key gets 403 and no key gets 401', async () => {
    const personal = await addUserWithKey(stack.app, stack.ws, 'member', 'personal');
    for (const [method, path] of [
      ['GET', STATUS],
      ['GET', DOCTOR],
      ['POST', SMOKE],
    ] as const) {
      expect((await stack.as(personal.token).request(method, path, { body: method === 'POST' ? {} : undefined })).status).toBe(403);
      expect((await stack.as().request(method, path)).status).toBe(401);
    }
  });
});

describe('with a worker', () => {
  let worker: TestWorker;

  beforeAll(async () => {
    worker = await startTestWorker(stack.app, { identity: 'workers-test-worker', temporalAddress: temporal.address });
  });

  afterAll(async () => {
    await worker?.stop();
  });

  test('a smoke test passes (200) and is the latest in status', async () => {
    const res = await stack.api.post<SmokeTestResult>(SMOKE, { targetWorkflowId: workflowId, useQueue: true, waitForWorkerMs: 30_000 });
    expect(res.status).toBe(200);
    const { smokeTest } = res.body;
    expect(smokeTest).toMatchObject({
      status: 'passed',
      targetWorkflowId: workflowId,
      temporal: { taskQueue: 'workflow-runs', mode: 'temporal' },
    });
    const result = await stack.app.deps.temporal.client.workflow.getHandle(smokeWorkflowId(smokeTest)).result();
    expect(new Date(result.databaseTime).getTime()).not.toBeNaN();

    const status = await stack.api.get<WorkerStatus>(STATUS);
    expect(status.status).toBe(200);
    expect(status.body.status.latestSmokeTest).toEqual(smokeTest);
    expect(status.body.status.queue.workerConcurrency).toBeGreaterThanOrEqual(1);
    expect(status.body.status.queue.pollers.map((p) => p.identity)).toContain('workers-test-worker');
    expectNoSecrets(status.text);

    const doctor = await stack.api.get<WorkerDoctor>(DOCTOR);
    expect(doctor.body.doctor.status).toBe('ok');
    expect(doctor.body.doctor.warnings).toEqual([]);
    expect(doctor.body.doctor.workerHealth.ok).toBe(true);
    expect(doctor.body.doctor.managedWorkspaces.thisWorkspaceServed).toBe(true);
    expect(doctor.body.doctor.extflowBundle).toEqual({
      imported: false,
      bundlePath: null,
      workflows: 0,
      message: 'No extflow bundle has been imported.',
    });
    expectNoSecrets(doctor.text);

    // Another workspace's latest smoke test is its own.
    const otherStatus = await stack.as(other.token).get<WorkerStatus>(STATUS);
    expect(otherStatus.body.status.latestSmokeTest).toBeNull();
  });

  test('session twins share the handlers', async () => {
    const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword, stack.ws.workspaceId);
    const smoke = await stack.as().post<SmokeTestResult>('/api/workers/smoke-test', { waitForWorkerMs: 30_000 }, { cookie });
    expect(smoke.status).toBe(200);
    expect(smoke.body.smokeTest).toMatchObject({ status: 'passed', targetWorkflowId: null });
    const status = await stack.as().get<WorkerStatus>('/api/workers/status', { cookie });
    expect(status.status).toBe(200);
    expect(status.body.status.latestSmokeTest?.id).toBe(smoke.body.smokeTest.id);
    const doctor = await stack.as().get<WorkerDoctor>('/api/workers/doctor?now=2026-01-01T00:00:00Z', { cookie });
    expect(doctor.status).toBe(200);
    expect(doctor.body.doctor.checkedAt).toBe('2026-01-01T00:00:00.000Z');
    expect((await stack.api.get<WorkerStatus>('/api/workers/status')).status).toBe(401);
  });

  test("the scheduler counts the Temporal Schedules of the workspace's own workflows", async () => {
    // New Year's midnight: the schedule exists but does not fire while the test runs.
    const graph = {
      nodes: [
        { id: 'tick', type: 'schedule', config: { cron: '0 0 1 1 *', timezone: 'UTC' } },
        { id: 'stamp', type: 'transform', config: { expression: '{ "at": scheduledAt }' } },
      ],
      edges: [{ source: 'tick', target: 'stamp' }],
    };
    const created = await stack.api.workflows.create({ name: 'Yearly', ...graph });
    expect(created.status).toBe(201);
    expect((await stack.api.workflows.deploy(created.body.workflow.id)).status).toBe(200);

    const status = await stack.api.get<WorkerStatus>(STATUS);
    expect(status.body.status.scheduler).toEqual({ mode: 'temporal-schedules', schedules: 1, error: null });
    expect(status.body.status.health.checks.scheduler).toBe(true);
    const doctor = await stack.api.get<WorkerDoctor>(DOCTOR);
    expect(doctor.body.doctor.scheduler).toEqual({ mode: 'temporal-schedules', schedules: 1 });
    const otherStatus = await stack.as(other.token).get<WorkerStatus>(STATUS);
    expect(otherStatus.body.status.scheduler).toEqual({ mode: 'temporal-schedules', schedules: 0, error: null });
  });
});
