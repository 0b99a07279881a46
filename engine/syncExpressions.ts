/**
 * A synchronous evaluator for the common subset of JSONata 2.2.2 (the pinned version). It walks
 * the AST JSONata's own parser builds, with a line-by-line port of JSONata's evaluator for the
 * node types below, so results are JSONata's: sequences, singleton unwrapping, flattening,
 * `undefined` for missing values.
 *
 * Why: JSONata's evaluator is made of async functions, and inside Temporal's workflow sandbox
 * every Promise costs a captured, source-mapped stack (docs/benchmarks.md, "steps").
 *
 * Subset: paths of names and `$`/`$$`/`$input`/`$trigger`/`$nodes` with filter predicates
 * (`[0]`, `[-1]`, `[x > 1]`) and `[]`; string, number, boolean and null literals; `+ - * / %`,
 * `= != < <= > >=`, `and`, `or`, `in`, `&`; unary minus; `?:`; blocks without bindings; array and
 * object constructors; calls of the native functions in NATIVES. Anything else (lambdas,
 * bindings, ranges, regexes, wildcards, sorting, `~>`, other functions) is left to JSONata.
 *
 * Fallback contract: `evaluate` returns FALLBACK whenever this evaluator cannot promise
 * JSONata's exact outcome. That includes every error (JSONata is asked again and throws its own
 * error, code and message), the step budget and the stack depth (counted as JSONata counts
 * them: one step per `evaluate` call), the sequence limit and the size hook (`checkValue`, called
 * where JSONata calls its evaluate-exit hook).
 *
 * Pure code: no I/O, no clock, no randomness.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- a port of JSONata's untyped evaluator */
import { boundedDistinct, isDeepEqual, WORK_METER } from './expressionBounds';

export const FALLBACK: unique symbol = Symbol('sync-expression-fallback');

export interface SyncLimits {
  maxSteps: number;
  stackDepth: number;
  maxSequence: number;
  /** Called with the result of every evaluation step; throws when a value is over a limit. */
  checkValue(value: unknown): void;
  /**
   * With the function bounds (expressionBounds.ts): the work units a native call costs before
   * it runs, charged at `workPerStep` units per step, as JSONata's bounded natives charge them.
   */
  cost?: (name: string, args: readonly unknown[]) => number;
  workPerStep?: number;
  /** With the function bounds: the work units of a node's value (operands of `=`, `!=`, `in`), or 0. */
  valueCost?: (node: object, value: unknown) => number;
}

/** Thrown inside the evaluator; never leaves this module. */
class Fallback extends Error {}
const bail = (): never => {
  throw new Fallback('fallback');
};

const BINARY_OPS = new Set(['+', '-', '*', '/', '%', '=', '!=', '<', '<=', '>', '>=', '&', 'and', 'or', 'in']);
/** Variables the engine binds (see evaluateExpression), plus `$` (context) and `$$` (root). */
const VARIABLES = new Set(['', '$', 'input', 'trigger', 'nodes']);
/** AST properties whose meaning this evaluator knows; a node with any other one set falls back. */
const KNOWN_KEYS = new Set([
  'type',
  'value',
  'position',
  'steps',
  'stages',
  'predicate',
  'lhs',
  'rhs',
  'expressions',
  'expression',
  'condition',
  'then',
  'else',
  'procedure',
  'arguments',
  'keepArray',
  'keepSingletonArray',
  'consarray',
]);

/** Whether every node of a JSONata AST is in the subset (checked once per compiled expression). */
export function isSyncSupported(ast: unknown): boolean {
  try {
    return supported(ast as any, false);
  } catch {
    return false;
  }
}

function supported(node: any, asProcedure: boolean): boolean {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return false;
  for (const key of Object.keys(node)) if (!KNOWN_KEYS.has(key) && node[key] !== undefined) return false;
  for (const list of [node.predicate, node.stages]) {
    if (list === undefined) continue;
    if (!Array.isArray(list)) return false;
    for (const stage of list) if (!stage || stage.type !== 'filter' || !supported(stage.expr, false)) return false;
  }
  switch (node.type) {
    case 'path':
      return Array.isArray(node.steps) && node.steps.length > 0 && node.steps.every((s: any) => supported(s, false));
    case 'binary':
      return BINARY_OPS.has(node.value) && supported(node.lhs, false) && supported(node.rhs, false);
    case 'unary':
      if (node.value === '-') return supported(node.expression, false);
      if (node.value === '[') return Array.isArray(node.expressions) && node.expressions.every((e: any) => supported(e, false));
      if (node.value === '{') {
        return (
          Array.isArray(node.lhs) &&
          node.lhs.every((pair: any) => Array.isArray(pair) && pair.length === 2 && supported(pair[0], false) && supported(pair[1], false))
        );
      }
      return false;
    case 'name':
      return typeof node.value === 'string';
    case 'string':
      return typeof node.value === 'string';
    case 'number':
      return typeof node.value === 'number';
    case 'value':
      return node.value === true || node.value === false || node.value === null;
    case 'condition':
      return supported(node.condition, false) && supported(node.then, false) && (node.else === undefined || supported(node.else, false));
    case 'block':
      return Array.isArray(node.expressions) && node.expressions.every((e: any) => supported(e, false));
    case 'variable':
      if (asProcedure) return Object.prototype.hasOwnProperty.call(NATIVES, node.value) && node.predicate === undefined;
      return VARIABLES.has(node.value);
    case 'function':
      return supported(node.procedure, true) && Array.isArray(node.arguments) && node.arguments.every((a: any) => supported(a, false));
    default:
      return false;
  }
}

// ---- JSONata utils (utils.js), ported ----

function isNumeric(n: unknown): boolean {
  let isNum = false;
  if (typeof n === 'number') {
    isNum = !isNaN(n);
    if (isNum && !isFinite(n)) bail(); // D1001
  }
  return isNum;
}

function isArrayOfNumbers(arg: unknown): boolean {
  return Array.isArray(arg) && arg.filter((item) => !isNumeric(item)).length === 0;
}

function isSequence(value: any): boolean {
  return value.sequence === true && Array.isArray(value);
}

function isFunction(arg: any): boolean {
  return (arg && (arg._jsonata_function === true || arg._jsonata_lambda === true)) || typeof arg === 'function';
}

function stringToArray(str: string): string[] {
  const arr: string[] = [];
  for (const char of str) arr.push(char);
  return arr;
}

const objectKeys = (arg: any): string[] => (typeof arg === 'object' && arg !== null ? Object.keys(arg) : []);

// ---- Signatures (signature.js), ported ----

interface Param {
  regex: string;
  type: string;
  array?: boolean;
  context?: boolean;
  contextRegex?: RegExp;
  subtype?: string;
}

interface Signature {
  validate(args: unknown[], context: unknown): unknown[];
}

function getSymbol(value: any): string {
  if (isFunction(value)) return 'f';
  switch (typeof value) {
    case 'string':
      return 's';
    case 'number':
      return 'n';
    case 'boolean':
      return 'b';
    case 'object':
      return value === null ? 'l' : Array.isArray(value) ? 'a' : 'o';
    default:
      return 'm';
  }
}

function findClosingBracket(str: string, start: number, open: string, close: string): number {
  let depth = 1;
  let position = start;
  while (position < str.length) {
    position++;
    const symbol = str.charAt(position);
    if (symbol === close) {
      depth--;
      if (depth === 0) break;
    } else if (symbol === open) {
      depth++;
    }
  }
  return position;
}

/** The argument symbols each one-letter parameter type admits, as JSONata's own parseSignature has them. */
const SYMBOL_ARGUMENTS = {
  s: '[sm]',
  n: '[nm]',
  b: '[bm]',
  l: '[lm]',
  o: '[om]',
  a: '[asnblfom]',
  f: 'f',
  j: '[asnblom]',
  x: '[asnblfom]',
} as const;

function parseSignature(signature: string): Signature {
  let position = 1;
  const params: Param[] = [];
  let param = Object.create(null) as Param;
  let prevParam = param;
  const next = () => {
    params.push(param);
    prevParam = param;
    param = Object.create(null) as Param;
  };
  while (position < signature.length) {
    const symbol = signature.charAt(position);
    if (symbol === ':') break;
    switch (symbol) {
      case 's':
      case 'n':
      case 'b':
      case 'l':
      case 'o':
      case 'a':
      case 'f':
      case 'j':
      case 'x':
        param.regex = SYMBOL_ARGUMENTS[symbol];
        param.type = symbol;
        if (symbol === 'a') param.array = true;
        next();
        break;
      case '-':
        prevParam.context = true;
        prevParam.contextRegex = new RegExp(prevParam.regex);
        prevParam.regex += '?';
        break;
      case '?':
      case '+':
        prevParam.regex += symbol;
        break;
      case '(': {
        const endParen = findClosingBracket(signature, position, '(', ')');
        const choice = signature.substring(position + 1, endParen);
        if (choice.indexOf('<') !== -1) throw new Error(`unsupported signature ${signature}`);
        param.regex = '[' + choice + 'm]';
        param.type = '(' + choice + ')';
        position = endParen;
        next();
        break;
      }
      case '<': {
        if (prevParam.type !== 'a' && prevParam.type !== 'f') throw new Error(`unsupported signature ${signature}`);
        const endPos = findClosingBracket(signature, position, '<', '>');
        prevParam.subtype = signature.substring(position + 1, endPos);
        position = endPos;
        break;
      }
    }
    position++;
  }
  const regex = new RegExp('^' + params.map((p) => '(' + p.regex + ')').join('') + '$');
  return {
    validate(args, context) {
      let suppliedSig = '';
      for (const arg of args) suppliedSig += getSymbol(arg);
      const isValid = regex.exec(suppliedSig);
      if (!isValid) return bail(); // T0410
      const validatedArgs: unknown[] = [];
      let argIndex = 0;
      params.forEach((p, index) => {
        let arg: any = args[argIndex];
        const match = isValid.at(index + 1);
        if (match === '') {
          if (p.context && p.contextRegex) {
            if (p.contextRegex.test(getSymbol(context))) validatedArgs.push(context);
            else bail(); // T0411
          } else {
            validatedArgs.push(arg);
            argIndex++;
          }
        } else {
          (match as string).split('').forEach((single) => {
            arg = args[argIndex];
            if (p.type === 'a') {
              if (single === 'm') {
                arg = undefined;
              } else {
                let arrayOK = true;
                if (typeof p.subtype !== 'undefined') {
                  if (single !== 'a' && match !== p.subtype) {
                    arrayOK = false;
                  } else if (single === 'a') {
                    if (arg.length > 0) {
                      const itemType = getSymbol(arg[0]);
                      if (itemType !== p.subtype.charAt(0)) arrayOK = false;
                      else arrayOK = arg.filter((val: unknown) => getSymbol(val) !== itemType).length === 0;
                    }
                  }
                }
                if (!arrayOK) bail(); // T0412
                if (single !== 'a') arg = [arg];
              }
              validatedArgs.push(arg);
              argIndex++;
            } else {
              validatedArgs.push(arg);
              argIndex++;
            }
          });
        }
      });
      return validatedArgs;
    },
  };
}

// ---- Native functions (functions.js), ported. `this` is the running evaluation. ----

type Native = (this: Evaluation, ...args: any[]) => unknown;

function fnBoolean(arg: any): boolean | undefined {
  if (typeof arg === 'undefined') return undefined;
  let result = false;
  if (Array.isArray(arg)) {
    if (arg.length === 1) result = fnBoolean(arg[0])!;
    else if (arg.length > 1) result = arg.filter((val) => fnBoolean(val)).length > 0;
  } else if (typeof arg === 'string') {
    if (arg.length > 0) result = true;
  } else if (isNumeric(arg)) {
    if (arg !== 0) result = true;
  } else if (arg !== null && typeof arg === 'object' && !isFunction(arg)) {
    if (objectKeys(arg).length > 0) result = true;
  } else if (typeof arg === 'boolean' && arg === true) {
    result = true;
  }
  return result;
}

function fnString(arg: any, prettify = false): string | undefined {
  if (typeof arg === 'undefined') return undefined;
  if (typeof arg === 'string') return arg;
  if (isFunction(arg)) return '';
  if (typeof arg === 'number' && !isFinite(arg)) return bail(); // D3001
  if (Array.isArray(arg) && (arg as any).outerWrapper) arg = arg[0];
  return JSON.stringify(
    arg,
    (_key, val) => {
      if (typeof val !== 'undefined' && val !== null && isNumeric(val)) {
        return val.toPrecision && !Number.isInteger(val) ? Number(val.toPrecision(15)) : val;
      }
      return val && isFunction(val) ? '' : val;
    },
    prettify ? 2 : 0,
  );
}

function fnSubstring(str: string | undefined, start: number, length?: number): string | undefined {
  if (typeof str === 'undefined') return undefined;
  const strArray = stringToArray(str);
  const strLength = strArray.length;
  if (strLength + start < 0) start = 0;
  if (typeof length !== 'undefined') {
    if (length <= 0) return '';
    const end = start >= 0 ? start + length : strLength + start + length;
    return strArray.slice(start, end).join('');
  }
  return strArray.slice(start).join('');
}

function fnRound(arg: number | undefined, precision?: number): number | undefined {
  if (typeof arg === 'undefined') return undefined;
  let value: string[];
  if (precision) {
    value = arg.toString().split('e');
    arg = +(value[0] + 'e' + (value[1] ? +value[1] + precision : precision));
  }
  let result = Math.round(arg);
  const diff = result - arg;
  if (Math.abs(diff) === 0.5 && Math.abs(result % 2) === 1) result = result - 1;
  if (precision) {
    value = result.toString().split('e');
    result = +(value[0] + 'e' + (value[1] ? +value[1] - precision : -precision));
  }
  if (Object.is(result, -0)) result = 0;
  return result;
}

function fnNumber(arg: unknown): number | undefined {
  if (typeof arg === 'undefined') return undefined;
  if (typeof arg === 'number') return arg;
  if (
    typeof arg === 'string' &&
    /^-?[0-9]+(\.[0-9]+)?([Ee][-+]?[0-9]+)?$/.test(arg) &&
    !isNaN(parseFloat(arg)) &&
    isFinite(arg as unknown as number)
  ) {
    return parseFloat(arg);
  }
  if (typeof arg === 'string' && /^(0[xX][0-9A-Fa-f]+)|(0[oO][0-7]+)|(0[bB][0-1]+)$/.test(arg)) return Number(arg);
  if (arg === true) return 1;
  if (arg === false) return 0;
  return bail(); // D3030
}

function fnKeys(this: Evaluation, arg: any): unknown[] {
  let result = this.createSequence();
  if (Array.isArray(arg)) {
    const merge = Object.create(null);
    for (let ii = 0; ii < arg.length; ii++) for (const key of fnKeys.call(this, arg[ii]) as string[]) merge[key] = true;
    result = fnKeys.call(this, merge) as any;
  } else if (arg !== null && typeof arg === 'object' && !isFunction(arg)) {
    for (const key of objectKeys(arg)) this.push(result, key);
  }
  return result;
}

function fnLookup(this: Evaluation, input: any, key: string): unknown {
  let result: any;
  if (Array.isArray(input)) {
    result = this.createSequence();
    for (let ii = 0; ii < input.length; ii++) {
      const res = fnLookup.call(this, input[ii], key);
      if (typeof res !== 'undefined') {
        if (Array.isArray(res)) res.forEach((val) => this.push(result, val));
        else this.push(result, res);
      }
    }
  } else if (input !== null && typeof input === 'object' && Object.prototype.hasOwnProperty.call(input, key) && !isFunction(input)) {
    result = input[key];
  }
  return result;
}

function fnAppend(this: Evaluation, arg1: any, arg2: any): unknown {
  if (typeof arg1 === 'undefined') return arg2;
  if (typeof arg2 === 'undefined') return arg1;
  if (!Array.isArray(arg1)) arg1 = this.createSequence(arg1);
  if (!Array.isArray(arg2)) arg2 = [arg2];
  if (arg1.length + arg2.length > this.limits.maxSequence) bail(); // D2015
  return arg1.concat(arg2);
}

const sumOf = (args: number[]) => {
  let total = 0;
  args.forEach((num) => (total += num));
  return total;
};

interface NativeFunction {
  implementation: Native;
  signature: Signature;
}

const define = (implementation: Native, signature: string): NativeFunction => ({ implementation, signature: parseSignature(signature) });

/** The native functions the subset calls, with JSONata's own signatures (jsonata.js staticFrame). */
const NATIVES: Record<string, NativeFunction> = {
  sum: define((args?: number[]) => (typeof args === 'undefined' ? undefined : sumOf(args)), '<a<n>:n>'),
  count: define((args?: unknown[]) => (typeof args === 'undefined' ? 0 : args.length), '<a:n>'),
  max: define((args?: number[]) => (typeof args === 'undefined' || args.length === 0 ? undefined : Math.max(...args)), '<a<n>:n>'),
  min: define((args?: number[]) => (typeof args === 'undefined' || args.length === 0 ? undefined : Math.min(...args)), '<a<n>:n>'),
  average: define(
    (args?: number[]) => (typeof args === 'undefined' || args.length === 0 ? undefined : sumOf(args) / args.length),
    '<a<n>:n>',
  ),
  string: define((arg: unknown, prettify?: boolean) => fnString(arg, prettify), '<x-b?:s>'),
  substring: define((str: string | undefined, start: number, length?: number) => fnSubstring(str, start, length), '<s-nn?:s>'),
  substringBefore: define((str: string | undefined, chars: string) => {
    if (typeof str === 'undefined') return undefined;
    const pos = str.indexOf(chars);
    return pos > -1 ? str.substr(0, pos) : str;
  }, '<s-s:s>'),
  substringAfter: define((str: string | undefined, chars: string) => {
    if (typeof str === 'undefined') return undefined;
    const pos = str.indexOf(chars);
    return pos > -1 ? str.substr(pos + chars.length) : str;
  }, '<s-s:s>'),
  lowercase: define((str?: string) => (typeof str === 'undefined' ? undefined : str.toLowerCase()), '<s-:s>'),
  uppercase: define((str?: string) => (typeof str === 'undefined' ? undefined : str.toUpperCase()), '<s-:s>'),
  length: define((str?: string) => (typeof str === 'undefined' ? undefined : stringToArray(str).length), '<s-:n>'),
  trim: define((str?: string) => {
    if (typeof str === 'undefined') return undefined;
    let result = str.replace(/[ \t\n\r]+/gm, ' ');
    if (result.charAt(0) === ' ') result = result.substring(1);
    if (result.charAt(result.length - 1) === ' ') result = result.substring(0, result.length - 1);
    return result;
  }, '<s-:s>'),
  contains: define((str: string | undefined, token: unknown) => {
    if (typeof str === 'undefined' || typeof token === 'undefined') return undefined;
    // A function token is a regex matcher: not in the subset.
    return typeof token === 'string' ? str.indexOf(token) !== -1 : bail();
  }, '<s-(sf):b>'),
  join: define(
    (strs?: string[], separator?: string) =>
      typeof strs === 'undefined' ? undefined : strs.join(typeof separator === 'undefined' ? '' : separator),
    '<a<s>s?:s>',
  ),
  number: define((arg: unknown) => fnNumber(arg), '<(nsb)-:n>'),
  floor: define((arg?: number) => (typeof arg === 'undefined' ? undefined : Math.floor(arg)), '<n-:n>'),
  ceil: define((arg?: number) => (typeof arg === 'undefined' ? undefined : Math.ceil(arg)), '<n-:n>'),
  round: define((arg?: number, precision?: number) => fnRound(arg, precision), '<n-n?:n>'),
  abs: define((arg?: number) => (typeof arg === 'undefined' ? undefined : Math.abs(arg)), '<n-:n>'),
  sqrt: define((arg?: number) => (typeof arg === 'undefined' ? undefined : arg < 0 ? bail() : Math.sqrt(arg)), '<n-:n>'),
  power: define((arg?: number, exp?: number) => {
    if (typeof arg === 'undefined') return undefined;
    const result = Math.pow(arg, exp as number);
    return isFinite(result) ? result : bail(); // D3061
  }, '<n-n:n>'),
  boolean: define((arg: unknown) => fnBoolean(arg), '<x-:b>'),
  not: define((arg: unknown) => (typeof arg === 'undefined' ? undefined : !fnBoolean(arg)), '<x-:b>'),
  keys: define(fnKeys, '<x-:a<s>>'),
  lookup: define(fnLookup, '<x-s:x>'),
  append: define(fnAppend, '<xx:a>'),
  exists: define((arg: unknown) => typeof arg !== 'undefined', '<x:b>'),
  merge: define((arg?: unknown[]) => {
    if (typeof arg === 'undefined') return undefined;
    const result = Object.create(null);
    arg.forEach((obj: any) => {
      for (const prop of objectKeys(obj)) result[prop] = obj[prop];
    });
    return result;
  }, '<a<o>:o>'),
  reverse: define((arr?: unknown[]) => {
    if (typeof arr === 'undefined') return undefined;
    if (arr.length <= 1) return arr;
    const result = new Array(arr.length);
    for (let i = 0; i < arr.length; i++) result[arr.length - i - 1] = arr[i];
    return result;
  }, '<a:a>'),
  type: define((value: unknown) => {
    if (value === undefined) return undefined;
    if (value === null) return 'null';
    if (isNumeric(value)) return 'number';
    if (typeof value === 'string') return 'string';
    if (typeof value === 'boolean') return 'boolean';
    if (Array.isArray(value)) return 'array';
    if (isFunction(value)) return 'function';
    return 'object';
  }, '<x:s>'),
  distinct: define(function (this: Evaluation, arr: any) {
    if (this.limits.cost)
      return boundedDistinct(
        arr,
        () => this.createSequence(),
        (units) => this.charge(units),
      );
    if (typeof arr === 'undefined') return undefined;
    if (!Array.isArray(arr) || arr.length <= 1) return arr;
    const results: any = isSequence(arr) ? this.createSequence() : [];
    for (const value of arr) {
      let includes = false;
      for (let jj = 0; jj < results.length; jj++) {
        if (isDeepEqual(value, results[jj])) {
          includes = true;
          break;
        }
      }
      if (!includes) this.push(results, value);
    }
    return results;
  }, '<x:x>'),
};

/** What `$name` evaluates to for a native function: a JS function, so the size hook skips it. */
const NATIVE_VALUES = new Map<string, NativeFunction & (() => void)>(
  Object.entries(NATIVES).map(([name, native]) => [name, Object.assign(() => undefined, native)]),
);

// ---- The evaluator (jsonata.js evaluate*), ported ----

type Seq = any[] & { sequence?: boolean; keepSingleton?: boolean; outerWrapper?: boolean; cons?: boolean; tupleStream?: boolean };

class Evaluation {
  private steps = 0;
  private depth = 0;

  constructor(
    readonly limits: SyncLimits,
    private readonly variables: Record<string, unknown>,
  ) {}

  createSequence(...items: unknown[]): Seq {
    const sequence: Seq = [];
    sequence.sequence = true;
    if (items.length === 1) this.push(sequence, items[0]);
    return sequence;
  }

  /** Native work (SyncLimits.cost): JSONata's bounded natives charge the same units to its budget. */
  charge(units: number): void {
    this.steps += units / this.limits.workPerStep!;
    WORK_METER.steps += units / this.limits.workPerStep!;
    if (this.steps > this.limits.maxSteps) bail(); // STEPS
  }

  /** JSONata's sequences refuse to grow past options.sequence (D2015); other arrays do not. */
  push(array: Seq, ...items: unknown[]): void {
    if (array.sequence === true && array.length + items.length > this.limits.maxSequence) bail();
    Array.prototype.push.apply(array, items);
  }

  evaluate(expr: any, input: any): any {
    if (++this.depth > this.limits.stackDepth) bail(); // D1011
    if (++this.steps > this.limits.maxSteps) bail(); // STEPS
    WORK_METER.steps++;
    let result: any;
    switch (expr.type) {
      case 'path':
        result = this.evaluatePath(expr, input);
        break;
      case 'binary':
        result = this.evaluateBinary(expr, input);
        break;
      case 'unary':
        result = this.evaluateUnary(expr, input);
        break;
      case 'name':
        result = fnLookup.call(this, input, expr.value);
        break;
      case 'string':
      case 'number':
      case 'value':
        result = expr.value;
        break;
      case 'condition':
        result = fnBoolean(this.evaluate(expr.condition, input))
          ? this.evaluate(expr.then, input)
          : typeof expr.else !== 'undefined'
            ? this.evaluate(expr.else, input)
            : undefined;
        break;
      case 'block':
        for (const e of expr.expressions) result = this.evaluate(e, input);
        break;
      case 'function':
        result = this.evaluateFunction(expr, input);
        break;
      case 'variable':
        result = this.evaluateVariable(expr, input);
        break;
      default:
        bail();
    }
    if (Object.prototype.hasOwnProperty.call(expr, 'predicate')) {
      for (const p of expr.predicate) result = this.evaluateFilter(p.expr, result);
    }
    this.limits.checkValue(result);
    // As the bounded exit hook does (expressions.ts): `&` stringifies without a function call.
    if (this.limits.cost && expr.type === 'binary' && expr.value === '&' && typeof result === 'string') this.charge(result.length);
    if (this.limits.valueCost) {
      const units = this.limits.valueCost(expr, result);
      if (units > 0) this.charge(units);
    }
    if (result && isSequence(result) && !result.tupleStream) {
      if (expr.keepArray) result.keepSingleton = true;
      if (result.length === 0) result = undefined;
      else if (result.length === 1) result = result.keepSingleton ? result : result[0];
    }
    this.depth--;
    return result;
  }

  private evaluatePath(expr: any, input: any): any {
    let inputSequence: any = Array.isArray(input) && expr.steps[0].type !== 'variable' ? input : this.createSequence(input);
    let resultSequence: any;
    for (let ii = 0; ii < expr.steps.length; ii++) {
      const step = expr.steps[ii];
      if (ii === 0 && step.consarray) resultSequence = this.evaluate(step, inputSequence);
      else resultSequence = this.evaluateStep(step, inputSequence, ii === expr.steps.length - 1);
      if (typeof resultSequence === 'undefined' || resultSequence.length === 0) break;
      inputSequence = resultSequence;
    }
    if (expr.keepSingletonArray) {
      if (Array.isArray(resultSequence) && (resultSequence as Seq).cons && !(resultSequence as Seq).sequence)
        resultSequence = this.createSequence(resultSequence);
      // JSONata sets the flag on whatever came out (a TypeError on undefined or a primitive).
      if (resultSequence === null || typeof resultSequence !== 'object') bail();
      resultSequence.keepSingleton = true;
    }
    return resultSequence;
  }

  private evaluateStep(expr: any, input: any, lastStep: boolean): Seq {
    const result = this.createSequence();
    for (let ii = 0; ii < input.length; ii++) {
      let res = this.evaluate(expr, input[ii]);
      if (expr.stages) for (const stage of expr.stages) res = this.evaluateFilter(stage.expr, res);
      if (typeof res !== 'undefined') this.push(result, res);
    }
    let resultSequence = this.createSequence();
    if (lastStep && result.length === 1 && Array.isArray(result[0]) && !isSequence(result[0])) {
      resultSequence = result[0];
    } else {
      Array.prototype.forEach.call(result, (res: any) => {
        if (!Array.isArray(res) || (res as Seq).cons) this.push(resultSequence, res);
        else Array.prototype.forEach.call(res, (val) => this.push(resultSequence, val));
      });
    }
    return resultSequence;
  }

  private evaluateFilter(predicate: any, input: any): any {
    let results: any = this.createSequence();
    if (input && input.tupleStream) bail();
    if (!Array.isArray(input)) input = this.createSequence(input);
    if (predicate.type === 'number') {
      let index = Math.floor(predicate.value);
      if (index < 0) index = input.length + index;
      const item = input[index];
      if (typeof item !== 'undefined') {
        if (Array.isArray(item)) results = item;
        else this.push(results, item);
      }
    } else {
      for (let index = 0; index < input.length; index++) {
        const item = input[index];
        let res = this.evaluate(predicate, item);
        if (isNumeric(res)) res = [res];
        if (isArrayOfNumbers(res)) {
          Array.prototype.forEach.call(res, (ires: number) => {
            let ii = Math.floor(ires);
            if (ii < 0) ii = input.length + ii;
            if (ii === index) this.push(results, item);
          });
        } else if (fnBoolean(res)) {
          this.push(results, item);
        }
      }
    }
    return results;
  }

  private evaluateBinary(expr: any, input: any): any {
    const lhs = this.evaluate(expr.lhs, input);
    const op = expr.value;
    if (op === 'and') return boolize(lhs) && boolize(this.evaluate(expr.rhs, input));
    if (op === 'or') return boolize(lhs) || boolize(this.evaluate(expr.rhs, input));
    const rhs = this.evaluate(expr.rhs, input);
    switch (op) {
      case '+':
      case '-':
      case '*':
      case '/':
      case '%':
        return numeric(lhs, rhs, op);
      case '=':
        return typeof lhs === 'undefined' || typeof rhs === 'undefined' ? false : isDeepEqual(lhs, rhs);
      case '!=':
        return typeof lhs === 'undefined' || typeof rhs === 'undefined' ? false : !isDeepEqual(lhs, rhs);
      case '<':
      case '<=':
      case '>':
      case '>=':
        return comparison(lhs, rhs, op);
      case '&':
        return (typeof lhs !== 'undefined' ? fnString(lhs)! : '').concat(typeof rhs !== 'undefined' ? fnString(rhs)! : '');
      case 'in': {
        if (typeof lhs === 'undefined' || typeof rhs === 'undefined') return false;
        const list = Array.isArray(rhs) ? rhs : [rhs];
        for (let i = 0; i < list.length; i++) if (list[i] === lhs) return true;
        return false;
      }
      default:
        return bail();
    }
  }

  private evaluateUnary(expr: any, input: any): any {
    switch (expr.value) {
      case '-': {
        const result = this.evaluate(expr.expression, input);
        if (typeof result === 'undefined') return undefined;
        return isNumeric(result) ? -result : bail(); // D1002
      }
      case '[': {
        // JSONata evaluates the items "in parallel" (Promise.all): same steps, same values.
        let result: any = [];
        const values = expr.expressions.map((item: any) => this.evaluate(item, input));
        expr.expressions.forEach((item: any, i: number) => {
          const value = values[i];
          if (typeof value !== 'undefined') {
            if (item.value === '[') result.push(value);
            else result = fnAppend.call(this, result, value);
          }
        });
        if (expr.consarray) Object.defineProperty(result, 'cons', { enumerable: false, configurable: false, value: true });
        return result;
      }
      case '{':
        return this.evaluateGroup(expr, input);
      default:
        return bail();
    }
  }

  private evaluateGroup(expr: any, input: any): any {
    const result = Object.create(null);
    const groups = Object.create(null);
    if (!Array.isArray(input)) input = this.createSequence(input);
    if (input.length === 0) {
      // JSONata pushes into the array itself, even one from the input data; leave that mutation
      // to JSONata so a fallback never evaluates over data this evaluator already changed.
      if (!isSequence(input)) bail();
      this.push(input, undefined);
    }
    for (let itemIndex = 0; itemIndex < input.length; itemIndex++) {
      const item = input[itemIndex];
      for (let pairIndex = 0; pairIndex < expr.lhs.length; pairIndex++) {
        const key = this.evaluate(expr.lhs[pairIndex][0], item);
        if (typeof key !== 'string' && key !== undefined) bail(); // T1003
        if (key !== undefined) {
          if (key === '_jsonata_lambda' || key === '_jsonata_function') bail(); // D1013
          if (Object.prototype.hasOwnProperty.call(groups, key)) {
            if (groups[key].exprIndex !== pairIndex) bail(); // D1009
            groups[key].data = fnAppend.call(this, groups[key].data, item);
          } else {
            groups[key] = { data: item, exprIndex: pairIndex };
          }
        }
      }
    }
    const keys = objectKeys(groups);
    const values = keys.map((key) => this.evaluate(expr.lhs[groups[key].exprIndex][1], groups[key].data));
    keys.forEach((key, i) => {
      if (typeof values[i] !== 'undefined') result[key] = values[i];
    });
    return result;
  }

  private evaluateVariable(expr: any, input: any): any {
    if (expr.value === '') return input && input.outerWrapper ? input[0] : input;
    const native = NATIVE_VALUES.get(expr.value);
    if (native) return native;
    if (!Object.prototype.hasOwnProperty.call(this.variables, expr.value)) bail();
    return this.variables[expr.value];
  }

  private evaluateFunction(expr: any, input: any): any {
    const proc = this.evaluate(expr.procedure, input);
    if (!NATIVE_VALUES.has(expr.procedure.value) || proc !== NATIVE_VALUES.get(expr.procedure.value)) bail();
    const args: unknown[] = [];
    for (const arg of expr.arguments) {
      const value = this.evaluate(arg, input);
      if (isFunction(value)) bail();
      args.push(value);
    }
    const native = proc as NativeFunction;
    const validated = native.signature.validate(args, input);
    if (this.limits.cost) {
      const units = this.limits.cost(expr.procedure.value, validated);
      if (units > 0) this.charge(units);
    }
    const result = native.implementation.apply(this, validated);
    // JSONata's natives in the subset return plain values; anything else is not ours to judge.
    if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') bail();
    return result;
  }
}

function boolize(value: unknown): boolean {
  const booled = fnBoolean(value);
  return typeof booled === 'undefined' ? false : booled;
}

function numeric(lhs: any, rhs: any, op: string): number | undefined {
  if (typeof lhs !== 'undefined' && !isNumeric(lhs)) bail(); // T2001
  if (typeof rhs !== 'undefined' && !isNumeric(rhs)) bail(); // T2002
  if (typeof lhs === 'undefined' || typeof rhs === 'undefined') return undefined;
  switch (op) {
    case '+':
      return lhs + rhs;
    case '-':
      return lhs - rhs;
    case '*':
      return lhs * rhs;
    case '/':
      return lhs / rhs;
    default:
      return lhs % rhs;
  }
}

function comparison(lhs: any, rhs: any, op: string): boolean | undefined {
  const ltype = typeof lhs;
  const rtype = typeof rhs;
  const lcomparable = ltype === 'undefined' || ltype === 'string' || ltype === 'number';
  const rcomparable = rtype === 'undefined' || rtype === 'string' || rtype === 'number';
  if (!lcomparable || !rcomparable) bail(); // T2010
  if (ltype === 'undefined' || rtype === 'undefined') return undefined;
  if (ltype !== rtype) bail(); // T2009
  switch (op) {
    case '<':
      return lhs < rhs;
    case '<=':
      return lhs <= rhs;
    case '>':
      return lhs > rhs;
    default:
      return lhs >= rhs;
  }
}

/**
 * Evaluates a supported AST (isSyncSupported) like JSONata's `expression.evaluate(input,
 * bindings)` would, or returns FALLBACK. `bindings` are the variables JSONata is given.
 */
export function evaluateSync(ast: unknown, input: unknown, bindings: Record<string, unknown>, limits: SyncLimits): unknown {
  const variables: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(bindings)) variables[key] = bindings[key];
  variables['$'] = input;
  const evaluation = new Evaluation(limits, variables);
  let context: unknown = input;
  if (Array.isArray(input) && !isSequence(input)) {
    context = evaluation.createSequence(input);
    (context as Seq).outerWrapper = true;
  }
  try {
    return evaluation.evaluate(ast, context);
  } catch {
    // Fallback, a JSONata error, a size limit or a native stack overflow: JSONata decides.
    return FALLBACK;
  }
}
