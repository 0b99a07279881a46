/**
 * Where item lists meet nodes that take one item's JSON (services/extflow/itemWiring.ts): the
 * adapters the converter puts between them, evaluated by the engine's expression evaluator (both
 * its synchronous path and JSONata), and references to an item node's output in expressions.
 */
import { evaluateExpression } from '../../../../engine/expressions';
import { convertExtflowWorkflow } from '../../../../services/extflow/convert';
import { errorItemNode, mayReturnSeveral, oneItemAdapter } from '../../../../services/extflow/itemWiring';

const bindings = { trigger: null, nodes: {} };
const [anyNode, oneNode] = oneItemAdapter({ any: 'a', one: 'o' }, { source: 'Split', target: 'Set' }, false, undefined);
const [, firstNode] = oneItemAdapter({ any: 'a', one: 'f' }, { source: 'Split', target: 'Set' }, true, undefined);
const expr = (node: { config: Record<string, unknown> } | undefined) => String(node?.config.expression);

describe.each([true, false])('adapters (sync path %s)', (sync) => {
  const evaluate = (e: string, input: unknown) => evaluateExpression(e, input, bindings, { sync });

  test('no items lets nothing through; one item or one JSON value does', async () => {
    expect(await evaluate(expr(anyNode), [])).toBe(false);
    expect(await evaluate(expr(anyNode), [{ json: { a: 1 } }])).toBe(true);
    expect(await evaluate(expr(anyNode), { a: 1 })).toBe(true);
  });

  test("the only item's JSON, the first one's with execute once, a failure naming both nodes otherwise", async () => {
    expect(await evaluate(expr(oneNode), [{ json: { a: [1] }, pairedItem: { item: 0 } }])).toEqual({ a: [1] });
    expect(await evaluate(expr(oneNode), { a: 1 })).toEqual({ a: 1 });
    const two = [{ json: { a: 1 } }, { json: { a: 2 } }];
    await expect(evaluate(expr(oneNode), two)).rejects.toThrow('"Split" passed 2 items to "Set"');
    expect(await evaluate(expr(firstNode), two)).toEqual({ a: 1 });
  });

  test("the error output becomes the tool's error item", async () => {
    expect(await evaluate(expr(errorItemNode('e', 'Sort', undefined)), { error: { message: 'boom', nodeId: 'sort' } })).toEqual([
      { json: { error: 'boom' } },
    ]);
    // An item node's own failure: the message alone, without what the sandbox adds around it.
    const marked = { error: { message: 'Error: [[item-error]]No field (x)[[/item-error]] (line 5)', nodeId: 'sort' } };
    expect(await evaluate(expr(errorItemNode('e', 'Sort', undefined)), marked)).toEqual([{ json: { error: 'No field (x)' } }]);
  });
});

test('several items: from nodes that return any number, and through nodes that return as many as they get', () => {
  const counts = new Map<string, 'one' | 'same' | 'many' | undefined>([
    ['Trigger', undefined],
    ['Split', 'many'],
    ['Sort', 'same'],
    ['Agg', 'one'],
    ['Sort2', 'same'],
  ]);
  const sources: Record<string, string[]> = { Split: ['Trigger'], Sort: ['Split'], Agg: ['Sort'], Sort2: ['Agg'] };
  expect([...mayReturnSeveral(counts, (n) => sources[n] ?? [])].sort()).toEqual(['Sort', 'Split']);
});

test('the converter puts adapters between an item node and a Set, and rewrites references to its items', () => {
  const converted = convertExtflowWorkflow({
    id: 'wiring',
    name: 'Wiring',
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
      { name: 'Split Out', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters: { fieldToSplitOut: 'xs' } },
      { name: 'Sort', type: 'n8n-nodes-base.sort', typeVersion: 1, parameters: { sortFieldsUi: { sortField: [{ fieldName: 'xs' }] } } },
      {
        name: 'Set',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        parameters: {
          assignments: { assignments: [{ id: '1', name: 'v', value: "={{ $('Split Out').item.json.xs }}", type: 'string' }] },
        },
      },
    ],
    connections: {
      Start: { main: [[{ node: 'Split Out', type: 'main', index: 0 }]] },
      'Split Out': { main: [[{ node: 'Sort', type: 'main', index: 0 }]] },
      Sort: { main: [[{ node: 'Set', type: 'main', index: 0 }]] },
    },
  });
  // The Set runs per item (its expressions are JSONata): no adapter; a guard lets no empty list through.
  const types = Object.fromEntries(converted.nodes.map((n) => [n.id, n.type]));
  expect(types).toMatchObject({ split_out: 'code', sort: 'code', set__any: 'condition', set: 'transform' });
  expect(types.sort__any1).toBeUndefined();
  const edges = converted.edges.map((e) => [e.source, e.target, e.sourceHandle ?? null]);
  expect(edges).toEqual(
    expect.arrayContaining([
      ['split_out', 'sort', null],
      ['sort', 'set__any', null],
      ['set__any', 'set', 'true'],
    ]),
  );
  expect(expr(converted.nodes.find((n) => n.id === 'set'))).toContain('$type($nodes.split_out) = "array" ? $nodes.split_out[0].json');
  expect(converted.conversion.ready).toBe(false);
  // What stays lossy: the reference reads Split Out's first item, not the paired one.
  expect(converted.conversion.readinessIssues.map((i) => [i.node, i.kind, i.message.slice(0, 30)])).toEqual([
    ['Set', 'lossyConversion', 'An expression reads "Split Out'],
  ]);
});

/** Manual trigger → Split Out of `xs` → `node`. */
const afterSplit = (node: Record<string, unknown>) =>
  convertExtflowWorkflow({
    id: 'wiring-after-split',
    name: 'Wiring after split',
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
      { name: 'Split Out', type: 'n8n-nodes-base.splitOut', typeVersion: 1, parameters: { fieldToSplitOut: 'xs' } },
      node as never,
    ],
    connections: {
      Start: { main: [[{ node: 'Split Out', type: 'main', index: 0 }]] },
      'Split Out': { main: [[{ node: String(node.name), type: 'main', index: 0 }]] },
    },
  });

test('a Set whose expression needs JavaScript runs its one-item mapping once per item, in a loop', () => {
  const converted = afterSplit({
    name: 'Set',
    type: 'n8n-nodes-base.set',
    typeVersion: 3.4,
    parameters: { assignments: { assignments: [{ id: '1', name: 'v', value: '={{ $json.xs.toFixed(1) }}', type: 'string' }] } },
  });
  const types = Object.fromEntries(converted.nodes.map((n) => [n.id, n.type]));
  expect(types).toMatchObject({
    set__anyin: 'condition',
    set__each: 'loop',
    set__run__js: 'code',
    set__run: 'transform',
    set: 'transform',
  });
  expect(converted.edges.filter((e) => e.loop)).toEqual([
    expect.objectContaining({ source: 'set__back', target: 'set__each', loop: true, maxIterations: 10_000 }),
  ]);
  expect(converted.conversion.readinessIssues).toEqual([]);
});

test('a node that runs neither per item nor in a loop keeps its one-item mapping behind an adapter, named as lossy', () => {
  const converted = afterSplit({
    name: 'Wait',
    type: 'n8n-nodes-base.wait',
    typeVersion: 1.1,
    parameters: { resume: 'timeInterval', amount: 1, unit: 'seconds' },
  });
  const types = Object.fromEntries(converted.nodes.map((n) => [n.id, n.type]));
  expect(types).toMatchObject({ split_out__any1: 'condition', split_out__one1: 'transform', wait: 'wait' });
  expect(converted.conversion.readinessIssues).toEqual([
    { node: 'Wait', kind: 'lossyConversion', message: expect.stringContaining('"Split Out" may pass several items on') },
  ]);
});

test('"always output data" is named where it is not carried over (If), and kept quiet where it changes nothing (Set)', () => {
  const converted = convertExtflowWorkflow({
    id: 'always',
    name: 'Always',
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
      {
        name: 'If',
        type: 'n8n-nodes-base.if',
        typeVersion: 1,
        alwaysOutputData: true,
        parameters: { conditions: { boolean: [{ value1: '={{ $json.ok }}', value2: true }] } },
      },
      { name: 'Set', type: 'n8n-nodes-base.set', typeVersion: 3.4, alwaysOutputData: true, parameters: {} },
    ],
    connections: {
      Start: { main: [[{ node: 'If', type: 'main', index: 0 }]] },
      If: { main: [[{ node: 'Set', type: 'main', index: 0 }]] },
    },
  });
  expect(converted.conversion.readinessIssues).toEqual([
    { node: 'If', kind: 'unsupportedOption', message: expect.stringContaining('"Always output data" is not carried over') },
  ]);
});
