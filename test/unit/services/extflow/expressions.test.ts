/** The external tool's expressions: exact translations to JSONata, and what is refused. */
import jsonata from 'jsonata';
import { toJsonata, toTemplate } from '../../../../services/extflow/expressions';
import { Unsupported } from '../../../../services/extflow/types';

const scope = { idOf: (name: string) => ({ 'Set A': 'set_a', 'HTTP Request': 'http_request' })[name] };

async function evaluate(code: string, input: unknown, nodes: Record<string, unknown> = {}) {
  return jsonata(code).evaluate(input, { input, nodes });
}

describe('translations', () => {
  test.each([
    ['={{ $json.name }}', { name: 'Ada' }, 'Ada'],
    ['={{ $json["first name"] }}', { 'first name': 'Ada' }, 'Ada'],
    ['={{ $json.items[1] }}', { items: ['a', 'b'] }, 'b'],
    ['={{ $input.item.json.n * 2 }}', { n: 4 }, 8],
    ['={{ $input.first().json.n }}', { n: 4 }, 4],
    ['=Hello {{ $json.name }}!', { name: 'Ada' }, 'Hello Ada!'],
    ['={{ $json.n > 3 ? "big" : "small" }}', { n: 4 }, 'big'],
    ['={{ $json.a === 1 && $json.b !== 2 }}', { a: 1, b: 3 }, true],
    ['={{ !$json.flag }}', { flag: false }, true],
    ['={{ $json.name.toUpperCase() }}', { name: 'ada' }, 'ADA'],
    ['={{ $json.tags.length }}', { tags: ['a', 'b', 'c'] }, 3],
    ['={{ $json.word.length }}', { word: 'four' }, 4],
    ['={{ "#" + $json.id }}', { id: 7 }, '#7'],
    ['={{ $json.n + 1 }}', { n: 1 }, 2],
    ['={{ $json.s + 1 }}', { s: 'v' }, 'v1'],
    ['={{ Math.max($json.a, $json.b) }}', { a: 1, b: 5 }, 5],
    ['={{ Number($json.n) + 1 }}', { n: '41' }, 42],
    ['={{ { "a": $json.x, "b": [1, 2] } }}', { x: 1 }, { a: 1, b: [1, 2] }],
    ['plain text', {}, 'plain text'],
  ])('%s', async (source, input, expected) => {
    const code = toJsonata(source, scope);
    expect(JSON.parse(JSON.stringify(await evaluate(code, input)))).toEqual(expected);
  });

  test('node references read $nodes', async () => {
    const code = toJsonata(`={{ $node["Set A"].json.x + $('Set A').item.json.y + $('HTTP Request').first().json.z }}`, scope);
    expect(await evaluate(code, {}, { set_a: { x: 1, y: 2 }, http_request: { z: 3 } })).toBe(6);
  });

  test('templated fields: expressions get "=", an expression without holes is its text, literals stay', () => {
    expect(toTemplate({ a: '={{ $json.x }}', b: 'lit', c: ['=x'], d: 3 }, scope)).toEqual({ a: '=$input.x', b: 'lit', c: ['="x"'], d: 3 });
  });
});

describe('refusals (listed, never guessed)', () => {
  test.each([
    '={{ $json.items.map(i => i.id) }}',
    '={{ $now.toISO() }}',
    '={{ $env.SECRET }}',
    '={{ $json.a || "default" }}',
    '={{ $json.a?.b }}',
    '={{ $("Unknown").item.json.x }}',
    '={{ `x${1}` }}',
    '={{ $json.s.replace(/a/g, "b") }}',
    '={{ $execution.id }}',
  ])('%s', (source) => {
    expect(() => toJsonata(source, scope)).toThrow(Unsupported);
  });
});
