/**
 * The item runtime's Merge (services/extflow/itemRuntime.ts, `runInputs('merge', …)`): each
 * mode over several items per input, with the items the external tool's Merge node outputs
 * (its v1–v3 semantics, read from its source).
 */
import { convertExtflowWorkflow } from '../../../../services/extflow/convert';
import { ITEM_RUNTIME } from '../../../../services/extflow/itemRuntime';

interface Item {
  json: Record<string, unknown>;
  pairedItem?: unknown;
}
interface Runtime {
  runInputs(op: string, params: unknown, inputs: unknown[], settings: Record<string, unknown>): Item[];
}

const rt = new Function(`${ITEM_RUNTIME}\nreturn __items;`)() as Runtime;
const list = (...jsons: Array<Record<string, unknown>>) => jsons.map((json) => ({ json }));
const merge = (params: Record<string, unknown>, a: unknown, b: unknown, settings = {}) =>
  rt.runInputs('merge', { typeVersion: 3, ...params }, [a, b], settings);
const jsons = (items: Item[]) => items.map((i) => i.json);

const people = list({ id: 1, name: 'Ann' }, { id: 2, name: 'Bob' }, { id: 3, name: 'Cy' });
const orders = list({ id: 2, total: 10 }, { id: 1, total: 5 }, { id: 2, total: 7 }, { id: 9, total: 1 });
const byId = { mode: 'combineByFields', fields: [{ field1: 'id', field2: 'id' }], options: {}, clash: {} };

describe('append and choose branch', () => {
  test('append: input 1 then input 2, each item paired with its input', () => {
    const out = merge({ mode: 'append' }, list({ a: 1 }, { a: 2 }), list({ b: 1 }));
    expect(out).toEqual([
      { json: { a: 1 }, pairedItem: { item: 0 } },
      { json: { a: 2 }, pairedItem: { item: 1 } },
      { json: { b: 1 }, pairedItem: { item: 0, input: 1 } },
    ]);
  });

  test('an input that did not run has no items', () => {
    expect(jsons(merge({ mode: 'append' }, undefined, list({ b: 1 })))).toEqual([{ b: 1 }]);
  });

  test('choose branch: the chosen input, or one empty item paired with all', () => {
    expect(jsons(merge({ mode: 'chooseBranch', useDataOfInput: 2 }, people, orders))).toEqual(jsons(orders));
    expect(merge({ mode: 'chooseBranch', output: 'empty' }, list({ a: 1 }), list({ b: 1 }))).toEqual([
      { json: {}, pairedItem: [{ item: 0 }, { item: 0, input: 1 }] },
    ]);
  });
});

describe('combine by matching fields', () => {
  test('keep matches: one merged item per match, input 2 winning clashes', () => {
    expect(jsons(merge({ ...byId, joinMode: 'keepMatches' }, people, orders))).toEqual([
      { id: 1, name: 'Ann', total: 5 },
      { id: 2, name: 'Bob', total: 10 },
      { id: 2, name: 'Bob', total: 7 },
    ]);
  });

  test('keep matches, first match only / output input 1 or 2', () => {
    const first = { ...byId, options: { multipleMatches: 'first' } };
    expect(jsons(merge({ ...first, joinMode: 'keepMatches' }, people, orders))).toEqual([
      { id: 1, name: 'Ann', total: 5 },
      { id: 2, name: 'Bob', total: 10 },
    ]);
    expect(jsons(merge({ ...byId, joinMode: 'keepMatches', outputDataFrom: 'input1' }, people, orders))).toEqual([
      { id: 1, name: 'Ann' },
      { id: 2, name: 'Bob' },
    ]);
    expect(jsons(merge({ ...byId, joinMode: 'keepMatches', outputDataFrom: 'input2' }, people, orders))).toEqual([
      { id: 2, total: 10 },
      { id: 1, total: 5 },
      { id: 2, total: 7 },
    ]);
  });

  test('keep non-matches: both inputs tagged with _source', () => {
    expect(jsons(merge({ ...byId, joinMode: 'keepNonMatches' }, people, orders))).toEqual([
      { id: 3, name: 'Cy', _source: 'input1' },
      { id: 9, total: 1, _source: 'input2' },
    ]);
  });

  test('keep everything, enrich input 1, enrich input 2', () => {
    expect(jsons(merge({ ...byId, joinMode: 'keepEverything' }, people, orders))).toEqual([
      { id: 1, name: 'Ann', total: 5 },
      { id: 2, name: 'Bob', total: 10 },
      { id: 2, name: 'Bob', total: 7 },
      { id: 3, name: 'Cy' },
      { id: 9, total: 1 },
    ]);
    expect(jsons(merge({ ...byId, joinMode: 'enrichInput1' }, people, orders))).toEqual([
      { id: 1, name: 'Ann', total: 5 },
      { id: 2, name: 'Bob', total: 10 },
      { id: 2, name: 'Bob', total: 7 },
      { id: 3, name: 'Cy' },
    ]);
    expect(jsons(merge({ ...byId, joinMode: 'enrichInput2' }, people, orders))).toEqual([
      { id: 1, name: 'Ann', total: 5 },
      { id: 2, name: 'Bob', total: 10 },
      { id: 2, name: 'Bob', total: 7 },
      { id: 9, total: 1 },
    ]);
  });

  test('clash handling: prefer input 1, add suffixes; fuzzy compare', () => {
    const a = list({ k: '1', v: 'a' });
    const b = list({ k: 1, v: 'b' });
    expect(jsons(merge({ ...byId, fields: [{ field1: 'k', field2: 'k' }], joinMode: 'keepMatches' }, a, b))).toEqual([]);
    const fuzzy = { ...byId, fields: [{ field1: 'k', field2: 'k' }], options: { fuzzyCompare: true }, joinMode: 'keepMatches' };
    expect(jsons(merge(fuzzy, a, b))).toEqual([{ k: 1, v: 'b' }]);
    expect(jsons(merge({ ...fuzzy, clash: { resolveClash: 'preferInput1' } }, a, b))).toEqual([{ k: '1', v: 'a' }]);
    expect(jsons(merge({ ...fuzzy, clash: { resolveClash: 'addSuffix' } }, a, b))).toEqual([{ k_1: '1', v_1: 'a', k_2: 1, v_2: 'b' }]);
  });

  test('v2.0 fails when a field to match is in no item', () => {
    expect(() =>
      merge({ ...byId, typeVersion: 2, joinMode: 'keepMatches', fields: [{ field1: 'nope', field2: 'id' }] }, people, orders),
    ).toThrow("Field 'nope' is not present in any of items in 'Input 1'");
  });
});

describe('combine by position and all combinations', () => {
  test('by position: the shorter length, or every item with "include unpaired"', () => {
    const a = list({ a: 1, x: 'a' }, { a: 2 }, { a: 3 });
    const b = list({ b: 1, x: 'b' }, { b: 2 });
    expect(jsons(merge({ mode: 'combineByPosition', clash: {} }, a, b))).toEqual([
      { a: 1, b: 1, x: 'b' },
      { a: 2, b: 2 },
    ]);
    expect(jsons(merge({ mode: 'combineByPosition', clash: {}, includeUnpaired: true }, a, b))).toEqual([
      { a: 1, b: 1, x: 'b' },
      { a: 2, b: 2 },
      { a: 3 },
    ]);
    expect(jsons(merge({ mode: 'combineByPosition', clash: { resolveClash: 'preferInput1' } }, a, b))[0]).toEqual({ a: 1, b: 1, x: 'a' });
  });

  test('combine all: every pair, input 2 winning; nested objects merged deeply', () => {
    const out = merge({ mode: 'combineAll', clash: {} }, list({ a: 1, o: { p: 1 } }, { a: 2 }), list({ b: 1, o: { q: 2 } }, { b: 2 }));
    expect(jsons(out)).toEqual([
      { a: 1, b: 1, o: { p: 1, q: 2 } },
      { a: 1, b: 2, o: { p: 1 } },
      { a: 2, b: 1, o: { q: 2 } },
      { a: 2, b: 2 },
    ]);
    expect(out[1]?.pairedItem).toEqual([{ item: 0 }, { item: 1, input: 1 }]);
  });

  test('a cross join past 100,000 items fails with the limit, before building it', () => {
    const big = Array.from({ length: 400 }, (_, i) => ({ json: { i } }));
    expect(() => merge({ mode: 'combineAll', clash: {} }, big, big)).toThrow(
      'Merge would output 160000 items, more than the 100000 a merge may output here',
    );
  });
});

describe('v1 modes', () => {
  const a = list({ k: 1, v: 'a1' }, { k: 2, v: 'a2' }, { k: 3, v: '' });
  const b = list({ k: 2, v: 'b2', w: true }, { k: 3, v: 'b3' });
  const v1 = (params: Record<string, unknown>) => jsons(merge({ typeVersion: 1, propertyName1: 'k', propertyName2: 'k', ...params }, a, b));

  test('keep / remove key matches', () => {
    expect(v1({ mode: 'keepKeyMatches' })).toEqual([
      { k: 2, v: 'a2' },
      { k: 3, v: '' },
    ]);
    expect(v1({ mode: 'removeKeyMatches' })).toEqual([{ k: 1, v: 'a1' }]);
  });

  test('merge by key: input 1 as base, overwrite always / only blank', () => {
    expect(v1({ mode: 'mergeByKey', overwrite: 'always' })).toEqual([
      { k: 1, v: 'a1' },
      { k: 2, v: 'b2', w: true },
      { k: 3, v: 'b3' },
    ]);
    expect(v1({ mode: 'mergeByKey', overwrite: 'blank' })).toEqual([
      { k: 1, v: 'a1' },
      { k: 2, v: 'a2', w: true },
      { k: 3, v: 'b3' },
    ]);
  });

  test('merge by index (left, inner, outer), multiplex, pass-through, wait', () => {
    expect(v1({ mode: 'mergeByIndex', join: 'left' })).toEqual([
      { k: 2, v: 'b2', w: true },
      { k: 3, v: 'b3' },
      { k: 3, v: '' },
    ]);
    expect(v1({ mode: 'mergeByIndex', join: 'inner' })).toHaveLength(2);
    expect(v1({ mode: 'multiplex' })).toHaveLength(6);
    expect(v1({ mode: 'passThrough', output: 'input2' })).toEqual(jsons(b));
    expect(v1({ mode: 'wait' })).toEqual([{}]);
  });
});

describe('what a converted Merge passes on', () => {
  const exportWith = (parameters: Record<string, unknown>) =>
    convertExtflowWorkflow({
      id: 'merge-count',
      name: 'Merge count',
      nodes: [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
        { name: 'A', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} },
        { name: 'B', type: 'n8n-nodes-base.noOp', typeVersion: 1, parameters: {} },
        { name: 'Merge', type: 'n8n-nodes-base.merge', typeVersion: 3, parameters },
        { name: 'Call', type: 'n8n-nodes-base.httpRequest', typeVersion: 4.2, parameters: { url: 'http://127.0.0.1:9/x' } },
      ],
      connections: {
        Start: {
          main: [
            [
              { node: 'A', index: 0 },
              { node: 'B', index: 0 },
            ],
          ],
        },
        A: { main: [[{ node: 'Merge', index: 0 }]] },
        B: { main: [[{ node: 'Merge', index: 1 }]] },
        Merge: { main: [[{ node: 'Call', index: 0 }]] },
      },
    });

  test('append of two single items passes two: the HTTP Request after it runs once per item, in a loop', () => {
    const converted = exportWith({});
    expect(converted.nodes.find((n) => n.id === 'merge')?.type).toBe('code');
    expect(converted.nodes.find((n) => n.id === 'call__each')?.type).toBe('loop');
    expect(converted.conversion.readinessIssues).toEqual([]);
  });

  test('choosing a branch or combining single items passes at most one: nothing is named', () => {
    expect(exportWith({ mode: 'chooseBranch', useDataOfInput: 2 }).conversion.readinessIssues).toEqual([]);
    expect(exportWith({ mode: 'combine', combineBy: 'combineAll' }).conversion.readinessIssues).toEqual([]);
    expect(exportWith({ mode: 'combineBySql' }).conversion.unsupported.map((u) => u.node)).toEqual(['Merge']);
  });
});
