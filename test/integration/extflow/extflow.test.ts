/**
 * The extflow worker routes over real HTTP, PostgreSQL and Temporal: import-bundle (body and
 * bundlePath, with traversal and symlink escapes refused), smoke-test (dry runs and live runs
 * through the queue), credentials bootstrap from the environment, import-originals, the
 * legacyalias aliases, and the workflows routes' use of the same converter.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import type {
  extflowBootstrapSchema,
  extflowImportResultSchema,
  extflowOriginalsResultSchema,
  extflowSmokeTestSchema,
} from '../../../api/schemas/extflow';
import type { bundlePreviewSchema, createdWorkflowSchema, importedBundleSchema, importPreviewSchema } from '../../../api/schemas/workflows';
import { startTestApp, TEST_SECRET_KEY } from '../../support/harness';
import {
  addUserWithKey,
  createWorkspace,
  http,
  signInCookie,
  useTestStack,
  type ApiError,
  type CredentialList,
  type WorkflowList,
  type WorkspaceFixture,
} from '../../kit';
import { loadConfig } from '../../../services/kernel/config';

const FIXTURES = join(__dirname, '../../fixtures/extflow');
const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));
const ENV_VAR = 'EXTFLOW_TEST_CONTACTS_API_KEY';
const SECRET = 'very-secret-header-value-42';

/** The answers of the extflow routes; a refusal is `{ error }`. */
type Imported = z.infer<typeof extflowImportResultSchema> & Partial<ApiError>;
type Originals = z.infer<typeof extflowOriginalsResultSchema> & Partial<ApiError>;
type Bootstrap = z.infer<typeof extflowBootstrapSchema>;
type Smoke = z.infer<typeof extflowSmokeTestSchema>;
type ImportPreview = z.infer<typeof importPreviewSchema>;
type BundlePreview = z.infer<typeof bundlePreviewSchema>;
type CreatedWorkflow = z.infer<typeof createdWorkflowSchema>;
type CreatedBundle = z.infer<typeof importedBundleSchema>;

let other: WorkspaceFixture;
let base: string;
let importDir: string;
let outside: string;

const stack = useTestStack(() => {
  base = mkdtempSync(join(tmpdir(), 'extflow-'));
  importDir = join(base, 'imports');
  outside = join(base, 'outside');
  mkdirSync(importDir);
  mkdirSync(outside);
  const bundle = [fixture('01-manual-set'), fixture('06-if-v2')];
  writeFileSync(join(importDir, 'bundle.json'), JSON.stringify(bundle));
  mkdirSync(join(importDir, 'separate'));
  writeFileSync(join(importDir, 'separate', 'a.json'), JSON.stringify(fixture('03-schedule-cron')));
  writeFileSync(join(importDir, 'separate', 'b.json'), JSON.stringify(fixture('10-filter')));
  writeFileSync(join(importDir, 'separate', 'notes.txt'), 'ignored');
  writeFileSync(join(outside, 'secret.json'), JSON.stringify(fixture('01-manual-set')));
  symlinkSync(join(outside, 'secret.json'), join(importDir, 'link-out.json'));
  symlinkSync(outside, join(importDir, 'dir-out'));
  mkdirSync(join(importDir, 'mixed'));
  writeFileSync(join(importDir, 'mixed', 'a.json'), JSON.stringify(fixture('01-manual-set')));
  symlinkSync(join(outside, 'secret.json'), join(importDir, 'mixed', 'b.json'));
  writeFileSync(join(importDir, 'broken.json'), '{ "nodes": [');
  writeFileSync(join(importDir, 'big.json'), `[${' '.repeat(5 * 1024 * 1024 + 10)}]`);
  writeFileSync(join(importDir, 'credentials.json'), JSON.stringify([fixture('14-http-post-json-auth')]));
  process.env[ENV_VAR] = JSON.stringify({ headerName: 'X-Api-Key', headerValue: SECRET });
  const credentials = { ...loadConfig({ SECRET_KEY: TEST_SECRET_KEY, CREDENTIAL_ENV_ALLOWLIST: `${ENV_VAR}:http_header` }).credentials };
  return { config: { extflowImportDir: importDir, credentials } };
});
beforeAll(async () => {
  other = await createWorkspace(stack.app, 'Other workspace');
});
afterAll(() => {
  delete process.env[ENV_VAR];
  rmSync(base, { recursive: true, force: true });
});

async function workflowCount(ws: WorkspaceFixture): Promise<number> {
  const res = await http<WorkflowList>(stack.app, 'GET', '/api/v1/workflows', { token: ws.token });
  return res.body.workflows.length;
}

const post = <T>(path: string, body: unknown, token = stack.ws.token) => http<T>(stack.app, 'POST', path, { token, body });

describe('POST /api/v1/workers/extflow/import-bundle', () => {
  test('imports an exported array from the body, with readiness, links and the doctor; a second import is unchanged', async () => {
    const body = { importBundleJson: JSON.stringify([fixture('02-webhook-respond'), fixture('28-unsupported-google-sheets')]) };
    const res = await post<Imported>('/api/v1/workers/extflow/import-bundle', body);
    expect(res.status).toBe(201);
    expect(res.body.importResult.bundle).toMatchObject({ workflowCount: 2, created: 2, updated: 0, unchanged: 0 });
    const [ready, blocked] = res.body.importResult.workflows;
    expect(ready).toMatchObject({
      externalId: 'extflow-wf02webhook',
      importAction: 'created',
      importReadiness: { deploymentReadiness: { ready: true }, conversion: { ready: true } },
    });
    expect(ready.workflow.status).toBe('draft');
    expect(ready.links).toBeDefined();
    expect(blocked.importReadiness.deploymentReadiness.ready).toBe(false);
    expect(blocked.importReadiness.deploymentReadiness.blockers.join('\n')).toContain('Google Sheets');
    expect(blocked.importReadiness.conversion?.unsupported.map((u) => u.node)).toEqual(['Google Sheets', 'Slack']);
    expect(res.body.doctor).toMatchObject({ workspaceId: stack.ws.workspaceId, source: 'api' });
    expect(Array.isArray(res.body.doctor.nextActions)).toBe(true);
    // The doctor's extflow section counts the workspace's imported workflows.
    expect(res.body.doctor.extflowBundle).toMatchObject({ imported: true, workflows: 2 });

    const again = await post<Imported>('/api/v1/workers/extflow/import-bundle', body);
    expect(again.status).toBe(201);
    expect(again.body.importResult.bundle).toMatchObject({ created: 0, unchanged: 2 });
    expect(again.body.importResult.workflows[0].workflow.id).toBe(ready.workflow.id);
  });

  test('reads a file or a directory of the import directory', async () => {
    const file = await post<Imported>('/api/v1/workers/extflow/import-bundle', { bundlePath: 'bundle.json' });
    expect(file.status).toBe(201);
    expect(file.body.importResult.workflows.map((w) => w.externalId)).toEqual(['extflow-wf01manualSet', 'extflow-wf06if']);
    const dir = await post<Imported>('/api/v1/workers/extflow/import-bundle', { bundlePath: 'separate' });
    expect(dir.status).toBe(201);
    expect(dir.body.importResult.bundle.name).toBe('separate');
    expect(dir.body.importResult.workflows.map((w) => w.externalId)).toEqual(['extflow-wf03cron', 'extflow-wf10filter']);
  });

  test.each([
    ['../outside/secret.json', 'bundlePath must be a relative path inside the import directory, without "..".'],
    ['separate/../../outside/secret.json', 'bundlePath must be a relative path inside the import directory, without "..".'],
    [`${'/'}etc/passwd`, 'bundlePath must be a relative path inside the import directory, without "..".'],
    ['link-out.json', 'bundlePath must stay inside the import directory.'],
    ['dir-out', 'bundlePath must stay inside the import directory.'],
    ['dir-out/secret.json', 'bundlePath must stay inside the import directory.'],
    ['mixed', 'bundlePath must stay inside the import directory.'],
    ['missing.json', 'bundlePath does not exist in the import directory.'],
    ['broken.json', 'The bundle file is not valid JSON.'],
    ['big.json', 'The bundle file is larger than 5242880 bytes.'],
  ])('bundlePath %s is refused with 400 and nothing is imported', async (bundlePath, message) => {
    const before = await workflowCount(stack.ws);
    const res = await post<Imported>('/api/v1/workers/extflow/import-bundle', { bundlePath });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(message);
    expect(await workflowCount(stack.ws)).toBe(before);
  });

  test('malformed, foreign-format, oversized and ambiguous bodies are 400 (413 over the body limit)', async () => {
    const before = await workflowCount(stack.ws);
    const cases: Array<[unknown, number, string]> = [
      [{ importBundleJson: '{"nodes": [' }, 400, 'importBundleJson is not valid JSON.'],
      [
        { importBundleJson: JSON.stringify({ name: 'x', nodes: [], edges: [] }) },
        400,
        'importBundleJson is not an export of the external workflow tool (workflows with nodes and connections).',
      ],
      [
        { importBundleJson: JSON.stringify([{ nodes: [{ name: 'a' }], connections: {} }]) },
        400,
        'importBundleJson.workflows[0].nodes[0] must be an object with a name and a type.',
      ],
      [{ importBundleJson: '[]', bundlePath: 'bundle.json' }, 400, 'Give one of importBundleJson, bundlePath, not several.'],
      [{}, 400, 'importBundleJson or bundlePath is required.'],
      [{ importBundleJson: '[]', extra: true }, 400, ''],
    ];
    for (const [body, status, message] of cases) {
      const res = await post<Imported>('/api/v1/workers/extflow/import-bundle', body);
      expect({ body, status: res.status }).toEqual({ body, status });
      if (message) expect(res.body.error).toBe(message);
    }
    const huge = await http<Imported>(stack.app, 'POST', '/api/v1/workers/extflow/import-bundle', {
      token: stack.ws.token,
      rawBody: JSON.stringify({ importBundleJson: 'x'.repeat(1_100_000) }),
    });
    expect(huge.status).toBe(413);
    expect(await workflowCount(stack.ws)).toBe(before);
  });

  test('a viewer key is refused and nothing is imported', async () => {
    const viewer = await addUserWithKey(stack.app, stack.ws, 'viewer');
    const before = await workflowCount(stack.ws);
    const res = await post<Imported>(
      '/api/v1/workers/extflow/import-bundle',
      { importBundleJson: JSON.stringify([fixture('04-schedule-interval')]) },
      viewer.token,
    );
    expect(res.status).toBe(403);
    expect(await workflowCount(stack.ws)).toBe(before);
  });

  test('another workspace imports its own copy; the first workspace is untouched', async () => {
    const before = await workflowCount(stack.ws);
    const res = await post<Imported>(
      '/api/v1/workers/extflow/import-bundle',
      { importBundleJson: JSON.stringify([fixture('01-manual-set')]) },
      other.token,
    );
    expect(res.status).toBe(201);
    expect(res.body.importResult.bundle.created).toBe(1);
    expect(await workflowCount(stack.ws)).toBe(before);
    const mine = await http(stack.app, 'GET', `/api/v1/workflows/${res.body.importResult.workflows[0].workflow.id}`, {
      token: stack.ws.token,
    });
    expect([403, 404]).toContain(mine.status);
  });
});

describe('POST /api/v1/workers/extflow/smoke-test (and its legacyalias)', () => {
  test('dry runs of the bundle: 200 passed, with persistence.durable', async () => {
    const res = await post<Smoke>('/api/v1/workers/extflow/smoke-test', { bundlePath: 'bundle.json' });
    expect(res.status).toBe(200);
    const smoke = res.body.importedWorkflowSmokeTest;
    expect(smoke).toMatchObject({
      status: 'passed',
      mode: 'dryRun',
      persistence: { durable: true },
      counts: { passed: 2, attention: 0, failed: 0 },
    });
    expect(smoke.workflows.every((w) => w.runStatus === 'succeeded' && w.runId)).toBe(true);
  });

  test('live runs through the queue: a worker finishes them (legacyalias path)', async () => {
    const res = await post<Smoke>('/api/v1/workers/legacyalias/smoke-test', {
      bundlePath: 'separate',
      useQueue: true,
      waitForWorkerMs: 30_000,
    });
    expect(res.status).toBe(200);
    expect(res.body.importedWorkflowSmokeTest).toMatchObject({
      status: 'passed',
      mode: 'queue',
      queue: { mode: 'temporal', queueName: 'workflow-runs' },
      persistence: { durable: true },
    });
    const run = await stack.api.runs.get(`${res.body.importedWorkflowSmokeTest.workflows[0].runId}`);
    expect(run.body.run).toMatchObject({ status: 'succeeded', dryRun: false });
  });

  test('a workflow that is not ready makes it 202 attention; a failing one 500 failed', async () => {
    const all = await post<Smoke>('/api/v1/workers/extflow/smoke-test', {});
    // Everything imported so far, including the Google Sheets workflow, which is not ready.
    expect(all.status).toBe(202);
    const sheets = all.body.importedWorkflowSmokeTest.workflows.find((w) => w.externalId === 'extflow-wf28sheets');
    expect(sheets).toMatchObject({ status: 'attention', runId: null });
    expect(sheets?.message).toContain('Not ready');

    const ws = await createWorkspace(stack.app, 'Failing smoke');
    await post<Imported>(
      '/api/v1/workers/extflow/import-bundle',
      { importBundleJson: JSON.stringify([fixture('23-stop-and-error')]) },
      ws.token,
    );
    const failed = await post<Smoke>('/api/v1/workers/extflow/smoke-test', {}, ws.token);
    expect(failed.status).toBe(500);
    expect(failed.body.importedWorkflowSmokeTest.workflows[0].message).toContain('Bad value 7');
  });

  test('dry runs use the pinned data of imported workflows (bundle or single import); live runs execute every node', async () => {
    const ws = await createWorkspace(stack.app, 'Pinned data');
    const imported = await post<Imported>(
      '/api/v1/workers/extflow/import-bundle',
      { importBundleJson: JSON.stringify([fixture('36-pinned-data')]) },
      ws.token,
    );
    expect(imported.status).toBe(201);
    expect(imported.body.importResult.workflows[0].importReadiness.conversion?.pinnedData).toEqual([
      { node: 'Manual Trigger', nodeId: 'manual_trigger', items: 1 },
      { node: 'Load order', nodeId: 'load_order', items: 1 },
    ]);
    const dry = await post<Smoke>('/api/v1/workers/extflow/smoke-test', {}, ws.token);
    expect(dry.status).toBe(200);
    const [pinnedRun] = dry.body.importedWorkflowSmokeTest.workflows;
    expect(pinnedRun).toMatchObject({
      status: 'passed',
      pinnedData: {
        applied: [
          { node: 'manual_trigger', as: 'input' },
          { node: 'load_order', as: 'output' },
        ],
        skipped: [],
      },
    });
    // The pinned trigger data is the input; the pinned code node's data (total 21), not its code (total 1), reaches Double.
    const run = await stack.api.runs.get(`${pinnedRun.runId}`, { token: ws.token });
    expect(run.body.run).toMatchObject({ status: 'succeeded', dryRun: true, input: { orderId: 7 }, output: { total: 42 } });

    const live = await post<Smoke>('/api/v1/workers/extflow/smoke-test', { useQueue: true, waitForWorkerMs: 30_000 }, ws.token);
    const [liveRun] = live.body.importedWorkflowSmokeTest.workflows;
    expect(liveRun.pinnedData).toEqual({
      applied: [],
      skipped: ['manual_trigger', 'load_order'].map((node) => ({ node, reason: 'A live run executes every node.' })),
    });
    // (Corpus fixture 36 checks the live output: the code's own total, doubled.)

    // A single workflow imported through POST /workflows keeps its pinned data too.
    const single = await createWorkspace(stack.app, 'Pinned single');
    expect(
      (await post<CreatedWorkflow>('/api/v1/workflows', { importJson: JSON.stringify(fixture('36-pinned-data')) }, single.token)).status,
    ).toBe(201);
    const singleDry = await post<Smoke>('/api/v1/workers/extflow/smoke-test', {}, single.token);
    const singleRun = await stack.api.runs.get(`${singleDry.body.importedWorkflowSmokeTest.workflows[0].runId}`, {
      token: single.token,
    });
    expect(singleRun.body.run.output).toEqual({ total: 42 });
  });

  test('another workspace sees none of these workflows; bad bodies are 400', async () => {
    const res = await post<Smoke>(
      '/api/v1/workers/extflow/smoke-test',
      { bundlePath: 'bundle.json' },
      (await createWorkspace(stack.app, 'Empty')).token,
    );
    expect(res.status).toBe(202);
    expect(res.body.importedWorkflowSmokeTest.workflows.map((w) => [w.workflowId, w.message])).toEqual([
      [null, 'Not imported into this workspace yet.'],
      [null, 'Not imported into this workspace yet.'],
    ]);
    expect((await post<Smoke>('/api/v1/workers/extflow/smoke-test', { useQueue: 'yes' })).status).toBe(400);
    expect((await post<Smoke>('/api/v1/workers/extflow/smoke-test', { bundlePath: '../outside/secret.json' })).status).toBe(400);
  });
});

describe('POST /api/v1/workers/extflow/credentials/bootstrap-from-env (and its legacyalias)', () => {
  test('creates the aliases the bundle names from allowed variables; counts only, never values', async () => {
    const res = await post<Bootstrap>('/api/v1/workers/extflow/credentials/bootstrap-from-env', { bundlePath: 'credentials.json' });
    expect(res.status).toBe(200);
    expect(res.body.bootstrap).toMatchObject({ aliases: 1, created: 0, skipped: 1 });
    expect(res.body.bootstrap.credentials).toEqual([{ reference: 'Contacts API key', outcome: 'not_allowed', credentialId: null }]);
    expect(res.text).not.toContain(SECRET);
    expect(res.body.doctor.workspaceId).toBe(stack.ws.workspaceId);
  });

  test('an alias matching an allowed variable is created once, then exists', async () => {
    const ws = await createWorkspace(stack.app, 'Bootstrap');
    // The alias of this export maps to EXTFLOW_TEST_CONTACTS_API_KEY.
    const exported = fixture('14-http-post-json-auth');
    exported.nodes[2].credentials.httpHeaderAuth.name = 'Extflow test contacts api key';
    await post<Imported>('/api/v1/workers/extflow/import-bundle', { importBundleJson: JSON.stringify([exported]) }, ws.token);
    const first = await post<Bootstrap>('/api/v1/workers/legacyalias/credentials/bootstrap-from-env', {}, ws.token);
    expect(first.status).toBe(200);
    expect(first.body.bootstrap).toMatchObject({ created: 1, skipped: 0 });
    expect(first.text).not.toContain(SECRET);
    const list = await http<CredentialList>(stack.app, 'GET', '/api/v1/credentials', { token: ws.token });
    expect(list.body.credentials.map((c) => [c.name, c.type])).toEqual([['Extflow test contacts api key', 'http_header']]);
    const second = await post<Bootstrap>('/api/v1/workers/extflow/credentials/bootstrap-from-env', {}, ws.token);
    expect(second.body.bootstrap).toMatchObject({ created: 0, skipped: 1, credentials: [{ outcome: 'exists' }] });
    // Another workspace's bootstrap creates nothing of this one's.
    const foreign = await post<Bootstrap>('/api/v1/workers/extflow/credentials/bootstrap-from-env', {}, other.token);
    expect(foreign.body.bootstrap).toMatchObject({ created: 0 });
    expect((await http<CredentialList>(stack.app, 'GET', '/api/v1/credentials', { token: other.token })).body.credentials).toEqual([]);
    expect(
      (await post<Bootstrap>('/api/v1/workers/extflow/credentials/bootstrap-from-env', { bundlePath: 'dir-out/secret.json' }, ws.token))
        .status,
    ).toBe(400);
  });
});

describe('POST /api/v1/workers/extflow/subflows/import-originals (and its legacyalias)', () => {
  test('imports the sub-workflow a parent calls and links the parent, which becomes deployable', async () => {
    const ws = await createWorkspace(stack.app, 'Originals');
    const parent = await post<Imported>(
      '/api/v1/workers/extflow/import-bundle',
      { importBundleJson: JSON.stringify([fixture('33-subworkflow-missing')]) },
      ws.token,
    );
    const parentId = parent.body.importResult.workflows[0].workflow.id;
    expect(parent.body.importResult.workflows[0].importReadiness.deploymentReadiness.ready).toBe(false);
    expect((await http(stack.app, 'POST', `/api/v1/workflows/${parentId}/deploy`, { token: ws.token })).status).toBe(400);

    const child = { ...fixture('01-manual-set'), id: 'enrichWf33', name: 'Enrich' };
    // Another workspace cannot link this workspace's parent: nothing there calls the child.
    const foreign = await post<Originals>(
      '/api/v1/workers/extflow/subflows/import-originals',
      { importJson: JSON.stringify(child) },
      other.token,
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe(
      'None of these workflows is called by a sub-workflow node of an imported workflow; import them with import-bundle instead.',
    );

    const res = await post<Originals>(
      '/api/v1/workers/legacyalias/subflows/import-originals',
      { importBundleJson: JSON.stringify([child, fixture('04-schedule-interval')]) },
      ws.token,
    );
    expect(res.status).toBe(201);
    expect(res.body.importResult.workflows.map((w) => w.externalId)).toEqual(['extflow-enrichWf33']);
    const childId = res.body.importResult.workflows[0].workflow.id;
    expect(res.body.importResult.relinked).toEqual([
      { workflowId: parentId, nodeId: 'call_enrich', reference: 'extflow-enrichWf33', subworkflowId: childId },
    ]);
    expect(res.body.doctor.workspaceId).toBe(ws.workspaceId);

    // Deploy the child, then the parent, and run the parent through Temporal.
    expect((await http(stack.app, 'POST', `/api/v1/workflows/${childId}/deploy`, { token: ws.token })).status).toBe(200);
    expect((await http(stack.app, 'POST', `/api/v1/workflows/${parentId}/deploy`, { token: ws.token })).status).toBe(200);
    const smoke = await post<Smoke>('/api/v1/workers/extflow/smoke-test', { useQueue: true, waitForWorkerMs: 30_000 }, ws.token);
    expect(smoke.status).toBe(200);
    expect((await post<Originals>('/api/v1/workers/extflow/subflows/import-originals', { importJson: '{' }, ws.token)).body.error).toBe(
      'importJson is not valid JSON.',
    );
    expect((await post<Originals>('/api/v1/workers/extflow/subflows/import-originals', {}, ws.token)).status).toBe(400);
  });
});

describe('the workflows routes use the same converter', () => {
  test('import-preview converts without writing; POST /workflows with importBundleJson imports the external bundle', async () => {
    const before = await workflowCount(stack.ws);
    const preview = await post<ImportPreview>('/api/v1/workflows/import-preview', {
      importJson: JSON.stringify(fixture('13-http-get-query')),
    });
    expect(preview.status).toBe(200);
    expect(preview.body.persisted).toBe(false);
    expect(preview.body.importReadiness.conversion).toMatchObject({ source: 'extflow', ready: true });
    expect(preview.body.preview.nodes.map((n) => n.type)).toContain('http');
    const bundlePreview = await post<BundlePreview>('/api/v1/workflows/import-preview', {
      importBundleJson: JSON.stringify([fixture('30-unsupported-python-and-expressions')]),
    });
    expect(bundlePreview.status).toBe(200);
    // Python and $env in code stay unsupported; the `.map(i => i.id)` expression now runs as JavaScript.
    expect(bundlePreview.body.workflows[0].importReadiness.conversion?.unsupported).toHaveLength(2);
    expect(await workflowCount(stack.ws)).toBe(before);

    const created = await post<CreatedBundle>('/api/v1/workflows', {
      importBundleJson: JSON.stringify({ name: 'Mixed', workflows: [fixture('12-code-each-item')] }),
    });
    expect(created.status).toBe(201);
    expect(created.body.bundle).toMatchObject({ name: 'Mixed', created: 1 });
    expect(created.body.workflows[0].importReadiness.conversion?.ready).toBe(true);
    const replaced = await http<CreatedWorkflow>(stack.app, 'PATCH', `/api/v1/workflows/${created.body.workflows[0].workflow.id}`, {
      token: stack.ws.token,
      body: { importJson: JSON.stringify(fixture('31-unsupported-merge-by-key')) },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.workflow.status).toBe('draft');
    expect(replaced.body.importReadiness?.conversion?.ready).toBe(false);
  });
});

describe('session twins', () => {
  test('/api/workers/extflow/smoke-test and the legacyalias twin answer a signed-in member; without a session 401', async () => {
    const cookie = await signInCookie(stack.app, stack.ws.ownerEmail, stack.ws.ownerPassword, stack.ws.workspaceId);
    const imported = await http(stack.app, 'POST', '/api/workers/extflow/import-bundle', { cookie, body: { bundlePath: 'bundle.json' } });
    expect(imported.status).toBe(201);
    const res = await http<Smoke>(stack.app, 'POST', '/api/workers/extflow/smoke-test', { cookie, body: { bundlePath: 'bundle.json' } });
    expect(res.status).toBe(200);
    expect(res.body.importedWorkflowSmokeTest.counts.passed).toBe(2);
    const alias = await http<Smoke>(stack.app, 'POST', '/api/workers/legacyalias/smoke-test', {
      cookie,
      body: { bundlePath: 'bundle.json' },
    });
    expect(alias.status).toBe(200);
    expect((await http<Smoke>(stack.app, 'POST', '/api/workers/extflow/smoke-test', { body: {} })).status).toBe(401);
  });
});

describe('without an import directory', () => {
  test('bundlePath is refused; importBundleJson still works', async () => {
    const app = await startTestApp();
    try {
      const ws = await createWorkspace(app, 'No import dir');
      const res = await http<Imported>(app, 'POST', '/api/v1/workers/extflow/import-bundle', {
        token: ws.token,
        body: { bundlePath: 'bundle.json' },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('Reading bundles from a path is not configured on this server; send importBundleJson instead.');
      const ok = await http<Imported>(app, 'POST', '/api/v1/workers/extflow/import-bundle', {
        token: ws.token,
        body: { importBundleJson: JSON.stringify(fixture('01-manual-set')) },
      });
      expect(ok.status).toBe(201);
    } finally {
      await app.close();
    }
  });
});
