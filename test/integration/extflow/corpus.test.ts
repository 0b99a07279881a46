/**
 * The import corpus: every export under test/fixtures/extflow/ is imported over HTTP (one
 * workflow through POST /workflows, bundles through the extflow import-bundle route) and
 * compared with its expected graph or readiness report; every workflow that is ready is then
 * run live through Temporal (a live candidate run on a real worker) and its output compared.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { http, startTestStack, waitForRun, type TestStack } from '../../support/harness';
import { startExtflowService } from '../../fakes/extflowService';

const DIR = join(__dirname, '../../fixtures/extflow');
const FAKE = 'http://fake.extflow.test';

interface Expected {
  ready?: boolean;
  bundle?: boolean;
  workflows?: Record<string, Expected>;
  nodeTypes?: Record<string, string>;
  config?: Record<string, Record<string, unknown>>;
  edges?: Array<[string, string, string | null | undefined]>;
  unsupported?: Array<{ node: string; nodeType: string; reasonIncludes: string }>;
  credentials?: Array<Record<string, unknown>>;
  subworkflows?: Array<{ node: string; reference: string }>;
  blockerIncludes?: string;
  pinnedData?: Array<{ node: string; nodeId: string; items: number }>;
  run?: {
    workflow?: string;
    deployFirst?: string[];
    input: unknown;
    startNodeId?: string;
    status: string;
    output?: unknown;
    outputIncludes?: Record<string, unknown>;
    errorIncludes?: string;
    resume?: unknown;
    credential?: { name: string; type: string; value: unknown };
  };
}

const fixtures = readdirSync(DIR)
  .filter((f) => f.endsWith('.json') && !f.endsWith('.expected.json'))
  .sort();

let stack: TestStack;
let fake: { url: string; close(): Promise<void> };

beforeAll(async () => {
  fake = await startExtflowService();
  stack = await startTestStack();
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

function checkGraph(
  name: string,
  workflow: {
    nodes: Array<{ id: string; type: string; name?: string; config: Record<string, unknown> }>;
    edges: Array<{ source: string; target: string; sourceHandle?: string }>;
  },
  readiness: any,
  expected: Expected,
) {
  const conversion = readiness.conversion;
  expect(conversion).toBeDefined();
  if (expected.ready !== undefined) {
    expect({
      name,
      ready: conversion.ready,
      deployable: readiness.deploymentReadiness.ready,
      unsupported: conversion.unsupported,
      blockers: readiness.deploymentReadiness.blockers,
    }).toMatchObject({ name, ready: expected.ready, deployable: expected.ready });
  }
  const byId = new Map(workflow.nodes.map((n) => [n.id, n]));
  for (const [id, type] of Object.entries(expected.nodeTypes ?? {}))
    expect({ name, id, type: byId.get(id)?.type }).toEqual({ name, id, type });
  for (const [id, config] of Object.entries(expected.config ?? {}))
    expect({ name, id, config: byId.get(id)?.config }).toMatchObject({ name, id, config });
  for (const [source, target, handle] of expected.edges ?? []) {
    const found = workflow.edges.some((e) => e.source === source && e.target === target && (e.sourceHandle ?? null) === (handle ?? null));
    expect({ name, edge: [source, target, handle ?? null], found }).toEqual({ name, edge: [source, target, handle ?? null], found: true });
  }
  for (const u of expected.unsupported ?? []) {
    const hit = conversion.unsupported.find(
      (x: any) => x.node === u.node && x.nodeType === u.nodeType && x.reason.includes(u.reasonIncludes) && x.action.length > 0,
    );
    expect({ name, expected: u, hit: !!hit, got: conversion.unsupported }).toMatchObject({ name, expected: u, hit: true });
    // Never dropped: the node stays in the graph as a placeholder.
    expect(workflow.nodes.some((n) => n.name === u.node) || u.nodeType === '(connections)').toBe(true);
  }
  if (expected.unsupported && expected.ready === false) expect(conversion.unsupported.length).toBe(expected.unsupported.length);
  for (const c of expected.credentials ?? []) expect(conversion.credentials).toEqual(expect.arrayContaining([expect.objectContaining(c)]));
  if (expected.subworkflows) expect(conversion.subworkflows).toEqual(expected.subworkflows);
  if (expected.pinnedData) expect(conversion.pinnedData).toEqual(expected.pinnedData);
  if (expected.blockerIncludes) expect(readiness.deploymentReadiness.blockers.join('\n')).toContain(expected.blockerIncludes);
}

async function runAndCheck(name: string, workflowId: string, candidateVersionId: string, run: NonNullable<Expected['run']>) {
  const { app, ws } = stack;
  if (run.credential) {
    // Bound to the fake service the fixtures' URLs were rewritten to (credentials go nowhere else).
    const created = await http(app, 'POST', '/api/v1/credentials', {
      token: ws.token,
      body: { allowedHosts: [new URL(fake.url).host], ...run.credential },
    });
    expect([200, 201, 409]).toContain(created.status);
  }
  const res = await http(app, 'POST', `/api/v1/workflows/${workflowId}/execute`, {
    token: ws.token,
    body: {
      target: 'candidate',
      dryRun: false,
      confirm: true,
      expectedVersionId: candidateVersionId,
      input: run.input,
      ...(run.startNodeId ? { startNodeId: run.startNodeId } : {}),
    },
  });
  expect({ name, status: res.status, body: res.status === 202 ? null : res.body }).toEqual({ name, status: 202, body: null });
  const runId = res.body.run.id;
  const settled =
    run.status === 'waiting' || run.resume !== undefined
      ? ['succeeded', 'failed', 'canceled', 'waiting']
      : ['succeeded', 'failed', 'canceled'];
  let done = await waitForRun(app, ws.token, runId, (r) => settled.includes(r.status), 60_000);
  if (run.resume !== undefined) {
    expect(done.status).toBe('waiting');
    const full = await http(app, 'GET', `/api/v1/runs/${runId}`, { token: ws.token });
    const wait = (full.body.run.waits ?? []).find((w: any) => w.resumeUrl);
    expect(wait).toBeDefined();
    const resumed = await fetch(wait.resumeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(run.resume),
    });
    expect(resumed.status).toBeLessThan(300);
    done = await waitForRun(app, ws.token, runId, (r) => ['succeeded', 'failed', 'canceled'].includes(r.status), 60_000);
    expect({ name, status: done.status, error: done.error }).toMatchObject({ name, status: 'succeeded' });
  } else {
    // On a mismatch the diff shows the run's error too.
    expect({ name, status: done.status, error: done.error ?? null }).toEqual({
      name,
      status: run.status,
      error: run.status === 'failed' ? expect.anything() : null,
    });
  }
  if (run.output !== undefined) expect({ name, output: done.output }).toEqual({ name, output: run.output });
  if (run.outputIncludes) expect({ name, output: done.output }).toMatchObject({ name, output: run.outputIncludes });
  if (run.errorIncludes) expect(JSON.stringify(done.error)).toContain(run.errorIncludes);
}

test('the corpus holds at least 25 exports, each with its expected result', () => {
  expect(fixtures.length).toBeGreaterThanOrEqual(25);
  for (const f of fixtures) expect(readdirSync(DIR)).toContain(f.replace(/\.json$/, '.expected.json'));
});

describe.each(fixtures)('%s', (file) => {
  test('imports as expected, and runs when ready', async () => {
    const { app, ws } = stack;
    const text = readFileSync(join(DIR, file), 'utf8').split(FAKE).join(fake.url);
    const expected = JSON.parse(
      readFileSync(join(DIR, file.replace(/\.json$/, '.expected.json')), 'utf8')
        .split(FAKE)
        .join(fake.url),
    ) as Expected;
    if (expected.bundle) {
      const res = await http(app, 'POST', '/api/v1/workers/extflow/import-bundle', { token: ws.token, body: { importBundleJson: text } });
      expect({ file, status: res.status }).toEqual({ file, status: 201 });
      const byExternal = new Map<string, any>(res.body.importResult.workflows.map((w: any) => [w.externalId, w]));
      for (const [externalId, exp] of Object.entries(expected.workflows ?? {})) {
        const entry = byExternal.get(externalId);
        expect({ externalId, present: !!entry }).toEqual({ externalId, present: true });
        checkGraph(`${file}:${externalId}`, entry.workflow, entry.importReadiness, exp);
      }
      if (expected.run) {
        for (const dep of expected.run.deployFirst ?? []) {
          const deployed = await http(app, 'POST', `/api/v1/workflows/${byExternal.get(dep).workflow.id}/deploy`, { token: ws.token });
          expect({ dep, status: deployed.status }).toEqual({ dep, status: 200 });
        }
        const main = byExternal.get(expected.run.workflow!);
        const current = await http(app, 'GET', `/api/v1/workflows/${main.workflow.id}`, { token: ws.token });
        await runAndCheck(file, main.workflow.id, current.body.workflow.candidateVersionId, expected.run);
      }
      return;
    }
    const res = await http(app, 'POST', '/api/v1/workflows', { token: ws.token, body: { importJson: text } });
    expect({ file, status: res.status, error: res.status === 201 ? null : res.body }).toEqual({ file, status: 201, error: null });
    expect(res.body.workflow.status).toBe('draft');
    checkGraph(file, res.body.workflow, res.body.importReadiness, expected);
    if (expected.ready === false) {
      // Not ready: deploy refuses, the workflow stays a draft.
      const deploy = await http(app, 'POST', `/api/v1/workflows/${res.body.workflow.id}/deploy`, { token: ws.token });
      expect(deploy.status).toBe(400);
      const after = await http(app, 'GET', `/api/v1/workflows/${res.body.workflow.id}`, { token: ws.token });
      expect(after.body.workflow.status).toBe('draft');
    }
    if (expected.run) await runAndCheck(file, res.body.workflow.id, res.body.workflow.candidateVersionId, expected.run);
  }, 90_000);
});
