/**
 * The external tool's item nodes as an input path (issue 29): exports imported by workspace A
 * that split into a million items, nest deeply, or carry text PostgreSQL cannot store (U+0000,
 * lone surrogates) in their items and field names. Contract: the import answers 201 or a 4xx,
 * each run ends (failed with a clear limit message, or succeeded with well-formed stored text),
 * nothing is left running, and B's probe run completes meanwhile and after.
 */
import { abuseStackPerFile, expectFailedOrSucceeded, expectWellFormed, type AbuseWorkspace } from './kit';

const kit = abuseStackPerFile();

interface ExportNode {
  name: string;
  type: string;
  typeVersion?: number;
  parameters?: Record<string, unknown>;
}

/** An export whose nodes follow a manual trigger in a chain. */
function chainExport(id: string, nodes: ExportNode[]): string {
  const all = [{ name: 'Start', type: 'manualTrigger', parameters: {} }, ...nodes];
  const connections: Record<string, unknown> = {};
  for (let i = 0; i + 1 < all.length; i++) connections[all[i]!.name] = { main: [[{ node: all[i + 1]!.name, type: 'main', index: 0 }]] };
  return JSON.stringify({
    id,
    name: id,
    nodes: all.map((n, i) => ({ typeVersion: 1, parameters: {}, ...n, type: `n8n-nodes-base.${n.type}`, position: [i * 200, 0] })),
    connections,
  });
}

/** Imports, deploys and runs an export in `ws`; the run, or the 4xx that refused it. */
async function importAndRun(ws: AbuseWorkspace, json: string, input: unknown): Promise<{ run?: any; refused?: number }> {
  const created = await kit.request(ws, 'POST', '/api/v1/workflows', { importJson: json });
  if (created.status >= 400 && created.status < 500) return { refused: created.status };
  expect(created.status).toBe(201);
  const id = created.body.workflow.id as string;
  await kit.deploy(ws, id);
  const exec = await kit.request(ws, 'POST', `/api/v1/workflows/${id}/execute`, { input });
  if (exec.status >= 400 && exec.status < 500) return { refused: exec.status };
  expect(exec.status).toBe(202);
  return { run: await kit.waitForRun(ws, exec.body.run.id) };
}

const LIMIT = /output|limit|too large|memory|exceeded/i;

test('a million-item Code output fails on a limit; B completes', async () => {
  await kit.survives(async () => {
    const code = await importAndRun(
      kit.a,
      chainExport('abuse-million-code', [
        {
          name: 'Million',
          type: 'code',
          typeVersion: 2,
          parameters: { jsCode: 'return Array.from({ length: 1000000 }, (_, i) => ({ json: { i } }));' },
        },
        { name: 'Limit', type: 'limit', parameters: { maxItems: 1 } },
      ]),
      {},
    );
    expectFailedOrSucceeded(code.run, LIMIT);
    await kit.assertNoQueuedRuns(kit.a);
  });
});

test('a million-item split of a split fails on a limit or counts right; B completes', async () => {
  await kit.survives(async () => {
    const thousand = Array.from({ length: 1000 }, (_, i) => i);
    const split = await importAndRun(
      kit.a,
      chainExport('abuse-million-split', [
        { name: 'Split xs', type: 'splitOut', parameters: { fieldToSplitOut: 'xs', include: 'allOtherFields' } },
        { name: 'Split ys', type: 'splitOut', parameters: { fieldToSplitOut: 'ys', include: 'allOtherFields' } },
        { name: 'Count', type: 'summarize', parameters: { fieldsToSummarize: { values: [{ aggregation: 'count', field: 'xs' }] } } },
      ]),
      { xs: thousand, ys: thousand },
    );
    expectFailedOrSucceeded(split.run, LIMIT, (r) => JSON.stringify(r.output).includes('"count_xs":1000000'));
    await kit.assertNoQueuedRuns(kit.a);
  });
});

test('deep nesting: in the export, in a renamed key and in a split path; the import answers, the runs end', async () => {
  await kit.survives(async () => {
    // Written as text: building it with JSON.stringify would overflow this test's own stack.
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const deepExport =
      '{"id":"abuse-deep-export","name":"deep","nodes":[' +
      '{"name":"Start","type":"n8n-nodes-base.manualTrigger","typeVersion":1,"parameters":{}},' +
      `{"name":"Rename","type":"n8n-nodes-base.renameKeys","typeVersion":1,"parameters":{"keys":{"key":[]},"extra":${deep}}}],` +
      '"connections":{"Start":{"main":[[{"node":"Rename","type":"main","index":0}]]}}}';
    const imported = await kit.request(kit.a, 'POST', '/api/v1/workflows', { importJson: deepExport });
    expect(imported.status).toBeLessThan(500);

    const path = Array.from({ length: 20000 }, () => 'a').join('.');
    const renamed = await importAndRun(
      kit.a,
      chainExport('abuse-deep-rename', [
        { name: 'Rename', type: 'renameKeys', parameters: { keys: { key: [{ currentKey: 'x', newKey: path }] } } },
        { name: 'Split', type: 'splitOut', parameters: { fieldToSplitOut: path } },
      ]),
      { x: [1, 2] },
    );
    if (renamed.run) expectFailedOrSucceeded(renamed.run, /deep|nest|depth|limit|stack|exceeded|JSON|output/i, () => true);
    await kit.assertNoQueuedRuns(kit.a);
  });
});

test('unstorable text in items and field names is stored well-formed; B completes', async () => {
  await kit.survives(async () => {
    const bad = ['nul\u0000byte', 'lone\ud800surrogate', '\udfffback'];
    const result = await importAndRun(
      kit.a,
      chainExport('abuse-text', [
        { name: 'Split', type: 'splitOut', parameters: { fieldToSplitOut: 'xs' } },
        { name: 'Rename', type: 'renameKeys', parameters: { keys: { key: [{ currentKey: 'xs', newKey: 'k\u0000\ud800' }] } } },
        { name: 'Sort', type: 'sort', parameters: { sortFieldsUi: { sortField: [{ fieldName: 'k\u0000\ud800' }] } } },
        {
          name: 'Sum',
          type: 'summarize',
          parameters: {
            fieldsToSummarize: { values: [{ aggregation: 'concatenate', field: 'k\u0000\ud800', separateBy: '\u0000' }] },
            fieldsToSplitBy: '',
          },
        },
      ]),
      { xs: bad },
    );
    expect(result.refused ?? result.run?.status).toBeDefined();
    if (result.run) {
      expect(['succeeded', 'failed']).toContain(result.run.status);
      expectWellFormed(result.run);
    }
    await kit.assertNoQueuedRuns(kit.a);
  });
});
