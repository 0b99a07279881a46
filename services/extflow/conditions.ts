/**
 * The external tool's condition lists (If, Filter and Switch rules) as one JSONata boolean
 * expression. Version 2 conditions: `{ conditions: [{ leftValue, rightValue, operator: { type,
 * operation } }], combinator, options: { caseSensitive } }`; version 1: `{ string: [...],
 * number: [...], boolean: [...] }` with `combineOperation`.
 */
import { toJsonata, type ExpressionScope } from './expressions';
import { Unsupported } from './types';

interface V2Condition {
  leftValue?: unknown;
  rightValue?: unknown;
  operator?: { type?: string; operation?: string };
}

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function literalAs(value: unknown, type: string): unknown {
  if (typeof value === 'string' && !value.startsWith('=')) {
    if (type === 'number' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
    if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  }
  return value;
}

function operation(type: string, op: string, l: string, r: () => string, caseSensitive: boolean): string {
  const s = (x: string) => (caseSensitive ? x : `$lowercase(${x})`);
  const exists = `($exists(${l}) and ${l} != null)`;
  const empty = `($not($exists(${l})) or ${l} = null or ${l} = "")`;
  if (op === 'exists') return exists;
  if (op === 'notExists') return `$not${exists}`;
  // A number or a boolean has no empty value of its own: empty is missing or null.
  if ((type === 'number' || type === 'boolean') && op === 'empty') return `($not($exists(${l})) or ${l} = null)`;
  if ((type === 'number' || type === 'boolean') && op === 'notEmpty') return exists;
  switch (type) {
    case 'string':
      switch (op) {
        case 'equals':
          return `(${s(l)} = ${s(r())})`;
        case 'notEquals':
          return `(${s(l)} != ${s(r())})`;
        case 'contains':
          return `$contains(${s(l)}, ${s(r())})`;
        case 'notContains':
          return `$not($contains(${s(l)}, ${s(r())}))`;
        case 'startsWith':
          return `($substring(${s(l)}, 0, $length(${s(r())})) = ${s(r())})`;
        case 'notStartsWith':
          return `($substring(${s(l)}, 0, $length(${s(r())})) != ${s(r())})`;
        case 'endsWith':
          return `($length(${s(r())}) = 0 or $substring(${s(l)}, -$length(${s(r())})) = ${s(r())})`;
        case 'notEndsWith':
          return `$not($length(${s(r())}) = 0 or $substring(${s(l)}, -$length(${s(r())})) = ${s(r())})`;
        case 'empty':
          return empty;
        case 'notEmpty':
          return `$not${empty}`;
      }
      break;
    case 'number':
      switch (op) {
        case 'equals':
          return `(${l} = ${r()})`;
        case 'notEquals':
          return `(${l} != ${r()})`;
        case 'gt':
          return `(${l} > ${r()})`;
        case 'lt':
          return `(${l} < ${r()})`;
        case 'gte':
          return `(${l} >= ${r()})`;
        case 'lte':
          return `(${l} <= ${r()})`;
      }
      break;
    case 'boolean':
      switch (op) {
        case 'true':
          return `(${l} = true)`;
        case 'false':
          return `(${l} = false)`;
        case 'equals':
          return `(${l} = ${r()})`;
        case 'notEquals':
          return `(${l} != ${r()})`;
      }
      break;
    case 'array':
      switch (op) {
        case 'contains':
          return `(${r()} in ${l})`;
        case 'notContains':
          return `$not(${r()} in ${l})`;
        case 'lengthEquals':
          return `($count(${l}) = ${r()})`;
        case 'lengthNotEquals':
          return `($count(${l}) != ${r()})`;
        case 'lengthGt':
          return `($count(${l}) > ${r()})`;
        case 'lengthLt':
          return `($count(${l}) < ${r()})`;
        case 'lengthGte':
          return `($count(${l}) >= ${r()})`;
        case 'lengthLte':
          return `($count(${l}) <= ${r()})`;
        case 'empty':
          return `($count(${l}) = 0)`;
        case 'notEmpty':
          return `($count(${l}) > 0)`;
      }
      break;
    case 'object':
      if (op === 'empty') return `($count($keys(${l})) = 0)`;
      if (op === 'notEmpty') return `($count($keys(${l})) > 0)`;
      break;
  }
  throw new Unsupported(
    `condition operator ${type}.${op} has no translation`,
    'Re-create this condition as a JSONata expression on the imported node.',
  );
}

/** Version 2 condition block (If v2, Filter v2, Switch v3 rules). */
function v2(block: Record<string, unknown>, scope: ExpressionScope, ignoreCase = false): string {
  const list = Array.isArray(block.conditions) ? (block.conditions as V2Condition[]) : [];
  if (list.length === 0) throw new Unsupported('the node has no conditions', 'Add a condition.');
  const options = isRecord(block.options) ? block.options : {};
  const caseSensitive = options.caseSensitive !== false && !ignoreCase;
  const parts = list.map((c) => {
    const type = c.operator?.type ?? 'string';
    const op = c.operator?.operation ?? 'equals';
    const l = toJsonata(literalAs(c.leftValue ?? '', type), scope);
    return operation(type, op, l, () => toJsonata(literalAs(c.rightValue ?? '', type), scope), caseSensitive);
  });
  const joiner = block.combinator === 'or' ? ' or ' : ' and ';
  return parts.length === 1 && parts[0] !== undefined ? parts[0] : `(${parts.join(joiner)})`;
}

const V1_OPS: Record<string, Record<string, string>> = {
  string: {
    equal: 'equals',
    notEqual: 'notEquals',
    contains: 'contains',
    notContains: 'notContains',
    startsWith: 'startsWith',
    notStartsWith: 'notStartsWith',
    endsWith: 'endsWith',
    notEndsWith: 'notEndsWith',
    isEmpty: 'empty',
    isNotEmpty: 'notEmpty',
  },
  number: {
    equal: 'equals',
    notEqual: 'notEquals',
    larger: 'gt',
    smaller: 'lt',
    largerEqual: 'gte',
    smallerEqual: 'lte',
    isEmpty: 'empty',
    isNotEmpty: 'notEmpty',
  },
  boolean: { equal: 'equals', notEqual: 'notEquals' },
};

/**
 * One version-1 comparison (If v1 conditions, Switch v1 and v2 rules): `value1 <operation>
 * value2` of a type (boolean, number, string), case-sensitive as in the external tool.
 */
export function v1Comparison(type: string, operationName: unknown, value1: unknown, value2: unknown, scope: ExpressionScope): string {
  const opName = typeof operationName === 'string' ? operationName : 'equal';
  const op = V1_OPS[type]?.[opName];
  if (!op)
    throw new Unsupported(
      `condition operator ${type}.${opName} has no translation`,
      'Re-create this condition as a JSONata expression on the imported node.',
    );
  const defaults: Record<string, unknown> = { boolean: false, number: 0, string: '' };
  const l = toJsonata(literalAs(value1 ?? defaults[type], type), scope);
  return operation(type, op, l, () => toJsonata(literalAs(value2 ?? defaults[type], type), scope), true);
}

/** Version 1 (If v1): typed lists of `{ value1, operation, value2 }`. */
function v1(params: Record<string, unknown>, scope: ExpressionScope): string {
  const block = isRecord(params.conditions) ? params.conditions : {};
  const parts: string[] = [];
  for (const type of ['boolean', 'number', 'string', 'dateTime']) {
    const list = Array.isArray(block[type]) ? (block[type] as Array<Record<string, unknown>>) : [];
    for (const c of list) parts.push(v1Comparison(type, c.operation, c.value1, c.value2, scope));
  }
  if (parts.length === 0) throw new Unsupported('the node has no conditions', 'Add a condition.');
  const joiner = params.combineOperation === 'any' ? ' or ' : ' and ';
  return parts.length === 1 && parts[0] !== undefined ? parts[0] : `(${parts.join(joiner)})`;
}

/** The condition of an If or Filter node's parameters (either version). */
export function conditionOf(params: Record<string, unknown>, typeVersion: number, scope: ExpressionScope): string {
  const block = params.conditions;
  const ignoreCase = isRecord(params.options) && params.options.ignoreCase === true;
  if (isRecord(block) && Array.isArray(block.conditions)) return v2(block, scope, ignoreCase);
  if (typeVersion < 2) return v1(params, scope);
  throw new Unsupported('the node has no conditions', 'Add a condition.');
}

/** A Switch v3 rule's condition block. */
export function ruleCondition(rule: Record<string, unknown>, scope: ExpressionScope): string {
  if (!isRecord(rule.conditions)) throw new Unsupported('a rule has no conditions', 'Add a condition to every rule.');
  return v2(rule.conditions, scope);
}
