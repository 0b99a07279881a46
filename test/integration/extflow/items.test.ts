/**
 * The external tool's item model (issue 29, point 1): item nodes — Split Out, Sort, Limit, Rename
 * Keys, Aggregate, Summarize, Remove Duplicates, Item Lists v1–v3 — and the node settings always
 * output data, execute once, continue on fail / onError. Each export is imported over HTTP and
 * run live through Temporal; the expected items (json and pairedItem) are written by hand from
 * the tool's documented semantics, and read from each node's step in the run.
 */
import type { z } from 'zod';
import type { createdWorkflowSchema } from '../../../api/schemas/workflows';
import { createWorkspace, http, useTestStack, waitRun, type QueuedReceipt, type Run, type WorkspaceFixture } from '../../kit';

type CreatedWorkflow = z.infer<typeof createdWorkflowSchema>;

interface ExportNode {
  name: string;
  type: string;
  typeVersion?: number;
  parameters?: Record<string, unknown>;
  [setting: string]: unknown;
}

/** A small export: the nodes in a chain after a manual trigger, unless `connections` is given. */
function exportOf(id: string, nodes: ExportNode[], connections?: Record<string, unknown>) {
  const all = [{ name: 'Manual Trigger', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} }, ...nodes];
  const chain: Record<string, unknown> = {};
  for (let i = 0; i + 1 < all.length; i++) chain[all[i]!.name] = { main: [[{ node: all[i + 1]!.name, type: 'main', index: 0 }]] };
  return JSON.stringify({
    id,
    name: id,
    nodes: all.map((n, i) => ({
      typeVersion: 1,
      parameters: {},
      ...n,
      type: n.type.includes('.') ? n.type : `n8n-nodes-base.${n.type}`,
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      position: [i * 200, 0],
    })),
    connections: connections ?? chain,
    settings: { executionOrder: 'v1' },
  });
}

/** A Set v3.4 node with one assignment (its other settings in `extra`). */
const setNode = (name: string, field: string, value: unknown, type: string, extra: Record<string, unknown> = {}): ExportNode => ({
  name,
  type: 'set',
  typeVersion: 3.4,
  ...extra,
  parameters: { assignments: { assignments: [{ id: 'a', name: field, value, type }] }, options: {}, ...(extra.parameters ?? {}) },
});
const splitOut = (field: string): ExportNode => ({ name: 'Split Out', type: 'splitOut', parameters: { fieldToSplitOut: field } });

const stack = useTestStack();
let ws: WorkspaceFixture;
beforeAll(async () => {
  ws = await createWorkspace(stack.app, 'Items');
});

async function importExport(json: string): Promise<CreatedWorkflow> {
  const res = await http<CreatedWorkflow>(stack.app, 'POST', '/api/v1/workflows', { token: ws.token, body: { importJson: json } });
  expect(res.status).toBe(201);
  return res.body;
}

async function run(created: CreatedWorkflow, input: unknown): Promise<Run> {
  const res = await http<QueuedReceipt>(stack.app, 'POST', `/api/v1/workflows/${created.workflow.id}/execute`, {
    token: ws.token,
    body: { target: 'candidate', dryRun: false, confirm: true, expectedVersionId: created.workflow.candidateVersionId, input },
  });
  expect(res.status).toBe(202);
  return waitRun({ app: stack.app, ws }, res.body.run.id, {
    until: (r) => ['succeeded', 'failed', 'canceled'].includes(r.status),
    timeoutMs: 60_000,
  });
}

/** The node's last step that ran (a node after a loop is recorded `skipped` in each iteration before it runs), else its first. */
const stepOf = (r: Run, nodeId: string) =>
  r.steps.filter((s) => s.nodeId === nodeId && s.status !== 'skipped').at(-1) ?? r.steps.find((s) => s.nodeId === nodeId);
const outputOf = (r: Run, nodeId: string) => stepOf(r, nodeId)?.output;

describe('item nodes', () => {
  test('Split Out → Sort → Limit → Rename Keys → Aggregate → Set: the items of each node', async () => {
    const created = await importExport(
      exportOf('items-chain', [
        { name: 'Split Out', type: 'splitOut', parameters: { fieldToSplitOut: 'lines', include: 'allOtherFields', options: {} } },
        {
          name: 'Sort',
          type: 'sort',
          parameters: { sortFieldsUi: { sortField: [{ fieldName: 'lines.sku' }] }, options: {} },
        },
        { name: 'Limit', type: 'limit', parameters: { maxItems: 2 } },
        {
          name: 'Rename Keys',
          type: 'renameKeys',
          parameters: { keys: { key: [{ currentKey: 'lines.qty', newKey: 'qty' }] } },
        },
        {
          name: 'Aggregate',
          type: 'aggregate',
          parameters: { fieldsToAggregate: { fieldToAggregate: [{ fieldToAggregate: 'qty' }] }, options: {} },
        },
        setNode('Count', 'lines', '={{ $json.qty.length }}', 'number', { parameters: { includeOtherFields: true } }),
      ]),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const r = await run(created, {
      order: 7,
      lines: [
        { sku: 'b', qty: 2 },
        { sku: 'A', qty: 1 },
        { sku: 'c', qty: 5 },
      ],
    });
    expect({ status: r.status, error: r.error ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(outputOf(r, 'split_out')).toEqual([
      { json: { order: 7, lines: { sku: 'b', qty: 2 } }, pairedItem: { item: 0 } },
      { json: { order: 7, lines: { sku: 'A', qty: 1 } }, pairedItem: { item: 0 } },
      { json: { order: 7, lines: { sku: 'c', qty: 5 } }, pairedItem: { item: 0 } },
    ]);
    // Case-insensitive ascending sort; each item stays paired with its position in Split Out's output.
    expect(outputOf(r, 'sort')).toEqual([
      { json: { order: 7, lines: { sku: 'A', qty: 1 } }, pairedItem: { item: 1 } },
      { json: { order: 7, lines: { sku: 'b', qty: 2 } }, pairedItem: { item: 0 } },
      { json: { order: 7, lines: { sku: 'c', qty: 5 } }, pairedItem: { item: 2 } },
    ]);
    expect(outputOf(r, 'limit')).toEqual([
      { json: { order: 7, lines: { sku: 'A', qty: 1 } }, pairedItem: { item: 0 } },
      { json: { order: 7, lines: { sku: 'b', qty: 2 } }, pairedItem: { item: 1 } },
    ]);
    expect(outputOf(r, 'rename_keys')).toEqual([
      { json: { order: 7, lines: { sku: 'A' }, qty: 1 }, pairedItem: { item: 0 } },
      { json: { order: 7, lines: { sku: 'b' }, qty: 2 }, pairedItem: { item: 1 } },
    ]);
    expect(outputOf(r, 'aggregate')).toEqual([{ json: { qty: [1, 2] }, pairedItem: [{ item: 0 }, { item: 1 }] }]);
    // One item reaches the Set node: it gets that item's JSON, exactly as before.
    expect(r.output).toEqual({ qty: [1, 2], lines: 2 });
  });

  test('Summarize split by a field, then Remove Duplicates', async () => {
    const created = await importExport(
      exportOf('items-summarize', [
        splitOut('rows'),
        {
          name: 'Remove Duplicates',
          type: 'removeDuplicates',
          typeVersion: 1.1,
          parameters: { compare: 'allFields', options: {} },
        },
        {
          name: 'Summarize',
          type: 'summarize',
          typeVersion: 1.1,
          parameters: {
            fieldsToSummarize: {
              values: [
                { aggregation: 'sum', field: 'amount' },
                { aggregation: 'countUnique', field: 'who' },
              ],
            },
            fieldsToSplitBy: 'team',
            options: {},
          },
        },
      ]),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, readinessIssues: [] });
    const r = await run(created, {
      rows: [
        { team: 'red', who: 'ann', amount: 3 },
        { team: 'blue', who: 'bob', amount: 4 },
        { team: 'red', who: 'ann', amount: 3 },
        { team: 'red', who: 'cy', amount: 10 },
      ],
    });
    expect(r.status).toBe('succeeded');
    expect(outputOf(r, 'remove_duplicates')).toEqual([
      { json: { team: 'red', who: 'ann', amount: 3 }, pairedItem: { item: 0 } },
      { json: { team: 'blue', who: 'bob', amount: 4 }, pairedItem: { item: 1 } },
      { json: { team: 'red', who: 'cy', amount: 10 }, pairedItem: { item: 3 } },
    ]);
    expect(r.output).toEqual([
      { json: { team: 'red', sum_amount: 13, unique_count_who: 2 }, pairedItem: [{ item: 0 }, { item: 2 }] },
      { json: { team: 'blue', sum_amount: 4, unique_count_who: 1 }, pairedItem: [{ item: 1 }] },
    ]);
  });

  test('Item Lists v1, v2 and v3 operations', async () => {
    const created = await importExport(
      exportOf('items-item-lists', [
        {
          name: 'Split v1',
          type: 'itemLists',
          typeVersion: 1,
          parameters: { fieldToSplitOut: 'rows', include: 'selectedOtherFields', fieldsToInclude: { fields: [{ fieldName: 'batch' }] } },
        },
        {
          name: 'Sort v2',
          type: 'itemLists',
          typeVersion: 2,
          parameters: { operation: 'sort', sortFieldsUi: { sortField: [{ fieldName: 'rows.n', order: 'descending' }] } },
        },
        { name: 'Limit v3', type: 'itemLists', typeVersion: 3, parameters: { operation: 'limit', maxItems: 2, keep: 'lastItems' } },
        {
          name: 'Concatenate v3',
          type: 'itemLists',
          typeVersion: 3.1,
          parameters: { operation: 'concatenateItems', aggregate: 'aggregateAllItemData', destinationFieldName: 'picked' },
        },
      ]),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, readinessIssues: [] });
    const r = await run(created, { batch: 'b1', rows: [{ n: 2 }, { n: 9 }, { n: 5 }] });
    expect(r.status).toBe('succeeded');
    // With "selected other fields", each element stays under the split field's name.
    const row = (n: number) => ({ rows: { n }, batch: 'b1' });
    expect(outputOf(r, 'split_v1')).toEqual([
      { json: row(2), pairedItem: { item: 0 } },
      { json: row(9), pairedItem: { item: 0 } },
      { json: row(5), pairedItem: { item: 0 } },
    ]);
    expect(outputOf(r, 'sort_v2')).toEqual([
      { json: row(9), pairedItem: { item: 1 } },
      { json: row(5), pairedItem: { item: 2 } },
      { json: row(2), pairedItem: { item: 0 } },
    ]);
    expect(outputOf(r, 'limit_v3')).toEqual([
      { json: row(5), pairedItem: { item: 1 } },
      { json: row(2), pairedItem: { item: 2 } },
    ]);
    expect(r.output).toEqual([{ json: { picked: [row(5), row(2)] }, pairedItem: [{ item: 0 }, { item: 1 }] }]);
  });
});

describe('node settings', () => {
  test('always output data: an empty split still passes one empty item on', async () => {
    const created = await importExport(
      exportOf('items-always', [
        { name: 'Split Out', type: 'splitOut', parameters: { fieldToSplitOut: 'missing' }, alwaysOutputData: true },
        { name: 'After', type: 'noOp' },
      ]),
    );
    const r = await run(created, { other: 1 });
    expect(r.status).toBe('succeeded');
    expect(outputOf(r, 'after')).toEqual([{ json: {}, pairedItem: [{ item: 0, input: 0 }] }]);
  });

  test('without it, no items means the nodes after it do not run', async () => {
    const created = await importExport(exportOf('items-empty', [splitOut('missing'), setNode('Mark', 'ran', true, 'boolean')]));
    const r = await run(created, { other: 1 });
    expect(r.status).toBe('succeeded');
    expect(outputOf(r, 'split_out')).toEqual([]);
    expect(stepOf(r, 'mark')?.status).toBe('skipped');
  });

  test('execute once: the node after a split takes the first item', async () => {
    const created = await importExport(
      exportOf('items-once', [splitOut('xs'), setNode('First', 'first', '={{ $json.xs }}', 'number', { executeOnce: true })]),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, readinessIssues: [] });
    const r = await run(created, { xs: [4, 5, 6] });
    expect({ status: r.status, output: r.output }).toEqual({ status: 'succeeded', output: { first: 4 } });
  });

  test('a Set whose expression needs JavaScript runs once per item, in a loop, each item paired with its own', async () => {
    const created = await importExport(
      exportOf('items-js-set', [splitOut('xs'), setNode('Each', 'x', '={{ Number($json.xs.toFixed(0)) }}', 'number')]),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const two = await run(created, { xs: [4.2, 5.7] });
    expect({ status: two.status, error: two.error ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(outputOf(two, 'each')).toEqual([
      { json: { x: 4 }, pairedItem: { item: 0 } },
      { json: { x: 6 }, pairedItem: { item: 1 } },
    ]);
  });

  test('several items into a node that takes one (Wait): not ready, and the run fails saying so', async () => {
    const wait = { name: 'Pause', type: 'wait', typeVersion: 1.1, parameters: { resume: 'timeInterval', amount: 1, unit: 'seconds' } };
    const created = await importExport(exportOf('items-several', [splitOut('xs'), wait]));
    expect(created.importReadiness?.conversion?.ready).toBe(false);
    expect(created.importReadiness?.conversion?.readinessIssues).toEqual([
      { node: 'Pause', kind: 'lossyConversion', message: expect.stringContaining('"Split Out" may pass several items on') },
    ]);
    const one = await run(created, { xs: [4] });
    expect({ status: one.status, error: one.error ?? null }).toEqual({ status: 'succeeded', error: null });
    const two = await run(created, { xs: [4, 5] });
    expect(two.status).toBe('failed');
    expect(JSON.stringify(two.error)).toContain('\\"Split Out\\" passed 2 items to \\"Pause\\"');
  });

  test('continue on fail and onError: the error item on the regular or the error output', async () => {
    const summarizeNothing = { fieldsToSummarize: { values: [{ aggregation: 'count', field: '' }] } };
    const message = "You need to add at least one aggregation to 'Fields to Summarize' with non empty 'Field'";
    const regular = await importExport(
      exportOf('items-continue', [{ name: 'Summarize', type: 'summarize', continueOnFail: true, parameters: summarizeNothing }]),
    );
    const r1 = await run(regular, { a: 1 });
    expect({ status: r1.status, output: r1.output }).toEqual({
      status: 'succeeded',
      output: [{ json: { error: message }, pairedItem: { item: 0 } }],
    });

    const branched = await importExport(
      exportOf(
        'items-error-output',
        [
          {
            name: 'Sort',
            type: 'sort',
            onError: 'continueErrorOutput',
            parameters: { sortFieldsUi: { sortField: [{ fieldName: 'nope' }] } },
          },
          { name: 'Sorted', type: 'noOp' },
          { name: 'Failed', type: 'noOp' },
        ],
        {
          'Manual Trigger': { main: [[{ node: 'Sort', type: 'main', index: 0 }]] },
          Sort: {
            main: [[{ node: 'Sorted', type: 'main', index: 0 }], [{ node: 'Failed', type: 'main', index: 0 }]],
          },
        },
      ),
    );
    expect(branched.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [] });
    const r2 = await run(branched, { a: 1 });
    expect(r2.status).toBe('succeeded');
    expect(stepOf(r2, 'sorted')?.status).toBe('skipped');
    expect(outputOf(r2, 'failed')).toEqual([{ json: { error: "Couldn't find the field 'nope' in the input data" } }]);

    const stopped = await importExport(
      exportOf('items-stop', [{ name: 'Summarize', type: 'summarize', onError: 'stopWorkflow', parameters: summarizeNothing }]),
    );
    const r3 = await run(stopped, { a: 1 });
    expect(r3.status).toBe('failed');
    expect(JSON.stringify(r3.error)).toContain('Fields to Summarize');
  });
});

describe('Code output stays a list of items', () => {
  test('all-items code returning several items passes them on as items, and each-item code runs per item', async () => {
    const created = await importExport(
      exportOf('items-code', [
        {
          name: 'Lines',
          type: 'code',
          typeVersion: 2,
          parameters: { jsCode: 'return $json.text.split(",").map((line) => ({ json: { line } }));' },
        },
        {
          name: 'Upper',
          type: 'code',
          typeVersion: 2,
          parameters: { mode: 'runOnceForEachItem', jsCode: 'return { json: { line: $json.line.toUpperCase(), at: $itemIndex } };' },
        },
      ]),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, readinessIssues: [] });
    const r = await run(created, { text: 'a,b' });
    expect(r.status).toBe('succeeded');
    // Before: one array value [{ line: 'a' }, { line: 'b' }], and each-item code ran once on it.
    expect(outputOf(r, 'lines')).toEqual([
      { json: { line: 'a' }, pairedItem: { item: 0 } },
      { json: { line: 'b' }, pairedItem: { item: 0 } },
    ]);
    expect(r.output).toEqual([
      { json: { line: 'A', at: 0 }, pairedItem: { item: 0 } },
      { json: { line: 'B', at: 1 }, pairedItem: { item: 1 } },
    ]);
  });

  test('code reads other nodes\' items: $(\'X\').all(), .first(), .item by position, $node["X"].json and $items("X")', async () => {
    const created = await importExport(
      exportOf('items-code-nodes', [
        splitOut('xs'),
        {
          name: 'Double',
          type: 'code',
          typeVersion: 2,
          parameters: { mode: 'runOnceForEachItem', jsCode: 'return { json: { d: $json.xs * 2 } };' },
        },
        {
          name: 'Pair',
          type: 'code',
          typeVersion: 2,
          parameters: {
            mode: 'runOnceForEachItem',
            // A comment naming $('Nowhere') names nothing.
            jsCode:
              "// $('Nowhere')\nreturn { json: { x: $('Split Out').item.json.xs, d: $json.d, tag: $node[\"Manual Trigger\"].json.tag } };",
          },
        },
        {
          name: 'Sum',
          type: 'code',
          typeVersion: 2,
          parameters: {
            jsCode:
              "const xs = $('Split Out').all().map((i) => i.json.xs);\nreturn [{ json: { xs, first: $('Pair').first().json, n: $items('Double').length, ran: $('Double').isExecuted } }];",
          },
        },
      ]),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const r = await run(created, { tag: 't', xs: [1, 2, 3] });
    expect({ status: r.status, error: r.error ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(outputOf(r, 'pair')).toEqual([
      { json: { x: 1, d: 2, tag: 't' }, pairedItem: { item: 0 } },
      { json: { x: 2, d: 4, tag: 't' }, pairedItem: { item: 1 } },
      { json: { x: 3, d: 6, tag: 't' }, pairedItem: { item: 2 } },
    ]);
    // One item out of three in carries no pairing (itemRuntime.ts: paired only when one came in or as many go out).
    expect(r.output).toEqual([{ json: { xs: [1, 2, 3], first: { x: 1, d: 2, tag: 't' }, n: 3, ran: true } }]);
  });

  test("code may use the expression runtime's Luxon subset ($now, DateTime) and $jmespath", async () => {
    const created = await importExport(
      exportOf('items-code-luxon', [
        {
          name: 'Dates',
          type: 'code',
          typeVersion: 2,
          parameters: {
            jsCode:
              "const next = DateTime.fromISO($json.day).plus({ days: 1 }).toFormat('yyyy-MM-dd');\nreturn [{ json: { next, nowIsDate: typeof $now.toISO() === 'string', bs: $jmespath($json, 'a[*].b') } }];",
          },
        },
      ]),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const r = await run(created, { day: '2024-01-15T10:00:00.000Z', a: [{ b: 1 }, { b: 2 }] });
    expect({ status: r.status, error: r.error ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(r.output).toEqual([{ json: { next: '2024-01-16', nowIsDate: true, bs: [1, 2] }, pairedItem: { item: 0 } }]);
  });

  test('code naming a node that is not in the workflow is unsupported, naming it', async () => {
    const created = await importExport(
      exportOf('items-code-missing', [{ name: 'Read', type: 'code', typeVersion: 2, parameters: { jsCode: "return $('Nope').all();" } }]),
    );
    expect(created.importReadiness?.conversion?.unsupported).toEqual([
      expect.objectContaining({ node: 'Read', reason: 'the code reads node "Nope", which is not in the workflow' }),
    ]);
  });
});

/** A Code node returning the given JSONs as items. */
const codeItems = (name: string, jsons: unknown[]): ExportNode => ({
  name,
  type: 'code',
  typeVersion: 2,
  parameters: { jsCode: `return ${JSON.stringify(jsons)}.map((json) => ({ json }));` },
});
const to = (...targets: string[]) => ({ main: targets.map((t) => (t ? [{ node: t, type: 'main', index: 0 }] : [])) });

describe('Set, If, Filter and Switch run per item (issue 29)', () => {
  test('If v2 routes each item; Set v3.4 and Set v1 run on every item of their branch', async () => {
    const created = await importExport(
      exportOf(
        'per-item-if',
        [
          splitOut('xs'),
          {
            name: 'If',
            type: 'if',
            typeVersion: 2,
            parameters: {
              conditions: {
                options: { caseSensitive: true, typeValidation: 'strict' },
                conditions: [{ leftValue: '={{ $json.n }}', rightValue: 1, operator: { type: 'number', operation: 'gt' } }],
                combinator: 'and',
              },
              options: {},
            },
          },
          setNode('Big', 'size', 'big', 'string', { parameters: { includeOtherFields: true } }),
          {
            name: 'Small',
            type: 'set',
            typeVersion: 1,
            parameters: {
              keepOnlySet: true,
              values: { string: [{ name: 'label', value: '={{ $json.name }}!' }], number: [{ name: 'n', value: '={{ $json.n * 10 }}' }] },
            },
          },
        ],
        {
          'Manual Trigger': to('Split Out'),
          'Split Out': to('If'),
          If: to('Big', 'Small'),
        },
      ),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const r = await run(created, {
      xs: [
        { n: 1, name: 'a' },
        { n: 2, name: 'b' },
        { n: 0, name: 'c' },
        { n: 3, name: 'd' },
      ],
    });
    expect({ status: r.status, error: r.error ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(outputOf(r, 'if__out0')).toEqual([
      { json: { n: 2, name: 'b' }, pairedItem: { item: 1 } },
      { json: { n: 3, name: 'd' }, pairedItem: { item: 3 } },
    ]);
    expect(outputOf(r, 'if__out1')).toEqual([
      { json: { n: 1, name: 'a' }, pairedItem: { item: 0 } },
      { json: { n: 0, name: 'c' }, pairedItem: { item: 2 } },
    ]);
    expect(outputOf(r, 'big')).toEqual([
      { json: { n: 2, name: 'b', size: 'big' }, pairedItem: { item: 0 } },
      { json: { n: 3, name: 'd', size: 'big' }, pairedItem: { item: 1 } },
    ]);
    expect(outputOf(r, 'small')).toEqual([
      { json: { n: 10, label: 'a!' }, pairedItem: { item: 0 } },
      { json: { n: 0, label: 'c!' }, pairedItem: { item: 1 } },
    ]);

    // A branch that receives no item does not run.
    const none = await run(created, { xs: [{ n: 5, name: 'e' }] });
    expect(none.status).toBe('succeeded');
    expect(outputOf(none, 'big')).toEqual([{ json: { n: 5, name: 'e', size: 'big' }, pairedItem: { item: 0 } }]);
    expect(stepOf(none, 'small')?.status).toBe('skipped');
  });

  test('Switch v3 sends each item to every matching output (or the fallback); Filter keeps and discards per item', async () => {
    const rule = (op: string, right: number, key: string) => ({
      outputKey: key,
      renameOutput: true,
      conditions: {
        options: { caseSensitive: true, typeValidation: 'strict' },
        conditions: [{ leftValue: '={{ $json.n }}', rightValue: right, operator: { type: 'number', operation: op } }],
        combinator: 'and',
      },
    });
    const created = await importExport(
      exportOf(
        'per-item-switch',
        [
          splitOut('xs'),
          {
            name: 'Switch',
            type: 'switch',
            typeVersion: 3,
            parameters: {
              rules: { values: [rule('gt', 4, 'big'), rule('lt', 3, 'small'), rule('equals', 2, 'two')] },
              options: { allMatchingOutputs: true, fallbackOutput: 'extra' },
            },
          },
          { name: 'Big', type: 'noOp' },
          { name: 'Small', type: 'noOp' },
          { name: 'Two', type: 'noOp' },
          { name: 'Other', type: 'noOp' },
          {
            name: 'Filter',
            type: 'filter',
            typeVersion: 2,
            parameters: {
              conditions: {
                options: { caseSensitive: true, typeValidation: 'strict' },
                conditions: [{ leftValue: '={{ $json.n }}', rightValue: 2, operator: { type: 'number', operation: 'equals' } }],
                combinator: 'and',
              },
              options: { allowDiscardedOutput: true },
            },
          },
          { name: 'Kept', type: 'noOp' },
          { name: 'Discarded', type: 'noOp' },
        ],
        {
          'Manual Trigger': to('Split Out'),
          'Split Out': to('Switch'),
          Switch: to('Big', 'Small', 'Two', 'Other'),
          Small: to('Filter'),
          Filter: to('Kept', 'Discarded'),
        },
      ),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [], readinessIssues: [] });
    const r = await run(created, { xs: [{ n: 1 }, { n: 2 }, { n: 5 }, { n: 3 }] });
    expect({ status: r.status, error: r.error ?? null }).toEqual({ status: 'succeeded', error: null });
    const jsons = (id: string) => (outputOf(r, id) as Array<{ json: unknown }> | undefined)?.map((i) => i.json);
    expect(jsons('big')).toEqual([{ n: 5 }]);
    expect(jsons('small')).toEqual([{ n: 1 }, { n: 2 }]);
    expect(jsons('two')).toEqual([{ n: 2 }]);
    expect(jsons('other')).toEqual([{ n: 3 }]);
    expect(jsons('kept')).toEqual([{ n: 2 }]);
    expect(jsons('discarded')).toEqual([{ n: 1 }]);
  });
});

describe('Merge over item lists (issue 29)', () => {
  test('combine by fields, by position, all combinations, append and v1 merge by key, each with several items per input', async () => {
    const people = [
      { id: 1, name: 'Ann' },
      { id: 2, name: 'Bob' },
      { id: 3, name: 'Cy' },
    ];
    const orders = [
      { id: 2, total: 10 },
      { id: 1, total: 5 },
      { id: 2, total: 7 },
    ];
    const merges: ExportNode[] = [
      {
        name: 'Join',
        type: 'merge',
        typeVersion: 3,
        parameters: { mode: 'combine', fieldsToMatchString: 'id', joinMode: 'enrichInput1', options: {} },
      },
      { name: 'Zip', type: 'merge', typeVersion: 2.1, parameters: { mode: 'combine', combinationMode: 'mergeByPosition', options: {} } },
      { name: 'Cross', type: 'merge', typeVersion: 3, parameters: { mode: 'combine', combineBy: 'combineAll', options: {} } },
      { name: 'Both', type: 'merge', typeVersion: 3, parameters: {} },
      { name: 'ByKey', type: 'merge', typeVersion: 1, parameters: { mode: 'mergeByKey', propertyName1: 'id', propertyName2: 'id' } },
    ];
    const conns: Record<string, unknown> = {
      'Manual Trigger': {
        main: [
          [
            { node: 'People', index: 0 },
            { node: 'Orders', index: 0 },
          ],
        ],
      },
    };
    conns.People = { main: [merges.map((m) => ({ node: m.name, type: 'main', index: 0 }))] };
    conns.Orders = { main: [merges.map((m) => ({ node: m.name, type: 'main', index: 1 }))] };
    const created = await importExport(
      exportOf('merge-items', [codeItems('People', people), codeItems('Orders', orders), ...merges], conns),
    );
    expect(created.importReadiness?.conversion).toMatchObject({ ready: true, unsupported: [] });
    const r = await run(created, {});
    expect({ status: r.status, error: r.error ?? null }).toEqual({ status: 'succeeded', error: null });
    expect(outputOf(r, 'join')).toEqual([
      { json: { id: 1, name: 'Ann', total: 5 }, pairedItem: [{ item: 0 }, { item: 1, input: 1 }] },
      { json: { id: 2, name: 'Bob', total: 10 }, pairedItem: [{ item: 1 }, { item: 0, input: 1 }] },
      { json: { id: 2, name: 'Bob', total: 7 }, pairedItem: [{ item: 1 }, { item: 2, input: 1 }] },
      { json: { id: 3, name: 'Cy' }, pairedItem: { item: 2 } },
    ]);
    const jsons = (id: string) => (outputOf(r, id) as Array<{ json: unknown }>).map((i) => i.json);
    expect(jsons('zip')).toEqual([
      { id: 2, name: 'Ann', total: 10 },
      { id: 1, name: 'Bob', total: 5 },
      { id: 2, name: 'Cy', total: 7 },
    ]);
    expect(jsons('cross')).toHaveLength(9);
    expect(jsons('cross')[1]).toEqual({ id: 1, name: 'Ann', total: 5 });
    expect(jsons('both')).toEqual([...people, ...orders]);
    expect(jsons('bykey')).toEqual([
      { id: 1, name: 'Ann', total: 5 },
      { id: 2, name: 'Bob', total: 10 },
      { id: 3, name: 'Cy' },
    ]);
  });
});
