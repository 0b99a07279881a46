/** returnsOneItem: whether all-items code evidently returns one item (else the import is not ready). */
import { returnsOneItem } from '../../../../services/extflow/nodes/code';

test.each([
  ['return { json: { a: 1 } };', true],
  ['return [{ json: { a: [1, 2], b: "x,y" } }];', true],
  ['return items;', true],
  ['return $input.all();', true],
  ['if (x) return { a: 1 };\nreturn [{ json: {} }];', true],
  ['const out = [];\nfor (const i of items) out.push(i);\nreturn out;', false],
  ['const out = [];\nfor (const item of $input.all()) {\n  out.push({ json: { a: item.json.a, b: "x)," } });\n}\nreturn out;', true],
  ['const out = [];\nfor (const item of $input.all()) {\n  out.push({ json: 1 }, { json: 2 });\n}\nreturn out;', false],
  [
    'const out = [];\nfor (const item of $input.all()) {\n  for (const l of item.json.lines) out.push({ json: { l } });\n}\nreturn out;',
    false,
  ],
  ['const out = [];\nfor (const l of $json.lines) {\n  out.push({ json: { l } });\n}\nreturn out;', false],
  ['return [{ json: { s: "a, b" } }];', true],
  ['return [{ json: { a: 1 } }, { json: { a: 2 } }];', false],
  ['return items.map((i) => ({ json: i.json }));', true],
  ['return list.map((i) => ({ json: i }));', false],
  ['return $input.all().filter((i) => i.json.ok);', false],
  ['console.log(1);', false],
])('%s → %s', (source, expected) => {
  expect(returnsOneItem(source)).toBe(expected);
});
