/**
 * Set / Edit Fields → transform. Manual mapping (v3.3+ `assignments`, v3.0–3.2 `fields`, v1–2
 * typed `values`) becomes a JSONata object constructor, merged over the input when other fields
 * are kept; raw mode's JSON becomes the object itself. v3+ fields of type number, boolean,
 * object or array given by an expression are converted at run time, as the external tool does:
 * a transform `<id>__fields` then a code node `<id>` (typedFieldsCode).
 */
import { jsonLiteral, toJsonata, type ExpressionScope } from '../expressions';
import { ANY_ITEMS, ITEMS_OF_INPUT } from '../itemWiring';
import { Unsupported } from '../types';
import { isRecord, ourNode, perItemScope, type Mapper } from './context';

interface Assignment {
  name: string;
  value: unknown;
  type: string;
}

function convert(value: unknown, type: string): unknown {
  if (typeof value !== 'string' || value.startsWith('=')) return value;
  if (type === 'number') {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new Unsupported(`"${value}" is not a number`, 'Fix the value or its type.');
    return n;
  }
  if (type === 'boolean') {
    if (value !== 'true' && value !== 'false') throw new Unsupported(`"${value}" is not a boolean`, 'Fix the value or its type.');
    return value === 'true';
  }
  if (type === 'array' || type === 'object') {
    try {
      return JSON.parse(value);
    } catch {
      throw new Unsupported(`the ${type} value is not valid JSON`, 'Fix the value.');
    }
  }
  return value;
}

function assignmentsOf(p: Record<string, unknown>, version: number): Assignment[] {
  if (isRecord(p.assignments) && Array.isArray(p.assignments.assignments)) {
    return (p.assignments.assignments as Array<Record<string, unknown>>).map((a) => ({
      name: String(a.name ?? ''),
      value: a.value,
      type: typeof a.type === 'string' ? a.type : 'string',
    }));
  }
  if (isRecord(p.fields) && Array.isArray(p.fields.values)) {
    return (p.fields.values as Array<Record<string, unknown>>).map((f) => {
      const type = typeof f.type === 'string' ? f.type.replace(/Value$/, '') : 'string';
      const key = `${type}Value`;
      return { name: String(f.name ?? ''), value: f[key] ?? f.stringValue, type };
    });
  }
  if (version < 3 && isRecord(p.values)) {
    const out: Assignment[] = [];
    for (const type of ['string', 'number', 'boolean']) {
      for (const v of Array.isArray(p.values[type]) ? (p.values[type] as Array<Record<string, unknown>>) : [])
        out.push({ name: String(v.name ?? ''), value: v.value, type });
    }
    return out;
  }
  return [];
}

/** Nested object constructor for dotted names (`a.b` → `{"a": {"b": …}}`). */
function objectOf(entries: Array<[string[], string]>): string {
  const groups = new Map<string, Array<[string[], string]>>();
  const leaves = new Map<string, string>();
  for (const [path, code] of entries) {
    const [head = '', ...rest] = path; // a dotted name has at least one part
    if (rest.length === 0) leaves.set(head, code);
    else {
      if (!groups.has(head)) groups.set(head, []);
      groups.get(head)!.push([rest, code]);
    }
  }
  const parts: string[] = [];
  for (const [k, code] of leaves) {
    if (groups.has(k)) throw new Unsupported(`field "${k}" is set both as a value and as an object`, 'Set it once.');
    parts.push(`${jsonLiteral(k)}: ${code}`);
  }
  for (const [k, sub] of groups) parts.push(`${jsonLiteral(k)}: ${objectOf(sub)}`);
  return `{${parts.join(', ')}}`;
}

function rawJson(p: Record<string, unknown>, scope: ExpressionScope): string {
  const text = typeof p.jsonOutput === 'string' ? p.jsonOutput : '{}';
  if (text.startsWith('=')) {
    const body = text.slice(1).trim();
    if (body.startsWith('{{') && body.endsWith('}}')) return toJsonata(text, scope);
    // The external tool renders the text, then parses it as JSON: only JavaScript can do both.
    if (body.includes('{{') && scope.js) return scope.js(text, 'json');
    if (body.includes('{{'))
      throw new Unsupported(
        'raw JSON with {{ }} placeholders inside',
        'Use manual mapping (one field per value), or rewrite it as a JSONata object.',
      );
    return rawJson({ jsonOutput: body }, scope);
  }
  try {
    return jsonLiteral(JSON.parse(text));
  } catch {
    throw new Unsupported('the raw JSON output is not valid JSON', 'Fix the JSON.');
  }
}

/** Field types whose expression results the external tool converts at run time (Set v3+). */
const RUNTIME_TYPES = new Set(['number', 'boolean', 'object', 'array']);

/**
 * The run-time half of Set v3+ typed fields: the external tool converts an expression's result
 * to the field's type (`"42"` → 42, `"true"`/`"1"` → true, a JSON text → the object or array)
 * and fails the node with `'<name>' expects a <type> but we got <value>` when it cannot (unless
 * "ignore type conversion errors" is on, which keeps the value). JSONata has no JSON parser, so
 * a code node does it on the transform's `{ input?, fields }`, then merges as the transform would.
 */
function typedFieldsCode(
  typed: Array<{ path: string[]; type: string; name: string }>,
  keepAll: boolean,
  lenient: boolean,
  perItem: boolean,
): string {
  const header = `const typed = ${JSON.stringify(typed)};\nconst lenient = ${String(lenient)};\n`;
  const footer = keepAll ? 'return Object.assign({}, input.input, fields);' : 'return fields;';
  if (!perItem) return header + TYPED_FIELDS_BODY + footer;
  // Per item: the transform gave one `{ input?, fields, binary?, pairedItem }` per item.
  return `${header}const __one = (input) => {\n${TYPED_FIELDS_BODY}${footer}\n};\nreturn input.map((e) => Object.assign({ json: __one(e) }, e.binary ? { binary: e.binary } : {}, { pairedItem: e.pairedItem }));`;
}

/** What typedFieldsCode runs between its `typed` list and its return (the external tool's rules of type conversion). */
const TYPED_FIELDS_BODY = String.raw`const describe = (v) =>
  typeof v === 'object' ? (v === null ? "'null'" : Array.isArray(v) ? 'array' : 'object') : "'" + String(v) + "'";
const parse = (text, quotes) => {
  try {
    return JSON.parse(text);
  } catch (e) {
    if (!quotes) throw e;
    return JSON.parse(text.replace(/'/g, '"'));
  }
};
const coerce = (v, type) => {
  if (type === 'number') {
    if (Number.isNaN(Number(v))) throw new Error('not a number');
    return Number(v);
  }
  if (type === 'boolean') {
    if (typeof v === 'boolean') return v;
    if (typeof v === 'string' && ['true', 'false'].includes(v.toLowerCase())) return v.toLowerCase() === 'true';
    if (!(typeof v === 'string' && v.trim() === '')) {
      const n = Number(v);
      if (n === 0) return false;
      if (n === 1) return true;
    }
    throw new Error('not a boolean');
  }
  if (type === 'object') {
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
    const o = parse(String(v), false);
    if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new Error('not an object');
    return o;
  }
  if (Array.isArray(v)) return v;
  const a = parse(String(v), true);
  if (!Array.isArray(a)) throw new Error('not an array');
  return a;
};
const fields = input.fields;
for (const { path, type, name } of typed) {
  let parent = fields;
  for (const k of path.slice(0, -1)) parent = parent[k];
  const key = path[path.length - 1];
  const value = parent[key];
  if (value === null || value === undefined) continue;
  try {
    parent[key] = coerce(value, type);
  } catch {
    if (!lenient) throw new Error("'" + name + "' expects a " + type + ' but we got ' + describe(value));
  }
}
`;

/**
 * The input fields a Set keeps, as JSONata over `input` (null: none). v1–v2: all unless "keep
 * only set"; v3.0–3.2: `include` (default none); v3.3+: `include` (default all) when "include
 * other fields" is on, else none. "selected" / "except" name top-level fields.
 */
function keptFields(p: Record<string, unknown>, version: number, input: string): string | null {
  if (version < 3) return p.keepOnlySet === true ? null : input;
  const given = typeof p.include === 'string' ? p.include : undefined;
  const include = version >= 3.3 ? (p.includeOtherFields === true ? (given ?? 'all') : 'none') : (given ?? 'none');
  if (include === 'none') return null;
  if (include === 'all') return input;
  if (include !== 'selected' && include !== 'except') throw new Unsupported(`including input fields by "${include}"`, 'Keep all or none.');
  const text = include === 'selected' ? p.includeFields : p.excludeFields;
  const names = (typeof text === 'string' ? text : '')
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  if (names.some((n) => n.includes('.') || n.startsWith('=')))
    throw new Unsupported('keeping or dropping input fields by dotted name or expression', 'Name top-level fields literally.');
  const test = `$k in ${jsonLiteral(names)}`;
  return `$sift(${input}, function($v, $k) { ${include === 'selected' ? test : `$not(${test})`} })`;
}

export const setNode: Mapper = (ctx) => {
  const p = ctx.params;
  const options = isRecord(p.options) ? p.options : {};
  const scope = ctx.perItem ? perItemScope(ctx) : ctx.scope;
  let object: string;
  const typed: Array<{ path: string[]; type: string; name: string }> = [];
  if (p.mode === 'raw') object = rawJson(p, scope);
  else {
    const dotNotation = options.dotNotation !== false;
    const entries = assignmentsOf(p, ctx.version).map((a): [string[], string] => {
      if (!a.name) throw new Unsupported('a field without a name', 'Name the field.');
      const path = dotNotation ? a.name.split('.') : [a.name];
      if (ctx.version >= 3 && RUNTIME_TYPES.has(a.type) && typeof a.value === 'string' && a.value.startsWith('='))
        typed.push({ path, type: a.type, name: a.name });
      return [path, toJsonata(convert(a.value, a.type), scope)];
    });
    object = objectOf(entries);
    if (entries.some(([path]) => path.length > 1)) scope.note?.('dotted field names build nested objects');
  }
  const kept = keptFields(p, ctx.version, ctx.perItem ? '$input' : '$');
  const keepAll = kept !== null;
  if (keepAll && /\{"[^"]*": \{/.test(object))
    ctx.warn("Kept input fields are merged at the top level: a nested object set here replaces the input's object of that name.");
  if (ctx.perItem) {
    // Each item of the list: its fields set with `$input` bound to the item's JSON.
    const binary = keepAll ? `$exists($__it.binary) ? {"binary": $__it.binary} : {}, ` : '';
    const json =
      typed.length > 0
        ? keepAll
          ? `{"input": ${kept}, "fields": ${object}}`
          : `{"fields": ${object}}`
        : keepAll
          ? `$merge([${kept}, ${object}])`
          : object;
    const each =
      typed.length > 0
        ? `$merge([($input := $__it.json; ${json}), ${binary}{"pairedItem": $__it.pairedItem}])`
        : `$merge([{"json": ($input := $__it.json; ${json})}, ${binary}{"pairedItem": $__it.pairedItem}])`;
    const expression = `[${ITEMS_OF_INPUT} ~> $map(function($__it) { ${each} })]`;
    // The external tool does not run a node that receives no items: nor does anything after it run.
    const guard = ourNode(ctx, `${ctx.id}__any`, 'condition', { expression: ANY_ITEMS }, 1);
    if (typed.length === 0)
      return {
        nodes: [guard, ourNode(ctx, ctx.id, 'transform', { expression })],
        edges: [{ source: guard.id, target: ctx.id, handle: 'true' }],
        items: 'same',
      };
    const source = typedFieldsCode(typed, keepAll, options.ignoreConversionErrors === true, true);
    const fieldsId = `${ctx.id}__fields`;
    return {
      nodes: [guard, ourNode(ctx, fieldsId, 'transform', { expression }, 1), ourNode(ctx, ctx.id, 'code', { source })],
      edges: [
        { source: guard.id, target: fieldsId, handle: 'true' },
        { source: fieldsId, target: ctx.id },
      ],
      items: 'same',
    };
  }
  if (typed.length > 0) {
    // Typed fields given by expressions: the transform computes them, a code node converts them to their types.
    const fieldsId = `${ctx.id}__fields`;
    const source = typedFieldsCode(typed, keepAll, options.ignoreConversionErrors === true, false);
    return {
      nodes: [
        ourNode(
          ctx,
          fieldsId,
          'transform',
          { expression: keepAll ? `{"input": ${kept}, "fields": ${object}}` : `{"fields": ${object}}` },
          1,
        ),
        ourNode(ctx, ctx.id, 'code', { source }),
      ],
    };
  }
  const expression = keepAll ? `$merge([${kept}, ${object}])` : object;
  return { nodes: [ourNode(ctx, ctx.id, 'transform', { expression })] };
};
