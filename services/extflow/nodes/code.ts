/**
 * Code (JavaScript) and the older Function / Function Item nodes → code. The source runs over
 * the node's item list (itemRuntime.ts) with the idioms of the external tool: `$input.all()`,
 * `$input.first()`, `$input.item`, `$json`, `items`, `item`; what it returns stays a list of
 * items. Whether all-items code evidently returns one item (`returnsOneItem`) tells the converter
 * whether nodes after it that take one item can receive several. Source that reaches other
 * nodes, the environment or helpers is listed instead.
 */
import { jsonLiteral, nodeRef } from '../expressions';
import { ITEM_RUNTIME } from '../itemRuntime';
import { CODE_NODES_SUFFIX } from '../itemWiring';
import { referencedNodes } from '../jsExpressions';
import { JS_RUNTIME_DIRECTIVE } from '../jsRuntime';
import { Unsupported } from '../types';
import { ourNode, type Mapper } from './context';
import { itemSettingsOf } from './items';

const FORBIDDEN: Array<[RegExp, string]> = [
  [/\$items\s*\(\s*\)/, '$items() without a node name'],
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
  [/\bluxon\b/, 'the luxon module'],
];

/** Helpers of the expression runtime (jsRuntime.ts) that code may use too: its Luxon subset and `$jmespath`. */
const RUNTIME_HELPERS = /\$now\b|\$today\b|\bDateTime\b|\bDuration\b|\$jmespath\b/;

/**
 * The body that runs the exported code over the node's item list (`__list`, item linking as in
 * itemRuntime.ts). All-items mode runs the code once with `items`, `$input.all()/first()/last()`
 * and `$json` (the first item's JSON); each-item mode runs it once per item with `$input.item`,
 * `$json`, `$itemIndex` and the legacy `item`: the item (`{ json }`) in a Code node, the item's
 * JSON in a Function Item node. What the code returns becomes the node's items (bare objects are
 * wrapped as `{ json }`); in each-item mode a returned item is paired with the item it ran for,
 * and with "continue (regular output)" a failing item gives `{ json: { error } }` in its place.
 */
function codeBody(mode: 'allItems' | 'eachItem' | 'functionItem', source: string): string {
  if (mode === 'allItems') {
    return [
      'async function (__list) {',
      'const $ = __nodesAt(0), $node = __nodeByName(0);',
      'const $input = { all: () => __list, first: () => __list[0], last: () => __list[__list.length - 1], item: __list[0] };',
      'const $json = __list[0] === undefined ? undefined : __list[0].json;',
      'const items = __list;',
      'const item = $json;',
      '// mode: run once for all items',
      'const __out = await (async () => {',
      source,
      '})();',
      'return __items.pair(__items.normalize(__out), __list.length);',
      '}',
    ].join('\n');
  }
  return [
    'async function (__list, __continue) {',
    'const __all = [];',
    'for (let __i = 0; __i < __list.length; __i++) {',
    'const __item = __list[__i];',
    'let __out;',
    'try {',
    '__out = await (async ($input, $json, item, $itemIndex, $, $node) => await (async () => {',
    '// mode: run once for each item',
    source,
    `})())({ item: __item, all: () => __list, first: () => __list[0], last: () => __list[__list.length - 1] }, __item.json, ${mode === 'functionItem' ? '__item.json' : '__item'}, __i, __nodesAt(__i), __nodeByName(__i));`,
    '} catch (__err) {',
    '  if (!__continue) throw __err;',
    '  __all.push({ json: { error: __err && __err.message ? __err.message : String(__err) }, pairedItem: { item: __i } });',
    '  continue;',
    '}',
    'for (const __one of __items.normalize(__out)) {',
    '  if (__one.pairedItem === undefined) __one.pairedItem = { item: __i };',
    '  __all.push(__one);',
    '}',
    '}',
    'return __all;',
    '}',
  ].join('\n');
}

/**
 * Whether all-items code evidently returns at most one item per input item: every `return` gives
 * an object literal, a one-element array of one, the input items themselves (`items`,
 * `$input.all()`), a `.map(…)` of them, or a list that one loop over them fills with one
 * `push({…})` per item. Anything else (a filter, several elements, a loop over another list) may
 * return more items than came in, which matters to the nodes after it that take one item.
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
  const mode = !forEach ? 'allItems' : type.endsWith('functionItem') ? 'functionItem' : 'eachItem';
  // Other nodes' items (`$('X')`, `$node["X"]`, `$items("X")`): a transform before the code gives
  // them with the input, as item lists (NODE_ACCESS).
  const names = referencedNodes(withoutComments(source));
  for (const name of names)
    if (!ctx.scope.idOf(name))
      throw new Unsupported(`the code reads node "${name}", which is not in the workflow`, 'Fix the node name in the code.');
  const settings = JSON.stringify(itemSettingsOf(ctx));
  const body = codeBody(mode, source);
  // The runtime is written as its directive (expanded where code runs: jsRuntime.ts), and only when used.
  const helpers = RUNTIME_HELPERS.test(withoutComments(source))
    ? `${JS_RUNTIME_DIRECTIVE}\nconst { $now, $today, $jmespath, DateTime, Duration } = __rt.globals({ input: null, nodes: {}, known: {} });\n`
    : '';
  const code =
    names.length === 0
      ? `${helpers}${ITEM_RUNTIME}\n${NODE_ACCESS}\nconst __nodes = { nodes: {}, known: {} };\nreturn __items.runCode(input, ${settings}, ${body});`
      : `${helpers}${ITEM_RUNTIME}\n${NODE_ACCESS}\nconst __nodes = input;\nreturn __items.runCode(input.input, ${settings}, ${body});`;
  const codeNodeOfOurs = ourNode(ctx, ctx.id, 'code', { source: code });
  // Evidently one item per input item (or one object): as many items out as in, at most.
  const items = forEach || returnsOneItem(source) ? 'same' : 'many';
  if (names.length === 0) return { nodes: [codeNodeOfOurs], items };
  const entries = names.map((n) => `${jsonLiteral(n)}: ${nodeItemsOf(nodeRef(ctx.scope.idOf(n)!))}`).join(', ');
  const known = jsonLiteral(Object.fromEntries(names.map((n) => [n, true])));
  const context = ourNode(
    ctx,
    `${ctx.id}${CODE_NODES_SUFFIX}`,
    'transform',
    { expression: `{"input": $, "nodes": {${entries}}, "known": ${known}}` },
    1,
  );
  return { nodes: [context, codeNodeOfOurs], items };
};

/** JSONata: a node's output as an item list: a list of `{ json }` items as it is, anything else as its one item. */
const nodeItemsOf = (ref: string) =>
  `($v := ${ref}; $type($v) = "array" and $count($v[$type($) = "object" and $exists(json)]) = $count($v) ? $v : $exists($v) ? [{"json": $v}] : undefined)`;

/** The source without comments, so a commented-out `$('X')` names nothing. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:])\/\/.*$/gm, '$1');
}

/**
 * The code's view of other nodes, from `__nodes = { nodes: { name: items }, known: { name: true } }`:
 * `$('X')` (all(), first(), last(), item, itemMatching(i), isExecuted), `$node["X"].json` and
 * `$items("X")`. The item paired with the current one is taken by position: the only item, else
 * the item at the current item's index (exact when items flowed one to one from X to here).
 */
const NODE_ACCESS = `
const __known = (name) => {
  if (typeof name !== 'string') throw new Error('$() needs a node name');
  if (!Object.prototype.hasOwnProperty.call(__nodes.known, name)) throw new Error('Referenced node "' + name + '" does not exist');
};
const __nodeItems = (name) => {
  __known(name);
  const list = __nodes.nodes[name];
  if (list === undefined) throw new Error('Referenced node "' + name + '" is unexecuted: it has not run before this node in this run');
  return list;
};
const __pairedOf = (name, i) => {
  const list = __nodeItems(name);
  if (list.length === 1) return list[0];
  if (i < list.length) return list[i];
  throw new Error('Cannot find the item of "' + name + '" paired with item ' + i + ': it has ' + list.length + ' items');
};
const __nodesAt = (i) => (name) => {
  __known(name);
  return {
    all: () => __nodeItems(name),
    first: () => __nodeItems(name)[0],
    last: () => { const list = __nodeItems(name); return list[list.length - 1]; },
    get item() { return __pairedOf(name, i); },
    itemMatching: (k) => __pairedOf(name, k),
    pairedItem: (k) => __pairedOf(name, k === undefined ? i : k),
    get isExecuted() { return __nodes.nodes[name] !== undefined; },
    get json() { return __pairedOf(name, i).json; },
  };
};
const __nodeByName = (i) => new Proxy({}, { get: (_, name) => (typeof name === 'string' ? { get json() { return __pairedOf(name, i).json; } } : undefined) });
const $items = (name) => __nodeItems(name);`;
