/** returnsOneItem: whether all-items code evidently returns one item (else the import is not ready). */
import { returnsOneItem } from '../../../../services/extflow/nodes/code';

test.each([
  ['return { json: { a: 1 } };', true],
  ['return [{ json: { a: [1, 2], b: "x,y" } }];', true],
  ['return items;', true],
  ['return $input.all();', true],
  ['if (x) return { a: 1 };\nreturn [{ json: {} }];', true],
  ['const out = [];\nfor (const i of items) out.push(i);\nreturn out;', false],
  ['return [{ json: { a: 1 } }, { json: { a: 2 } }];', false],
  ['return items.map((i) => ({ json: i.json }));', true],
  ['return list.map((i) => ({ json: i }));', false],
  ['return $input.all().filter((i) => i.json.ok);', false],
  ['console.log(1);', false],
])('%s → %s', (source, expected) => {
  expect(returnsOneItem(source)).toBe(expected);
});
