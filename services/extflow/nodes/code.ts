/**
 * Code (JavaScript) and the older Function / Function Item nodes → code. The source runs inside
 * a prelude that gives it the idioms of the external tool over our one-value-per-connection
 * data: `$input.all()`, `$input.first()`, `$input.item`, `$json`, `items`, `item`; its returned
 * items are unwrapped (`[{ json }]` → the json; several items → an array of their json, which
 * makes all-items code not ready unless it evidently returns one item: `returnsOneItem`).
 * Source that reaches other nodes, the environment or helpers is listed instead.
 */
import { Unsupported } from '../types';
import { ourNode, type Mapper } from './context';

const FORBIDDEN: Array<[RegExp, string]> = [
  [/\$\(\s*['"`]/, "$('Node') (other nodes' data)"],
  [/\$node\s*\[/, "$node[…] (other nodes' data)"],
  [/\$items\s*\(/, '$items()'],
  [/\$env\b/, '$env (environment variables)'],
  [/\$vars\b/, '$vars'],
  [/\$secrets\b/, '$secrets'],
  [/\$execution\b/, '$execution'],
  [/\$workflow\b/, '$workflow'],
  [/\$prevNode\b/, '$prevNode'],
  [/\$runIndex\b/, '$runIndex'],
  [/\$getWorkflowStaticData\b/, '$getWorkflowStaticData (state kept between runs)'],
  [/\bthis\.helpers\b/, 'this.helpers (HTTP and binary helpers)'],
  [/\$helpers\b/, '$helpers'],
  [/\brequire\s*\(/, 'require() (modules)'],
  [/\bfetch\s*\(/, 'fetch() (network)'],
  [/\.binary\b|\$binary\b/, 'binary data'],
  [/\$now\b|\$today\b|\bDateTime\b|\bluxon\b/, 'the Luxon date helpers ($now, $today, DateTime)'],
  [/\$jmespath\b/, '$jmespath'],
];

/**
 * The idioms of the external tool over our one input value. `item` is what each mode gives:
 * the item (`{ json }`) in a Code node's "for each item" mode, the item's JSON in a Function
 * Item node, and (as before, though the external tool has none) the JSON in all-items mode.
 */
function prelude(mode: 'allItems' | 'eachItem' | 'functionItem'): string {
  return [
    'const __item = { json: input };',
    'const $input = { all: () => [__item], first: () => __item, last: () => __item, item: __item };',
    'const $json = input;',
    'const items = [__item];',
    mode === 'eachItem' ? 'const item = __item;' : 'const item = input;',
    mode === 'allItems' ? '// mode: run once for all items' : '// mode: run once for each item',
    'const __out = await (async () => {',
  ].join('\n');
}

/**
 * Whether all-items code evidently returns one item: every `return` gives an object literal, a
 * one-element array of one, the input items themselves (`items`, `$input.all()`: one item
 * here), a `.map(…)` of them, or a list that one loop over them fills with one `push({…})` per
 * item. Anything else (a filter, several elements, a loop over another list) may return several
 * items, which reach the next node as one array value instead of separate items.
 * Caveat: a textual check; it answers "not evident" rather than guess.
 */
export function returnsOneItem(source: string): boolean {
  const bare = withoutStrings(source);
  const returns = [...bare.matchAll(/\breturn\b\s*/g)];
  if (returns.length === 0) return false;
  return returns.every((m) => {
    const rest = bare.slice((m.index ?? 0) + m[0].length);
    if (/^(items|\$input\.all\(\))\s*;?\s*($|\n|\})/.test(rest)) return true;
    // One item out per item in: the input is one item here.
    if (/^(items|\$input\.all\(\))\.map\(/.test(rest)) return true;
    if (rest.startsWith('{')) return true;
    if (rest.startsWith('[')) return oneObjectInside(rest);
    const list = /^([A-Za-z_$][\w$]*)\s*;?\s*($|\n|\})/.exec(rest)?.[1];
    return list !== undefined && fillsOnePerItem(bare, list);
  });
}

/** The text with its string literals emptied, so brackets and commas inside them do not count. */
function withoutStrings(text: string): string {
  return text.replace(/(["'`])(?:\\.|(?!\1)[^\\])*\1/g, '""');
}

/** Whether the bracket that opens `text` holds exactly one element, an object literal. */
function oneObjectInside(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '[' || c === '{' || c === '(') depth++;
    else if (c === ']' || c === '}' || c === ')') {
      depth--;
      if (depth === 0) return /^.\s*\{/.test(text);
    } else if (c === ',' && depth === 1) return false;
  }
  return false;
}

/** `for (const x of items|$input.all()) { … list.push({ … }) … }` as the code's only loop and only push. */
function fillsOnePerItem(bare: string, list: string): boolean {
  const loops = bare.match(/\b(for|while|do)\b|\.(forEach|map|flatMap|filter|reduce)\(/g) ?? [];
  const pushes = [...bare.matchAll(/\.push\(/g)];
  const push = bare.indexOf(`${list}.push(`);
  return (
    loops.length === 1 &&
    /\bfor\s*\(\s*(const|let|var)\s+[\w$]+\s+of\s+(items|\$input\.all\(\))\s*\)/.test(bare) &&
    pushes.length === 1 &&
    push >= 0 &&
    oneObjectInside(bare.slice(push + list.length + '.push'.length))
  );
}

const POSTLUDE = [
  '})();',
  'const __list = Array.isArray(__out) ? __out : __out === undefined || __out === null ? [] : [__out];',
  "const __json = __list.map((i) => (i !== null && typeof i === 'object' && 'json' in i ? i.json : i));",
  'return __json.length === 1 ? __json[0] : __json;',
].join('\n');

export const codeNode: Mapper = (ctx) => {
  const p = ctx.params;
  const type = ctx.node.type;
  let source: string;
  let forEach = false;
  if (type.endsWith('.code')) {
    const language = typeof p.language === 'string' ? p.language : 'javaScript';
    if (language !== 'javaScript') throw new Unsupported(`${language} code`, 'Rewrite the code in JavaScript (code nodes run JavaScript).');
    source = typeof p.jsCode === 'string' ? p.jsCode : '';
    forEach = p.mode === 'runOnceForEachItem';
  } else {
    source = typeof p.functionCode === 'string' ? p.functionCode : '';
    forEach = type.endsWith('functionItem');
    if (forEach) source = `${source}\n`;
  }
  if (source.trim() === '') throw new Unsupported('an empty code node', 'Write the code, or delete the node.');
  for (const [re, what] of FORBIDDEN) {
    if (re.test(source))
      throw new Unsupported(
        `the code uses ${what}, which code nodes here do not have`,
        "Pass what it needs as the node's input (e.g. a transform before it), or rewrite that part.",
      );
  }
  if (forEach) ctx.warn('"Run once for each item" runs once with the node\'s input (one item per connection).');
  if (/\$input\.all\(\)|\bitems\b/.test(source)) ctx.warn("$input.all() / items hold one item: the node's input.");
  if (!forEach && !returnsOneItem(source))
    ctx.lossy(
      'lossyConversion',
      'the code may return several items: here they reach the next node as one array value, where the external tool passes them on one by one. Check what follows it, or return one item.',
    );
  const mode = !forEach ? 'allItems' : type.endsWith('functionItem') ? 'functionItem' : 'eachItem';
  return { nodes: [ourNode(ctx, ctx.id, 'code', { source: `${prelude(mode)}\n${source}\n${POSTLUDE}` })] };
};
