/**
 * Expressions of the external tool that have no exact JSONata translation, evaluated as
 * JavaScript. Our workflow code is deterministic and runs JSONata only, so JavaScript runs in
 * the code sandbox, as a code step: every such expression of one exported node is collected
 * into one batch (`JsBatch`), and the node's mapping is preceded by three nodes of ours:
 *
 *   `<id>__ctx` (transform)  the node's input, the outputs of the nodes its expressions name
 *                            (`$('X')`, `$node["X"]`, `$items("X")`) and the static context;
 *   `<id>__js`  (code)       the runtime of services/extflow/jsRuntime.ts (by its directive,
 *                            expanded where code runs), then every expression of the batch:
 *                            `{ input, values: { e0, e1, … } }`;
 *   `<id>__in`  (transform)  the input again (`$.input`), so the node sees what it would have.
 *
 * The node's own config reads each value as `$nodes.<id>__js.values.eN`. A node with twenty
 * JavaScript fields therefore costs one code step (one activity, one credit) per run, and the
 * conversion report says so on the node. The code step runs under the sandbox's limits (time,
 * memory, output size), like any code node.
 */
import { fieldStep, jsonLiteral, nodeRef, splitTemplate } from './expressions';
import { JS_GLOBAL_NAMES, JS_RUNTIME_DIRECTIVE } from './jsRuntime';
import { Unsupported } from './types';
import type { GraphNode } from '../../engine/types';

/** How one value is wanted: as it is, as a boolean (a condition), or parsed as JSON text (raw-mode Set). */
export type JsMode = 'value' | 'boolean' | 'json';

interface JsField {
  key: string;
  template: string;
  mode: JsMode;
}

/** The largest code source we generate: what the code node allows. */
const MAX_SOURCE_CHARS = 100_000;

/** What a referenced node name looks like in an expression, and computed references we cannot resolve before the run. */
const NAMED_REFERENCES = [
  /\$\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1\s*\)/g,
  /\$node\s*\[\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1\s*\]/g,
  /\$items\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g,
];
const COMPUTED_REFERENCES = /\$\(\s*[^'"`\s)]|\$node\s*\[\s*[^'"`\s]|\$items\(\s*[^'"`\s)]/;
const DOTTED_NODE = /\$node\.([A-Za-z_$][\w$]*)/g;

/** Globals that exist in the external tool but have no meaning here: named in the report, refused when evaluated. */
const REFUSED: Array<[RegExp, string]> = [
  [/\$env\b/, '$env is refused: expressions cannot read environment variables here. Store the value as a credential or pass it as input.'],
  [/\$vars\b/, '$vars (variables) has no equivalent here: pass the value as input or store it as a credential.'],
  [/\$secrets\b/, '$secrets has no equivalent here: use a credential.'],
  [/\$execution\b/, '$execution (the execution id and resume URL) is not available in expressions here yet.'],
];

/** The node names an expression reads, or Unsupported when a name is computed. */
export function referencedNodes(src: string): string[] {
  if (COMPUTED_REFERENCES.test(src))
    throw new Unsupported(
      `expression ${short(src)} names a node by a computed value`,
      "Name the node with a literal, as in $('Node name').",
    );
  const names = new Set<string>();
  for (const re of NAMED_REFERENCES) for (const m of src.matchAll(re)) names.add(unquote(m[2] ?? ''));
  for (const m of src.matchAll(DOTTED_NODE)) names.add(m[1] ?? '');
  return [...names];
}

function unquote(text: string): string {
  return text.replace(/\\(.)/g, '$1');
}

const short = (src: string) => `{{ ${src.trim().slice(0, 200)} }}`;

/**
 * Checks that a hole is one JavaScript expression, as the external tool requires, without
 * running it. The parse happens on this process's engine (V8), whose grammar is a superset of
 * the sandbox's: a rare construct may pass here and fail as a syntax error in the run.
 */
function checkSyntax(src: string): void {
  try {
    // Parsed only: the function is never called.
    new Function(...JS_GLOBAL_NAMES, `return (${src}\n);`);
  } catch (err) {
    if (err instanceof RangeError)
      throw new Unsupported(`expression ${short(src)} is nested too deeply to parse`, 'Simplify the expression.');
    throw new Unsupported(`expression ${short(src)} is not a JavaScript expression (${(err as Error).message})`, 'Fix the expression.');
  }
}

/**
 * The JavaScript computing one field: its template's holes, joined as the external tool renders
 * text. An error names the expression, except the engine's own (out of memory, stack overflow),
 * which pass through so the sandbox reports them as its limits.
 */
function fieldCode(field: JsField): string {
  const segments = splitTemplate(field.template.slice(1));
  const hole = (js: string) => `(function (${JS_GLOBAL_NAMES.join(', ')}) { return (${js}\n); }).apply(null, __args)`;
  const [only] = segments;
  let value: string;
  if (segments.length === 1 && only && 'js' in only) value = hole(only.js);
  else value = segments.map((s) => ('lit' in s ? JSON.stringify(s.lit) : `__rt.text(${hole(s.js)})`)).join(' + ') || '""';
  if (field.mode === 'boolean') value = `!!(${value})`;
  if (field.mode === 'json') value = `__json(${value})`;
  const label = JSON.stringify(`Expression ${field.template.slice(1).trim().slice(0, 300)} failed: `);
  return `try { __v[${JSON.stringify(field.key)}] = __rt.out(${value}); } catch (e) { if (e && e.name === 'InternalError') throw e; throw new Error(${label} + (e && e.message !== undefined ? e.message : String(e))); }`;
}

/** What the mapping of one exported node collects while its expressions are converted. */
export class JsBatch {
  private readonly fields: JsField[] = [];
  private readonly names = new Set<string>();
  private readonly refused = new Set<string>();

  constructor(
    /** Our id of the exported node's output. */
    private readonly id: string,
    private readonly idOf: (name: string) => string | undefined,
  ) {}

  get size(): number {
    return this.fields.length;
  }

  /** Messages of refused globals the node's expressions use (the workflow is not ready). */
  get refusals(): string[] {
    return [...this.refused];
  }

  /** Registers a `=…{{ js }}…` template and answers the JSONata that reads its value in the run. */
  add(template: string, mode: JsMode): string {
    for (const segment of splitTemplate(template.slice(1))) {
      if (!('js' in segment)) continue;
      checkSyntax(segment.js);
      for (const name of referencedNodes(segment.js)) {
        if (!this.idOf(name))
          throw new Unsupported(
            `expression ${short(segment.js)} references node "${name}", which is not in the workflow`,
            'Fix the node name in the expression.',
          );
        this.names.add(name);
      }
      for (const [re, message] of REFUSED) if (re.test(segment.js)) this.refused.add(message);
    }
    const existing = this.fields.find((f) => f.template === template && f.mode === mode);
    const key = existing?.key ?? `e${this.fields.length}`;
    if (!existing) this.fields.push({ key, template, mode });
    return `${nodeRef(`${this.id}__js`)}.values.${fieldStep(key)}`;
  }

  /**
   * The three nodes that come before the node's own (see the module comment). `context` is
   * what the runtime reads besides the input: the previous node's name and the workflow.
   */
  nodes(context: { prevNode: string | undefined; workflow: { id: string | null; name: string } }, name: string): GraphNode[] {
    const nodesObject = [...this.names].map((n) => `${jsonLiteral(n)}: ${nodeRef(this.idOf(n)!)}`).join(', ');
    const known = Object.fromEntries([...this.names].map((n) => [n, true]));
    const ctxExpression = `{"input": $, "nodes": {${nodesObject}}, "known": ${jsonLiteral(known)}, "prevNode": ${jsonLiteral(context.prevNode ?? null)}, "workflow": ${jsonLiteral(context.workflow)}}`;
    const source = [
      JS_RUNTIME_DIRECTIVE,
      'const __g = __rt.globals(input);',
      `const __args = [${JS_GLOBAL_NAMES.map((n) => `__g[${JSON.stringify(n)}]`).join(', ')}];`,
      'const __json = (text) => { try { return JSON.parse(text); } catch (e) { throw new Error("the JSON output is not valid JSON (" + e.message + ")"); } };',
      'const __v = {};',
      ...this.fields.map(fieldCode),
      'return { input: input.input, values: __v };',
    ].join('\n');
    if (source.length > MAX_SOURCE_CHARS)
      throw new Unsupported(
        `the node's JavaScript expressions take ${source.length} characters, more than fit in one code step`,
        'Move the logic into a code node.',
      );
    return [
      { id: `${this.id}__ctx`, type: 'transform', name: `${name} (expression context)`, config: { expression: ctxExpression } },
      { id: `${this.id}__js`, type: 'code', name: `${name} (JavaScript expressions)`, config: { source } },
      { id: `${this.id}__in`, type: 'transform', name: `${name} (input)`, config: { expression: '$.input' } },
    ];
  }
}
