/**
 * Work accounting for JSONata's built-in functions, shared by JSONata's evaluator (through the
 * wrappers in expressions.ts) and the synchronous evaluator (syncExpressions.ts), so both paths
 * stop at the same point.
 *
 * Why: the step budget counts AST node visits, but one visit of `$sort(...)`, `$string(...)` or
 * `$replace(...)` can do unbounded work inside JSONata's native code (`$sort` of 100 000 numbers
 * ran out of heap, `$distinct` of 60 000 took 17 s, a million regex matches 12 s, all in one
 * step), and a cheap-looking call repeated by a path (`[1..5000].$length($$.big)`) multiplies it.
 * So every built-in function charges its work to the same budget: WORK_PER_STEP units (items
 * visited, characters scanned, comparisons made) cost one step, charged before the work is done.
 * Each call of a function argument (`$map`, `$sort` with a comparator, …) and each regex match
 * costs one full step: JSONata awaits it, and a Promise is what a step costs in the workflow
 * sandbox.
 *
 * Pure code: no I/O, no clock, no randomness.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSONata values are untyped */

/** Units of native work (items, characters, comparisons) that cost one evaluation step. */
export const WORK_PER_STEP = 1000;

/**
 * Evaluation steps done by this module instance (inside Temporal's workflow sandbox: by this
 * run), counted by both evaluators and by the interpreter's output checks. Only differences are
 * read: a run ends its workflow activation after a slice of work (EvaluationOptions.slice).
 */
export const WORK_METER = { steps: 0 };
/** Lambda signatures: at most this many parameters… */
export const MAX_SIGNATURE_PARAMS = 10;
/** …and this many `+` (one or more) parameters, so their native RegExp cannot backtrack for ever. */
export const MAX_SIGNATURE_PLUS = 1;
/** Largest width modifier (`[Y,1000]`) in a date/time or integer picture. */
export const MAX_PICTURE_WIDTH = 1000;

/** Error code of a lambda signature refused as too complex. */
export const SIGNATURE_CODE = 'SIGNATURE';

/**
 * Approximate JSON size of values, memoized per object: JSONata does not mutate a value once a
 * step has produced it, so a value built from shared parts (`[$a, $a]`) is sized in O(1) per
 * new node although its tree size doubles. Sizes over `limit` are stored as limit + 1 (the memo
 * is valid for one limit only: every caller passes EXPRESSION_LIMITS.maxValueBytes).
 */
const sizes = new WeakMap<object, number>();

export function jsonSize(value: unknown, limit: number, depth = 0): number {
  if (value === null || value === undefined) return 4;
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'object':
      break;
    default:
      return 8;
  }
  const obj = value;
  // JSONata functions (lambdas, partial applications) carry their environment: not data.
  if ('_jsonata_lambda' in obj || '_jsonata_function' in obj) return 8;
  const known = sizes.get(obj);
  if (known !== undefined) return known;
  let total = 2;
  if (depth > 500) total = limit + 1;
  else if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length && total <= limit; i++) total += 1 + jsonSize(obj[i], limit, depth + 1);
  } else {
    for (const key in obj) {
      if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
      total += key.length + 4 + jsonSize((obj as Record<string, unknown>)[key], limit, depth + 1);
      if (total > limit) break;
    }
  }
  if (total > limit) total = limit + 1;
  sizes.set(obj, total);
  return total;
}

const len = (v: unknown): number => (typeof v === 'string' || Array.isArray(v) ? v.length : 0);
const keyCount = (v: unknown): number => (v !== null && typeof v === 'object' ? Object.keys(v).length : 0);
/** Keys of an object, or of every item of an array: what `$keys`, `$spread` and `$merge` visit. */
const keysVisited = (v: unknown): number => (Array.isArray(v) ? v.reduce((n: number, item) => n + 1 + keyCount(item), 0) : keyCount(v));
/** One full step per call of a function argument. */
const perCall = (n: number) => n * WORK_PER_STEP;

/**
 * Work units a built-in function call costs before it runs, from its validated arguments (the
 * same on both evaluation paths). `deep` is jsonSize bound to the value limit. Functions not
 * listed cost nothing beyond their step (constant work: `$count`, `$exists`, `$floor`, …).
 * Regex matches are charged as they happen (see chargeMatch), not here.
 */
export function nativeCost(name: string, args: readonly unknown[], deep: (v: unknown) => number): number {
  const [a, b, c] = args;
  switch (name) {
    case 'sum':
    case 'max':
    case 'min':
    case 'average':
    case 'reverse':
    case 'shuffle':
    case 'boolean':
    case 'not':
    case 'lookup':
      return len(a);
    case 'append':
      return len(a) + len(b);
    case 'zip':
      return args.reduce((n: number, arg) => n + len(arg), 0);
    case 'keys':
    case 'spread':
    case 'merge':
      return keysVisited(a);
    case 'string':
    case 'clone':
    case 'distinct':
      return deep(a);
    case 'join':
      return deep(a) + len(b);
    case 'substring':
    case 'lowercase':
    case 'uppercase':
    case 'length':
    case 'trim':
    case 'number':
    case 'base64encode':
    case 'base64decode':
    case 'encodeUrlComponent':
    case 'encodeUrl':
    case 'decodeUrlComponent':
    case 'decodeUrl':
    case 'eval':
      return len(a);
    case 'substringBefore':
    case 'substringAfter':
    case 'contains':
    case 'split':
    case 'match':
    case 'toMillis':
    case 'parseInteger':
      return len(a) + len(b);
    case 'replace':
      return len(a) + len(b) + len(c);
    case 'pad':
      return len(a) + Math.min(Math.abs(Number(b)) || 0, Number.MAX_SAFE_INTEGER);
    case 'formatNumber':
    case 'formatInteger':
    case 'fromMillis':
      return len(b) + 64;
    case 'formatBase':
      return 64;
    case 'map':
    case 'filter':
    case 'single':
    case 'reduce':
      return perCall(len(a));
    case 'each':
    case 'sift':
      return perCall(keyCount(a));
    case 'sort': {
      const n = len(a);
      const comparisons = n <= 1 ? 0 : n * Math.ceil(Math.log2(n));
      return typeof b === 'undefined' ? comparisons : perCall(comparisons);
    }
    default:
      return 0;
  }
}

/**
 * How a node's value is charged: an operand of deep equality (`=`, `!=`), the list `in` scans,
 * or the result of a wildcard (`*`, `**`), which walked the input to collect it.
 */
export type OperandKind = 'deep' | 'items' | 'nodes';

/** Work units per value a wildcard collects (measured: ~3 µs per node for `**` in plain Node). */
const WILDCARD_UNITS_PER_NODE = 20;

/** What the step-budget message names for each kind. */
export const OPERAND_WHAT: Record<OperandKind, string> = {
  deep: "'=' or '!=' of large values",
  items: "'in' over a long array",
  nodes: "'*' or '**' over large values",
};

/**
 * The operand nodes of `=`, `!=` (compared deeply, in time proportional to their size), the
 * right operand of `in` (scanned item by item) and wildcard nodes in a JSONata AST. Operators
 * call no function, so their work is charged when the value is known: both evaluators report
 * every node's value right after evaluating it (JSONata's exit hook, the synchronous evaluator's
 * checkValue), before the operator runs. (Wildcards are JSONata's only: charged after the walk,
 * which one step bounds by the size limits.)
 */
export function comparisonOperands(ast: unknown): WeakMap<object, OperandKind> {
  const operands = new WeakMap<object, OperandKind>();
  const seen = new Set<object>();
  const walk = (node: unknown, depth: number) => {
    if (node === null || typeof node !== 'object' || seen.has(node) || depth > 10_000) return;
    seen.add(node);
    const n = node as Record<string, any>;
    if (!Array.isArray(node) && n.type === 'binary') {
      if ((n.value === '=' || n.value === '!=') && n.lhs && n.rhs) {
        operands.set(n.lhs, 'deep');
        operands.set(n.rhs, 'deep');
      } else if (n.value === 'in' && n.rhs) operands.set(n.rhs, 'items');
    }
    if (!Array.isArray(node) && (n.type === 'wildcard' || n.type === 'descendant')) operands.set(n, 'nodes');
    for (const value of Array.isArray(node) ? node : Object.values(n)) walk(value, depth + 1);
  };
  walk(ast, 0);
  return operands;
}

/** Work units of an operand's value (see comparisonOperands). */
export function operandCost(kind: OperandKind, value: unknown, deep: (v: unknown) => number): number {
  if (kind === 'items') return Array.isArray(value) ? value.length : 0;
  // A wildcard recurses and pushes into a checked sequence per node: ~20 times a simple operation.
  if (kind === 'nodes') return Array.isArray(value) ? WILDCARD_UNITS_PER_NODE * value.length : 0;
  return value !== null && typeof value === 'object' ? deep(value) : 0;
}

/** Work units of one regex match attempt: a full step (JSONata awaits each) plus the characters scanned. */
export const chargeMatch = (scanned: number) => WORK_PER_STEP + scanned;

/**
 * Refuses picture width modifiers over MAX_PICTURE_WIDTH (`[Y,100000000]` allocates that many
 * characters before any size check can see the result). Returns the offending width or null.
 */
export function excessivePictureWidth(picture: unknown): number | null {
  if (typeof picture !== 'string') return null;
  const markers = picture.match(/\[[^\]]*\]/g) ?? [];
  for (const marker of markers) {
    const comma = marker.lastIndexOf(',');
    if (comma < 0) continue;
    for (const digits of marker.slice(comma).match(/[0-9]+/g) ?? []) {
      if (digits.length > 6 || Number(digits) > MAX_PICTURE_WIDTH) return Number(digits);
    }
  }
  return null;
}

// ---- Lambda signatures ----

/**
 * Why a lambda signature is refused, or null. JSONata compiles a signature to a native RegExp
 * (one group per parameter, `+` and `?` as quantifiers) and runs it on every call against the
 * argument types: two `+` parameters backtrack polynomially, many `?` exponentially
 * (`<n+n+n+…:n>` took 56 s). Signatures within the limits match in microseconds.
 */
export function signatureProblem(definition: string): string | null {
  let params = 0;
  let plus = 0;
  for (let i = 1; i < definition.length; i++) {
    const c = definition.charAt(i);
    if (c === ':') break;
    if (c === '(' || c === '<') {
      const close = c === '(' ? ')' : '>';
      let depth = 1;
      while (depth > 0 && ++i < definition.length) {
        if (definition.charAt(i) === c) depth++;
        else if (definition.charAt(i) === close) depth--;
      }
      if (c === '(') params++;
    } else if (c === '+') plus++;
    else if ('snblaofjx'.includes(c)) params++;
  }
  if (params > MAX_SIGNATURE_PARAMS || plus > MAX_SIGNATURE_PLUS) {
    return `Function signature ${definition} is too complex: at most ${MAX_SIGNATURE_PARAMS} parameters and ${MAX_SIGNATURE_PLUS} '+' parameter`;
  }
  return null;
}

/** The first refused lambda signature in a JSONata AST (see signatureProblem), or null. */
export function findSignatureProblem(ast: unknown, depth = 0): { message: string; position?: number } | null {
  if (ast === null || typeof ast !== 'object' || depth > 10_000) return null;
  if (Array.isArray(ast)) {
    for (const item of ast) {
      const found = findSignatureProblem(item, depth + 1);
      if (found) return found;
    }
    return null;
  }
  const node = ast as Record<string, any>;
  const definition = node.signature?.definition;
  if (typeof definition === 'string') {
    const message = signatureProblem(definition);
    if (message) return { message, position: typeof node.position === 'number' ? node.position : undefined };
  }
  for (const key of Object.keys(node)) {
    if (key === 'signature' || typeof node[key] !== 'object') continue;
    const found = findSignatureProblem(node[key], depth + 1);
    if (found) return found;
  }
  return null;
}

// ---- Bounded implementations (JSONata 2.2.2's results, without its super-linear costs) ----

function isNumeric(n: unknown): boolean {
  if (typeof n !== 'number') return false;
  if (!isNaN(n) && !isFinite(n)) throw { code: 'D1001', value: n, stack: new Error().stack };
  return !isNaN(n);
}

/** JSONata's `isDeepEqual` (utils.js), ported: the equality of `=`, `!=` and `$distinct`. */
export function isDeepEqual(lhs: any, rhs: any): boolean {
  if (lhs === rhs) return true;
  if (typeof lhs === 'object' && typeof rhs === 'object' && lhs !== null && rhs !== null) {
    if (Array.isArray(lhs) && Array.isArray(rhs)) {
      if (lhs.length !== rhs.length) return false;
      for (let ii = 0; ii < lhs.length; ii++) if (!isDeepEqual(lhs[ii], rhs[ii])) return false;
      return true;
    }
    const lkeys = Object.getOwnPropertyNames(lhs).sort();
    const rkeys = Object.getOwnPropertyNames(rhs).sort();
    if (lkeys.length !== rkeys.length) return false;
    for (let ii = 0; ii < lkeys.length; ii++) if (lkeys[ii] !== rkeys[ii]) return false;
    for (const key of lkeys) if (!isDeepEqual(lhs[key], rhs[key])) return false;
    return true;
  }
  return false;
}

/**
 * A string equal for two values exactly when JSONata's isDeepEqual says they are equal, or null
 * for values this cannot promise that for (functions, NaN, objects with an own `length`, which
 * JSONata may find equal to an array, and very deep values): those are compared one by one.
 */
function canonicalKey(value: unknown, depth = 0): string | null {
  if (depth > 200) return null;
  switch (typeof value) {
    case 'undefined':
      return 'u';
    case 'boolean':
      return value ? 't' : 'f';
    case 'number':
      return Number.isNaN(value) ? null : `n${value === 0 ? 0 : value}`;
    case 'string':
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      return null;
  }
  if (value === null) return 'z';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const key = canonicalKey(value[i], depth + 1);
      if (key === null) return null;
      out += (i > 0 ? ',' : '') + key;
    }
    return out + ']';
  }
  const obj = value as Record<string, unknown>;
  if ('_jsonata_lambda' in obj || '_jsonata_function' in obj) return null;
  const names = Object.getOwnPropertyNames(obj);
  if (names.includes('length')) return null;
  names.sort();
  let out = '{';
  for (const [i, name] of names.entries()) {
    const key = canonicalKey(obj[name], depth + 1);
    if (key === null) return null;
    out += (i > 0 ? ',' : '') + JSON.stringify(name) + ':' + key;
  }
  return out + '}';
}

/**
 * JSONata's `$distinct` (first occurrences, in order, compared with isDeepEqual) in linear time:
 * values are compared through canonical keys; the rare value without one is compared with every
 * kept value, as JSONata does, one work unit per comparison (`charge`).
 */
export function boundedDistinct(arr: any, createSequence: () => any[], charge: (units: number) => void): unknown {
  if (typeof arr === 'undefined') return undefined;
  if (!Array.isArray(arr) || arr.length <= 1) return arr;
  const results: any[] = (arr as any).sequence === true ? createSequence() : [];
  const seen = new Set<string>();
  /** Kept values without a key: every later value is compared with them. */
  const odd: unknown[] = [];
  for (const value of arr) {
    const key = canonicalKey(value);
    let includes: boolean;
    if (key === null) {
      charge(results.length);
      includes = results.some((kept) => isDeepEqual(value, kept));
    } else {
      charge(odd.length);
      includes = seen.has(key) || odd.some((kept) => isDeepEqual(value, kept));
    }
    if (includes) continue;
    if (key === null) odd.push(value);
    else seen.add(key);
    results.push(value);
  }
  return results;
}

/**
 * JSONata's `$sort(array[, comparator])`: the same stable merge sort (same split, same calls of
 * the comparator in the same order, so even an inconsistent comparator gives JSONata's result),
 * without JSONata's recursive merge that copies the rest of the array per element (O(n²)
 * memory). Without a comparator the order of numbers or strings is unique, so a native stable
 * sort gives it.
 */
export async function boundedSort(arr: any, comparator?: (a: unknown, b: unknown) => unknown): Promise<unknown> {
  if (typeof arr === 'undefined') return undefined;
  if (arr.length <= 1) return arr;
  if (typeof comparator === 'undefined') {
    const numbers = Array.isArray(arr) && arr.every(isNumeric);
    const strings = Array.isArray(arr) && arr.every((item: unknown) => typeof item === 'string');
    if (!numbers && !strings) throw { stack: new Error().stack, code: 'D3070', index: 1 };
    return Array.prototype.slice.call(arr).sort((x: any, y: any) => (x > y ? 1 : y > x ? -1 : 0));
  }
  const merge = async (left: any[], right: any[]): Promise<any[]> => {
    const result: any[] = [];
    let i = 0;
    let j = 0;
    while (i < left.length && j < right.length) {
      if (await comparator(left[i], right[j])) result.push(right[j++]);
      else result.push(left[i++]);
    }
    for (; i < left.length; i++) result.push(left[i]);
    for (; j < right.length; j++) result.push(right[j]);
    return result;
  };
  const msort = async (array: any): Promise<any> => {
    if (!Array.isArray(array) || array.length <= 1) return array;
    const middle = Math.floor(array.length / 2);
    const left = await msort(array.slice(0, middle));
    const right = await msort(array.slice(middle));
    return merge(left, right);
  };
  return msort(arr);
}
