/**
 * The import corpus: every export under test/fixtures/extflow/ is imported over HTTP (one
 * workflow through POST /workflows, bundles through the extflow import-bundle route) and
 * compared with its expected graph or readiness report; every workflow that is ready is then
 * run live through Temporal (a live candidate run on a real worker) and its output compared.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { extflowImportResultSchema } from '../../../api/schemas/extflow';
import type { validationResultSchema } from '../../../api/schemas/workflows';
import { useTestStack, waitRun, type Workflow } from '../../kit';
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
  /** What keeps it from being ready besides unsupported nodes (default none): such a workflow still deploys. */
  readinessIssues?: Array<{ node: string; kind: string }>;
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

type ImportReadiness = z.infer<typeof validationResultSchema>;
type ImportedBundle = z.infer<typeof extflowImportResultSchema>;

let fake: { url: string; close(): Promise<void> };

beforeAll(async () => {
  fake = await startExtflowService();
});
const stack = useTestStack();
afterAll(async () => {
  await fake?.close();
});

function checkGraph(name: string, workflow: Workflow, readiness: ImportReadiness | undefined, expected: Expected) {
  const conversion = readiness?.conversion;
  expect(conversion).toBeDefined();
  if (!readiness || !conversion) return; // the expectation above failed the test
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
      (x) => x.node === u.node && x.nodeType === u.nodeType && x.reason.includes(u.reasonIncludes) && x.action.length > 0,
    );
    expect({ name, expected: u, hit: !!hit, got: conversion.unsupported }).toMatchObject({ name, expected: u, hit: true });
    // Never dropped: the node stays in the graph as a placeholder.
    expect(workflow.nodes.some((n) => n.name === u.node) || u.nodeType === '(connections)').toBe(true);
  }
  if (expected.unsupported && expected.ready === false) expect(conversion.unsupported.length).toBe(expected.unsupported.length);
  expect({ name, readinessIssues: conversion.readinessIssues.map((i) => ({ node: i.node, kind: i.kind })) }).toEqual({
    name,
    readinessIssues: expected.readinessIssues ?? [],
  });
  for (const c of expected.credentials ?? []) expect(conversion.credentials).toEqual(expect.arrayContaining([expect.objectContaining(c)]));
  if (expected.subworkflows) expect(conversion.subworkflows).toEqual(expected.subworkflows);
  if (expected.pinnedData) expect(conversion.pinnedData).toEqual(expected.pinnedData);
  if (expected.blockerIncludes) expect(readiness.deploymentReadiness.blockers.join('\n')).toContain(expected.blockerIncludes);
}

/** Creates the credential a fixture's run needs, before its import (a missing credential makes an import not ready). */
async function createCredential(run: Expected['run']) {
  if (!run?.credential) return;
  // Bound to the fake service the fixtures' URLs were rewritten to (credentials go nowhere else).
  const created = await stack.api.post('/api/v1/credentials', { allowedHosts: [new URL(fake.url).host], ...run.credential });
  expect([200, 201, 409]).toContain(created.status);
}

async function runAndCheck(name: string, workflowId: string, candidateVersionId: string, run: NonNullable<Expected['run']>) {
  const res = await stack.api.workflows.execute(workflowId, run.input, {
    target: 'candidate',
    dryRun: false,
    confirm: true,
    expectedVersionId: candidateVersionId,
    ...(run.startNodeId ? { startNodeId: run.startNodeId } : {}),
  });
  expect({ name, status: res.status, body: res.status === 202 ? null : res.body }).toEqual({ name, status: 202, body: null });
  const runId = res.body.run.id;
  const settled =
    run.status === 'waiting' || run.resume !== undefined
      ? ['succeeded', 'failed', 'canceled', 'waiting']
      : ['succeeded', 'failed', 'canceled'];
  let done = await waitRun(stack, runId, { until: (r) => settled.includes(r.status), timeoutMs: 60_000 });
  if (run.resume !== undefined) {
    expect(done.status).toBe('waiting');
    const full = await stack.api.runs.get(runId);
    const wait = (full.body.run.waits ?? []).find((w) => w.resumeUrl);
    expect(wait).toBeDefined();
    if (!wait?.resumeUrl) return; // the expectation above failed the test
    const resumed = await fetch(wait.resumeUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(run.resume),
    });
    expect(resumed.status).toBeLessThan(300);
    done = await waitRun(stack, runId, { until: (r) => ['succeeded', 'failed', 'canceled'].includes(r.status), timeoutMs: 60_000 });
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
    const text = readFileSync(join(DIR, file), 'utf8').split(FAKE).join(fake.url);
    const expected = JSON.parse(
      readFileSync(join(DIR, file.replace(/\.json$/, '.expected.json')), 'utf8')
        .split(FAKE)
        .join(fake.url),
    ) as Expected;
    await createCredential(expected.run);
    if (expected.bundle) {
      const res = await stack.api.post<ImportedBundle>('/api/v1/workers/extflow/import-bundle', { importBundleJson: text });
      expect({ file, status: res.status }).toEqual({ file, status: 201 });
      const byExternal = new Map(res.body.importResult.workflows.map((w) => [w.externalId, w]));
      /** The imported workflow of `externalId`; fails the test when the bundle did not import it. */
      const imported = (externalId: string) => {
        const entry = byExternal.get(externalId);
        expect({ externalId, present: !!entry }).toEqual({ externalId, present: true });
        if (!entry) throw new Error(`${externalId} not imported`); // the expectation above failed the test
        return entry;
      };
      for (const [externalId, exp] of Object.entries(expected.workflows ?? {})) {
        const entry = imported(externalId);
        checkGraph(`${file}:${externalId}`, entry.workflow, entry.importReadiness, exp);
      }
      if (expected.run) {
        for (const dep of expected.run.deployFirst ?? []) {
          const deployed = await stack.api.workflows.deploy(imported(dep).workflow.id);
          expect({ dep, status: deployed.status }).toEqual({ dep, status: 200 });
        }
        const main = imported(expected.run.workflow ?? '');
        const current = await stack.api.workflows.get(main.workflow.id);
        await runAndCheck(file, main.workflow.id, current.body.workflow.candidateVersionId, expected.run);
      }
      return;
    }
    const res = await stack.api.workflows.create({ importJson: text });
    expect({ file, status: res.status, error: res.status === 201 ? null : res.body }).toEqual({ file, status: 201, error: null });
    expect(res.body.workflow.status).toBe('draft');
    checkGraph(file, res.body.workflow, res.body.importReadiness, expected);
    if (expected.ready === false && !expected.readinessIssues) {
      // Not ready for want of a node or a sub-workflow: deploy refuses, the workflow stays a draft.
      const deploy = await stack.api.workflows.deploy(res.body.workflow.id);
      expect(deploy.status).toBe(400);
      const after = await stack.api.workflows.get(res.body.workflow.id);
      expect(after.body.workflow.status).toBe('draft');
    }
    if (expected.run) await runAndCheck(file, res.body.workflow.id, res.body.workflow.candidateVersionId, expected.run);
  }, 90_000);
});
