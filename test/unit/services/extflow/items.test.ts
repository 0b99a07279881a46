/**
 * The item runtime (services/extflow/itemRuntime.ts): item linking and node settings as the
 * external tool's engine applies them, and the item nodes' operations, with expected items written
 * from the tool's documented semantics. The runtime is source text for the sandbox; here it is
 * compiled with `new Function` (same language, no sandbox).
 */
import { ITEM_RUNTIME } from '../../../../services/extflow/itemRuntime';

interface Item {
  json: Record<string, unknown>;
  binary?: Record<string, unknown>;
  pairedItem?: unknown;
}
interface Runtime {
  run(op: string, params: unknown, input: unknown, settings: Record<string, unknown>): Item[];
  runCode(input: unknown, settings: Record<string, unknown>, body: (items: Item[], cont: boolean) => Promise<Item[]>): Promise<Item[]>;
  toItems(input: unknown): Item[];
  normalize(result: unknown): Item[];
  pair(out: Item[], inCount: number): Item[];
}

const rt = new Function(`${ITEM_RUNTIME}\nreturn __items;`)() as Runtime;
const items = (...jsons: Array<Record<string, unknown>>) => jsons.map((json) => ({ json }));

describe('item linking', () => {
  test("a connection's one value is one item; an item list keeps its items, re-paired by index", () => {
    expect(rt.toItems({ a: 1 })).toEqual([{ json: { a: 1 }, pairedItem: { item: 0 } }]);
    expect(rt.toItems(null)).toEqual([]);
    expect(
      rt.toItems([
        { json: { a: 1 }, pairedItem: { item: 7 } },
        { json: { a: 2 }, binary: { f: { mimeType: 'text/plain', data: 'eA==' } } },
      ]),
    ).toEqual([
      { json: { a: 1 }, pairedItem: { item: 0 } },
      { json: { a: 2 }, binary: { f: { mimeType: 'text/plain', data: 'eA==' } }, pairedItem: { item: 1 } },
    ]);
    // An array of plain values (pinned data of several items) is one item per element.
    expect(rt.toItems([{ a: 1 }, { a: 2 }])).toEqual([
      { json: { a: 1 }, pairedItem: { item: 0 } },
      { json: { a: 2 }, pairedItem: { item: 1 } },
    ]);
  });

  test('unpaired output items are paired only when it is unambiguous; a set pairing is kept', () => {
    expect(rt.pair(items({ x: 1 }, { x: 2 }), 1)).toEqual([
      { json: { x: 1 }, pairedItem: { item: 0 } },
      { json: { x: 2 }, pairedItem: { item: 0 } },
    ]);
    expect(rt.pair(items({ x: 1 }, { x: 2 }), 2).map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
    expect(rt.pair(items({ x: 1 }, { x: 2 }), 3).map((i) => i.pairedItem)).toEqual([undefined, undefined]);
    expect(rt.pair([{ json: {}, pairedItem: { item: 2 } }], 1)[0]?.pairedItem).toEqual({ item: 2 });
  });

  test('returned items: bare objects are wrapped, a mix of shapes is refused', () => {
    expect(rt.normalize({ a: 1 })).toEqual([{ json: { a: 1 } }]);
    expect(rt.normalize([{ json: { a: 1 }, pairedItem: { item: 0 } }])).toEqual([{ json: { a: 1 }, pairedItem: { item: 0 } }]);
    expect(() => rt.normalize([{ json: {} }, { a: 1 }])).toThrow('Inconsistent item format');
  });
});

describe('node settings', () => {
  const three = items({ n: 1 }, { n: 2 }, { n: 3 });

  test('execute once runs with the first item only', () => {
    expect(rt.run('limit', { maxItems: 5 }, three, { executeOnce: true })).toEqual([{ json: { n: 1 }, pairedItem: { item: 0 } }]);
  });

  test('always output data turns no items into one empty item paired with every input item', () => {
    const none = rt.run('splitOut', { fieldToSplitOut: 'missing' }, three, { alwaysOutputData: true });
    expect(none).toEqual([
      {
        json: {},
        pairedItem: [
          { item: 0, input: 0 },
          { item: 1, input: 0 },
          { item: 2, input: 0 },
        ],
      },
    ]);
    expect(rt.run('splitOut', { fieldToSplitOut: 'missing' }, three, {})).toEqual([]);
  });

  test('continue (regular output) gives the error item; otherwise the failure stops the node', () => {
    expect(rt.run('summarize', { fieldsToSummarize: { values: [] } }, three, { onError: 'continueRegularOutput' })).toEqual([
      { json: { error: "You need to add at least one aggregation to 'Fields to Summarize' with non empty 'Field'" } },
    ]);
    expect(() => rt.run('summarize', { fieldsToSummarize: { values: [] } }, three, { onError: 'continueErrorOutput' })).toThrow(
      'Fields to Summarize',
    );
  });

  test('code: each-item failures become error items in place with continue', async () => {
    const out = await rt.runCode(three, { onError: 'continueRegularOutput' }, async (list, cont) => {
      const all: Item[] = [];
      list.forEach((it, i) => {
        if (it.json.n === 2 && cont) all.push({ json: { error: 'two' }, pairedItem: { item: i } });
        else all.push({ json: { m: (it.json.n as number) * 10 }, pairedItem: { item: i } });
      });
      return all;
    });
    expect(out.map((i) => i.json)).toEqual([{ m: 10 }, { error: 'two' }, { m: 30 }]);
  });
});

describe('operations', () => {
  test('Split Out: one item per element, paired with the item it came from', () => {
    const input = items({ id: 1, tags: ['a', 'b'] }, { id: 2, tags: [{ t: 'c' }] });
    expect(rt.run('splitOut', { fieldToSplitOut: 'tags', include: 'noOtherFields' }, input, {})).toEqual([
      { json: { tags: 'a' }, pairedItem: { item: 0 } },
      { json: { tags: 'b' }, pairedItem: { item: 0 } },
      { json: { t: 'c' }, pairedItem: { item: 1 } },
    ]);
    expect(rt.run('splitOut', { fieldToSplitOut: 'tags', include: 'allOtherFields' }, input.slice(0, 1), {})).toEqual([
      { json: { id: 1, tags: 'a' }, pairedItem: { item: 0 } },
      { json: { id: 1, tags: 'b' }, pairedItem: { item: 0 } },
    ]);
    expect(
      rt.run('splitOut', { fieldToSplitOut: 'tags', include: 'noOtherFields', options: { destinationFieldName: 'tag' } }, input, {}).length,
    ).toBe(3);
  });

  test('Aggregate: individual fields and all item data', () => {
    const input = items({ a: 1, b: 'x' }, { a: null, b: 'y' }, { a: [2, null], b: 'z' });
    expect(rt.run('aggregate', { fieldsToAggregate: { fieldToAggregate: [{ fieldToAggregate: 'a' }] } }, input, {})).toEqual([
      { json: { a: [1, [2]] }, pairedItem: [{ item: 0 }, { item: 1 }, { item: 2 }] },
    ]);
    expect(
      rt.run(
        'aggregate',
        { fieldsToAggregate: { fieldToAggregate: [{ fieldToAggregate: 'a' }] }, options: { mergeLists: true } },
        input,
        {},
      ),
    ).toEqual([{ json: { a: [1, 2] }, pairedItem: [{ item: 0 }, { item: 1 }, { item: 2 }] }]);
    expect(rt.run('aggregate', { aggregate: 'aggregateAllItemData', include: 'specifiedFields', fieldsToInclude: 'b' }, input, {})).toEqual(
      [{ json: { data: [{ b: 'x' }, { b: 'y' }, { b: 'z' }] }, pairedItem: [{ item: 0 }, { item: 1 }, { item: 2 }] }],
    );
  });

  test('Summarize: split by a field, one item per group paired with its items', () => {
    const input = items({ c: 'x', v: 1 }, { c: 'y', v: 5 }, { c: 'x', v: 2 }, { c: 'x', v: 'n/a' });
    const params = {
      fieldsToSummarize: {
        values: [
          { aggregation: 'sum', field: 'v' },
          { aggregation: 'count', field: 'v' },
        ],
      },
      fieldsToSplitBy: 'c',
    };
    expect(rt.run('summarize', params, input, {})).toEqual([
      { json: { c: 'x', sum_v: 3, count_v: 3 }, pairedItem: [{ item: 0 }, { item: 2 }, { item: 3 }] },
      { json: { c: 'y', sum_v: 5, count_v: 1 }, pairedItem: [{ item: 1 }] },
    ]);
    expect(rt.run('summarize', { fieldsToSummarize: { values: [{ aggregation: 'max', field: 'v' }] } }, input.slice(0, 3), {})).toEqual([
      { json: { max_v: 5 }, pairedItem: [{ item: 0 }, { item: 1 }, { item: 2 }] },
    ]);
  });

  test('Sort: case-insensitive strings, several fields, pairing to the original positions', () => {
    const input = items({ n: 'b', k: 2 }, { n: 'A', k: 1 }, { n: 'a', k: 3 });
    const out = rt.run(
      'sort',
      {
        sortFieldsUi: {
          sortField: [
            { fieldName: 'n', order: 'ascending' },
            { fieldName: 'k', order: 'descending' },
          ],
        },
      },
      input,
      {},
    );
    expect(out).toEqual([
      { json: { n: 'a', k: 3 }, pairedItem: { item: 2 } },
      { json: { n: 'A', k: 1 }, pairedItem: { item: 1 } },
      { json: { n: 'b', k: 2 }, pairedItem: { item: 0 } },
    ]);
    expect(() => rt.run('sort', { sortFieldsUi: { sortField: [{ fieldName: 'zz' }] } }, input, {})).toThrow(
      "Couldn't find the field 'zz' in the input data",
    );
  });

  test('Limit keeps the first or the last items', () => {
    const input = items({ n: 1 }, { n: 2 }, { n: 3 });
    expect(rt.run('limit', { maxItems: 2, keep: 'lastItems' }, input, {})).toEqual([
      { json: { n: 2 }, pairedItem: { item: 1 } },
      { json: { n: 3 }, pairedItem: { item: 2 } },
    ]);
    expect(rt.run('limit', {}, input, {})).toEqual([{ json: { n: 1 }, pairedItem: { item: 0 } }]);
  });

  test('Remove Duplicates keeps the first of equal items, by all or selected fields', () => {
    const input = items({ a: 1, b: 'x' }, { a: 1, b: 'y' }, { a: 1, b: 'x' }, { a: 2, b: 'x' });
    expect(rt.run('removeDuplicates', { compare: 'allFields' }, input, {}).map((i) => i.pairedItem)).toEqual([
      { item: 0 },
      { item: 1 },
      { item: 3 },
    ]);
    expect(rt.run('removeDuplicates', { compare: 'selectedFields', fieldsToCompare: 'a' }, input, {})).toEqual([
      { json: { a: 1, b: 'x' }, pairedItem: { item: 0 } },
      { json: { a: 2, b: 'x' }, pairedItem: { item: 3 } },
    ]);
    expect(() => rt.run('removeDuplicates', { compare: 'selectedFields', fieldsToCompare: 'c' }, input, {})).toThrow(
      "'c' field is missing from some input items",
    );
  });

  test('Rename Keys moves values, dotted names nested', () => {
    const input = items({ first: 'Ada', meta: { n: 1 } });
    expect(
      rt.run(
        'renameKeys',
        {
          keys: {
            key: [
              { currentKey: 'first', newKey: 'name.given' },
              { currentKey: 'meta.n', newKey: 'count' },
              { currentKey: 'absent', newKey: 'x' },
            ],
          },
        },
        input,
        {},
      ),
    ).toEqual([{ json: { name: { given: 'Ada' }, meta: {}, count: 1 }, pairedItem: { item: 0 } }]);
  });

  test('field paths never write to prototypes', () => {
    const out = rt.run('renameKeys', { keys: { key: [{ currentKey: 'a', newKey: '__proto__.polluted' }] } }, items({ a: 1 }), {});
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(out[0]?.json).toEqual({});
  });
});
