/**
 * Conversions that were silently wrong, and readiness that overstated (issue 29): Set v3+ typed
 * fields given by expressions, the legacy `item` of each-item Code, a manual workflow run
 * without input, multi-item Code output, a webhook's dropped response option and a missing
 * credential. Each export is imported over HTTP; the runnable ones run live through Temporal.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { createdWorkflowSchema, importPreviewSchema } from '../../../api/schemas/workflows';
import { createWorkspace, http, useTestStack, waitRun, type QueuedReceipt, type Run, type WorkspaceFixture } from '../../kit';

const DIR = join(__dirname, '../../fixtures/extflow');
const exported = (name: string) => readFileSync(join(DIR, `${name}.json`), 'utf8');

type CreatedWorkflow = z.infer<typeof createdWorkflowSchema>;
type ImportPreview = z.infer<typeof importPreviewSchema>;

const stack = useTestStack();
let ws: WorkspaceFixture;
beforeAll(async () => {
  ws = await createWorkspace(stack.app, 'Conversions');
});

async function importOne(name: string, on = ws) {
  const res = await http<CreatedWorkflow>(stack.app, 'POST', '/api/v1/workflows', {
    token: on.token,
    body: { importJson: exported(name) },
  });
  expect(res.status).toBe(201);
  return res.body;
}

/** Runs the draft live through Temporal; `input` omitted means the run is started without one. */
async function runDraft(created: CreatedWorkflow, input?: unknown): Promise<Run> {
  const body: Record<string, unknown> = {
    target: 'candidate',
    dryRun: false,
    confirm: true,
    expectedVersionId: created.workflow.candidateVersionId,
  };
  if (input !== undefined) body.input = input;
  const res = await http<QueuedReceipt>(stack.app, 'POST', `/api/v1/workflows/${created.workflow.id}/execute`, { token: ws.token, body });
  expect(res.status).toBe(202);
  return waitRun({ app: stack.app, ws }, res.body.run.id, {
    until: (r) => ['succeeded', 'failed', 'canceled'].includes(r.status),
    timeoutMs: 60_000,
  });
}

describe('Set v3+ typed fields given by expressions become their type, as in the external tool', () => {
  test('object, number, boolean and array from text; the typed number takes the If branch it should', async () => {
    const created = await importOne('conversions/set-typed-fields');
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, readinessIssues: [] });
    // Run without input: the manual trigger's empty item reaches the Set node that keeps other fields.
    const run = await runDraft(created);
    expect({ status: run.status, error: run.error ?? null }).toEqual({ status: 'succeeded', error: null });
    // Before: order stayed a JSON string, quantity "12" failed the number comparison, and the run never reached Customer.
    expect(run.output).toEqual({
      order: { customer: { id: 7 }, tags: ['a'] },
      quantity: 12,
      enabled: true,
      ids: [1, 2, 3],
      meta: { kept: 12 },
      customer: 7,
    });
  });

  test("a value that is not of its type fails the node with the external tool's message", async () => {
    const created = await importOne('conversions/set-typed-error');
    const run = await runDraft(created, { count: 'abc' });
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run.error)).toContain("'quantity' expects a number but we got 'abc'");
    const ok = await runDraft(created, { count: '3', other: 'kept' });
    expect(ok.output).toEqual({ count: '3', other: 'kept', quantity: 3 });
  });
});

describe('Code nodes', () => {
  test('in each-item mode the legacy `item` is the item ({ json }), as $input.item is', async () => {
    const created = await importOne('conversions/code-each-item');
    const run = await runDraft(created, { v: 21 });
    // Before: `item` held the JSON, so item.json.v threw.
    expect({ status: run.status, output: run.output }).toEqual({
      status: 'succeeded',
      output: [{ json: { hasJson: true, doubled: 42, same: true }, pairedItem: { item: 0 } }],
    });
  });

  test('code that returns several items passes them on as a list of items (issue 29: before, one array value)', async () => {
    const created = await importOne('conversions/code-multi-item');
    // Nothing after it takes one item: the list is exact, so the import is ready.
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const run = await runDraft(created, { lines: ['a', 'b'] });
    expect({ status: run.status, output: run.output }).toEqual({
      status: 'succeeded',
      output: [
        { json: { line: 'a' }, pairedItem: { item: 0 } },
        { json: { line: 'b' }, pairedItem: { item: 0 } },
      ],
    });
  });
});

describe('readiness names what the import does not carry over', () => {
  test("a webhook's custom response data is an unsupported option", async () => {
    const created = await importOne('conversions/webhook-response-data');
    expect(created.importReadiness?.conversion?.ready).toBe(false);
    expect(created.importReadiness?.conversion?.readinessIssues).toEqual([
      {
        node: 'Webhook',
        kind: 'unsupportedOption',
        message:
          'the webhook option "responseData" ("Thanks, we got it!") is dropped: the caller gets 202 accepted with the run id, not this response.',
      },
    ]);
  });

  test('a credential the workspace lacks makes the import not ready until it exists', async () => {
    const own = await createWorkspace(stack.app, 'Missing credential');
    const created = await importOne('14-http-post-json-auth', own);
    const conversion = created.importReadiness?.conversion;
    expect(conversion?.ready).toBe(false);
    expect(conversion?.readinessIssues).toEqual([
      {
        node: 'Create contact',
        kind: 'missingCredential',
        message: expect.stringContaining('credential "Contacts API key" does not exist in this workspace'),
      },
    ]);
    expect(created.importReadiness?.deploymentReadiness.ready).toBe(false);

    const credential = await http(stack.app, 'POST', '/api/v1/credentials', {
      token: own.token,
      body: {
        name: 'contacts api key',
        type: 'http_header',
        value: { headerName: 'X-Api-Key', headerValue: 'k' },
        allowedHosts: ['example.test'],
      },
    });
    expect(credential.status).toBe(201);
    const preview = await http<ImportPreview>(stack.app, 'POST', '/api/v1/workflows/import-preview', {
      token: own.token,
      body: { importJson: exported('14-http-post-json-auth') },
    });
    expect(preview.body.importReadiness.conversion).toMatchObject({ ready: true, readinessIssues: [] });
  });
});

describe('expressions only JavaScript can evaluate run in the code sandbox', () => {
  test("$('Node').first(), .isEmpty(), .extractDomain(), $now.toFormat() and raw JSON with holes give the external tool's output", async () => {
    const created = await importOne('conversions/js-expressions');
    const conversion = created.importReadiness?.conversion;
    expect(conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [], mappedNodes: 6 });
    // The cost is named on each node that has JavaScript expressions: one code step per run of the node.
    expect(conversion?.warnings).toContainEqual({
      node: 'Tagged',
      message: expect.stringMatching(/^4 expressions run as JavaScript .* one code step/),
    });
    const run = await runDraft(created, {
      email: 'ada@example.org',
      note: '',
      tags: ['vip', 'vip', 'eu'],
      amounts: [10.25, 20.5],
      ordered: '2024-03-05',
      plan: '',
    });
    expect({ status: run.status, error: run.error ?? null }).toEqual({ status: 'succeeded', error: null });
    // $now is the run's clock, read in the sandbox; the year is the only part of the output that depends on it.
    const year = new Date().getUTCFullYear();
    expect(run.output).toEqual({ summary: 'ADA@EXAMPLE.ORG owes 30.8 by 2024-04-04', year: expect.any(Number) });
    expect([year - 1, year]).toContain((run.output as { year: number }).year);
    const byId = new Map(run.steps.map((s) => [s.nodeId, s]));
    expect(byId.get('lookup')?.output).toMatchObject({ domain: 'example.org', noNote: true, email: 'ada@example.org' });
    expect(byId.get('tagged')?.output).toEqual({
      total: 30.75,
      firstDomain: 'example.org',
      who: 'ADA@EXAMPLE.ORG',
      tags: 'vip, eu',
      due: '2024-04-04',
      plan: 'free',
    });
    expect(byId.get('untagged')?.status).toBe('skipped');
  });

  test('$env is refused: named at import, and the run fails saying so', async () => {
    const created = await importOne('conversions/js-env');
    const conversion = created.importReadiness?.conversion;
    expect(conversion?.ready).toBe(false);
    expect(conversion?.readinessIssues).toEqual([
      {
        node: 'Read token',
        kind: 'unsupportedOption',
        message: expect.stringContaining('$env is refused: expressions cannot read environment variables here'),
      },
    ]);
    const run = await runDraft(created, {});
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run.error)).toContain('$env is refused');
    expect(JSON.stringify(run.output ?? null)).not.toContain('PATH');
  });
});

describe('Loop Over Items / Split In Batches loop back through the engine (issue 29 point 4)', () => {
  // Five items in, as the external tool's manual trigger would pass pinned or posted items.
  const items = [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }];

  test('v3 runs its body once per item and "done" carries what came back, in order', async () => {
    const created = await importOne('conversions/loop-over-items');
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    expect(created.workflow.edges).toEqual(
      expect.arrayContaining([expect.objectContaining({ source: 'double', target: 'loop_over_items', loop: true, maxIterations: 10_000 })]),
    );
    const run = await runDraft(created, items);
    // The external tool: Loop Over Items (batch size 1) passes each item to Double, which adds
    // `doubled`; once the items run out, "done" emits the five returned items in order.
    expect({ status: run.status, error: run.error ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(run.output).toEqual([
      { n: 1, doubled: 2 },
      { n: 2, doubled: 4 },
      { n: 3, doubled: 6 },
      { n: 4, doubled: 8 },
      { n: 5, doubled: 10 },
    ]);
    // One iteration per item, and a last one where the items ran out: Double is skipped there.
    expect(run.steps.filter((s) => s.nodeId === 'double').map((s) => [s.iteration, s.status])).toEqual([
      [0, 'succeeded'],
      [1, 'succeeded'],
      [2, 'succeeded'],
      [3, 'succeeded'],
      [4, 'succeeded'],
      [5, 'skipped'],
    ]);
  });

  test('v2 passes batches of its batch size, the last one shorter, and stops when the items run out', async () => {
    const created = await importOne('conversions/split-in-batches-v2');
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const run = await runDraft(created, items);
    expect(run.status).toBe('succeeded');
    // Batches of two items (a list), then the last item alone, as the external tool passes them.
    const ran = run.steps.filter((s) => s.nodeId === 'per_batch' && s.status === 'succeeded');
    expect(ran.map((s) => s.output)).toEqual([[{ n: 1 }, { n: 2 }], [{ n: 3 }, { n: 4 }], { n: 5 }]);
  });
});
