/**
 * Imported expressions evaluated as JavaScript (services/extflow/jsExpressions.ts) are a new
 * input path into the code sandbox: an export of the external tool whose Set node holds the
 * attack, imported over HTTP, deployed and run live (and dry) by A while B's probe keeps
 * running. Each attack ends as a failed node with a clear message, never a hang or a 5xx.
 */
import {
  abuseStackPerFile,
  expect4xx,
  expectDryRunEnded,
  expectFailedNode,
  expectFailedOrSucceeded,
  expectWellFormed,
  type WorkflowBody,
} from './kit';

const kit = abuseStackPerFile();

/** A manual trigger, then a Set node whose one field is `expression`. */
function exportWith(expression: string): WorkflowBody {
  const workflow = {
    name: 'Imported attack',
    nodes: [
      { parameters: {}, name: 'Manual Trigger', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0] },
      {
        parameters: {
          assignments: { assignments: [{ id: 'a', name: 'value', value: `={{ ${expression} }}`, type: 'string' }] },
          options: {},
        },
        name: 'Attack',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [200, 0],
      },
    ],
    connections: { 'Manual Trigger': { main: [[{ node: 'Attack', type: 'main', index: 0 }]] } },
  };
  return { importJson: JSON.stringify(workflow) } as unknown as WorkflowBody;
}

test('an expression that loops forever fails at the time limit, live and dry', async () => {
  await kit.survives(async () => {
    const body = exportWith('(() => { while (true) {} })()');
    expectFailedNode(await kit.runLive(kit.a, body), /time limit/i, 'attack__js');
    expectDryRunEnded(await kit.dryRun(kit.a, body), /time limit/i);
  });
});

test('an expression that allocates hugely fails at the memory limit', async () => {
  await kit.survives(async () => {
    const run = await kit.runLive(kit.a, exportWith('Array.from({ length: 1e8 }, (_, i) => ({ i, s: "x".repeat(100) }))'));
    expectFailedNode(run, /memory limit|time limit/i, 'attack__js');
  });
});

test('an expression whose result is huge fails at the output limit', async () => {
  await kit.survives(async () => {
    const run = await kit.runLive(kit.a, exportWith('"x".repeat(5e6)'));
    expectFailedNode(run, /larger than the limit|memory limit/i, 'attack__js');
  });
});

test('an expression that tries to reach the host finds only the sandbox', async () => {
  await kit.survives(async () => {
    const escape = await kit.runLive(kit.a, exportWith('this.constructor.constructor("return process")().env'));
    expectFailedNode(escape, /'?process'? is not defined/, 'attack__js');
    const required = await kit.runLive(kit.a, exportWith('require("fs").readFileSync("/etc/passwd", "utf8")'));
    expectFailedNode(required, /'?require'? is not defined/, 'attack__js');
    const env = await kit.runLive(kit.a, exportWith('$env.PATH'));
    expectFailedNode(env, /\$env is refused/, 'attack__js');
    expect(JSON.stringify(env)).not.toContain('/usr/bin');
  });
});

test('deeply nested and unstorable text end cleanly', async () => {
  await kit.survives(async () => {
    // Deeper than the JSONata translator parses: evaluated as JavaScript in the sandbox.
    const nested = await kit.runLive(kit.a, exportWith(`${'['.repeat(150)}1${']'.repeat(150)}`));
    expectFailedOrSucceeded(nested, /stack overflow|too deep|nested|memory/i, (r) => r.status === 'succeeded');
    // Deeper than anything parses here: the import lists the node (a 4xx at deploy), never a 5xx.
    const deeper = await kit.tryRunLive(kit.a, exportWith(`${'['.repeat(20_000)}${']'.repeat(20_000)}`));
    if ('refused' in deeper) expect4xx(deeper.refused, /not ready|unsupported|extflow|placeholder|nested/i);
    else expectFailedOrSucceeded(deeper.run, /stack overflow|too deep|nested|memory/i);
    const text = await kit.runLive(kit.a, exportWith('"a\\u0000b" + "\\ud800" + $json.missing'));
    expectFailedOrSucceeded(text, /./, (r) => r.status === 'succeeded');
    expectWellFormed(text);
  });
});
