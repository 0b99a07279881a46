/**
 * Code (JavaScript) and the older Function / Function Item nodes → code. The source runs inside
 * a prelude that gives it the idioms of the external tool over our one-value-per-connection
 * data: `$input.all()`, `$input.first()`, `$input.item`, `$json`, `items`, `item`; its returned
 * items are unwrapped (`[{ json }]` → the json; several items → an array of their json).
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

function prelude(forEachItem: boolean): string {
  return [
    'const __item = { json: input };',
    'const $input = { all: () => [__item], first: () => __item, last: () => __item, item: __item };',
    'const $json = input;',
    'const items = [__item];',
    'const item = input;',
    forEachItem ? '// mode: run once for each item' : '// mode: run once for all items',
    'const __out = await (async () => {',
  ].join('\n');
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
  return { nodes: [ourNode(ctx, ctx.id, 'code', { source: `${prelude(forEach)}\n${source}\n${POSTLUDE}` })] };
};
