/**
 * Set / Edit Fields → transform. Manual mapping (v3.3+ `assignments`, v3.0–3.2 `fields`, v1–2
 * typed `values`) becomes a JSONata object constructor, merged over the input when other fields
 * are kept; raw mode's JSON becomes the object itself.
 */
import { jsonLiteral, toJsonata, type ExpressionScope } from '../expressions';
import { Unsupported } from '../types';
import { isRecord, ourNode, type Mapper } from './context';

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

export const setNode: Mapper = (ctx) => {
  const p = ctx.params;
  const options = isRecord(p.options) ? p.options : {};
  let object: string;
  if (p.mode === 'raw') object = rawJson(p, ctx.scope);
  else {
    const dotNotation = options.dotNotation !== false;
    const entries = assignmentsOf(p, ctx.version).map((a): [string[], string] => {
      if (!a.name) throw new Unsupported('a field without a name', 'Name the field.');
      const path = dotNotation ? a.name.split('.') : [a.name];
      return [path, toJsonata(convert(a.value, a.type), ctx.scope)];
    });
    object = objectOf(entries);
    if (entries.some(([path]) => path.length > 1)) ctx.scope.note?.('dotted field names build nested objects');
  }
  const include = typeof p.include === 'string' ? p.include : 'all';
  if (ctx.version >= 3 && p.includeOtherFields === true && include !== 'all') {
    throw new Unsupported('keeping only selected input fields', 'Keep all or none, or pick fields in a transform expression.');
  }
  const keepAll = ctx.version >= 3 ? p.includeOtherFields === true : p.keepOnlySet !== true;
  const expression = keepAll ? `$merge([$, ${object}])` : object;
  if (keepAll && /\{"[^"]*": \{/.test(object))
    ctx.warn("Kept input fields are merged at the top level: a nested object set here replaces the input's object of that name.");
  return { nodes: [ourNode(ctx, ctx.id, 'transform', { expression })] };
};
