/**
 * JSONata evaluation for workflow graphs (see the expression convention in nodes.ts).
 * Bundled into workflow code: no I/O, no clock of our own. Inside a workflow JSONata's
 * `$now()`/`$millis()` read Temporal's deterministic clock, so they are replay-safe.
 */
import jsonata from 'jsonata';
import { RE2JS } from 're2js';
import { EXPRESSION_PREFIX, isTemplateExpression } from './expressionFields';
import {
  boundedDistinct,
  boundedSort,
  chargeMatch,
  comparisonOperands,
  OPERAND_WHAT,
  operandCost,
  excessivePictureWidth,
  findSignatureProblem,
  jsonSize as jsonSizeWithin,
  MAX_PICTURE_WIDTH,
  nativeCost,
  SIGNATURE_CODE,
  WORK_METER,
  WORK_PER_STEP,
} from './expressionBounds';
import { evaluateSync, FALLBACK, isSyncSupported, type SyncLimits } from './syncExpressions';

/**
 * Evaluation guards. JSONata has no loops, so a runaway expression is deep recursion (caught
 * by stackDepth), a huge sequence (maxSequence; ranges over 1e7 are refused by JSONata
 * itself) or endless tail recursion, which JSONata runs in constant depth. Its `timeout`
 * option cannot catch the latter inside a workflow, where `Date.now()` stands still during an
 * activation, so evaluations also have a step budget.
 *
 * Why the budget is small: inside Temporal's workflow sandbox every Promise records a
 * source-mapped stack trace, and JSONata creates several per step, so a step costs ~0.12 ms
 * there (vs ~1-5 µs in plain Node; measured with a real worker, more under CPU load), and an
 * activation that runs over 5 s (isolateExecutionTimeout) fails its workflow task, which is
 * retried forever. 10 000 steps (~1.2 s in the sandbox) is e.g. a filter over ~5 000 array
 * items; heavier data work belongs in a `code` node. Dry runs use the same limit so they
 * predict real runs (the size hook below adds about one awaited Promise per step).
 *
 * Steps do not bound what one step allocates (`$pad('', 1e8)` is one step), so every value an
 * evaluation step produces is also checked (JSONata's evaluate-exit hook): strings up to
 * maxStringLength, arrays up to maxItems, any value up to maxValueBytes of JSON (counted as a
 * tree, so shared parts count each time they occur, as they would when serialized), and the
 * result up to maxOutputBytes. `$pad` is replaced by a version that refuses a width over
 * maxStringLength before allocating. Regular expressions run on RE2 (re2js, pure JS, linear
 * time; see Re2RegexEngine), so no pattern can backtrack for ever.
 *
 * Nor does one step bound the work inside a built-in function (`$sort`, `$distinct`, `$string`,
 * a regex with a million matches…). With the function bounds (EvaluationOptions.bounded, new runs
 * only) every built-in charges its work to the same step budget, 1 step per WORK_PER_STEP units,
 * before doing it; `$sort` and `$distinct` are replaced by versions without JSONata's
 * super-linear costs; `$toMillis` pictures run on RE2; lambda signatures that could backtrack
 * are refused. Both evaluators charge the same units at the same points (expressionBounds.ts).
 */
export const EXPRESSION_LIMITS = {
  /** Max nesting of JSONata evaluation frames (a recursive function uses several per call). */
  stackDepth: 1000,
  /** Max length of any sequence built during evaluation. */
  maxSequence: 100_000,
  /** Max evaluation steps (AST node visits) per expression; see above. */
  maxSteps: 10_000,
  /** Wall-clock limit; effective outside workflows only (see above). */
  timeoutMs: 1000,
  /** Max length (UTF-16 code units) of any string built during evaluation: 1 MiB. */
  maxStringLength: 1024 * 1024,
  /** Max items of any array built during evaluation. */
  maxItems: 100_000,
  /** Max approximate JSON size of any value built during evaluation: 8 MiB. */
  maxValueBytes: 8 * 1024 * 1024,
  /** Max JSON size of an expression's result: 4 MiB. */
  maxOutputBytes: 4 * 1024 * 1024,
  /** Compiled expressions kept per module instance (per workflow run inside Temporal). */
  cacheSize: 500,
} as const;

/** A syntax or evaluation error of a JSONata expression. */
export class ExpressionError extends Error {
  constructor(
    message: string,
    readonly expression: string,
    /** JSONata's error code (S0xxx syntax, T/D xxxx evaluation, STEPS for the step budget), when known. */
    readonly code?: string,
    /** Character offset in the expression, when known. */
    readonly position?: number,
  ) {
    super(message);
    this.name = 'ExpressionError';
  }
}

export interface ExpressionBindings {
  /** The run's trigger payload, `$trigger`. */
  trigger: unknown;
  /** Outputs of finished nodes by node id, `$nodes`. */
  nodes: Record<string, unknown>;
}

const STEP_LIMIT_CODE = 'STEPS';
/** Error code of an exceeded allocation limit (string, array, value or output size). */
const SIZE_LIMIT_CODE = 'SIZE';
/** Error code of a regular expression RE2 cannot run (lookaround, backreferences). */
const REGEX_CODE = 'REGEX';

function limitError(message: string, code = SIZE_LIMIT_CODE): Error {
  return Object.assign(new Error(message), { code });
}

const MiB = 1024 * 1024;
const mib = (bytes: number) => `${bytes / MiB} MiB`;

const jsonSize = (value: unknown) => jsonSizeWithin(value, EXPRESSION_LIMITS.maxValueBytes);

/** Fails the evaluation when a step produced a value over the allocation limits. */
function checkValue(value: unknown): void {
  if (typeof value === 'string') {
    if (value.length > EXPRESSION_LIMITS.maxStringLength) {
      throw limitError(
        `The expression built a string longer than ${mib(EXPRESSION_LIMITS.maxStringLength)} (${EXPRESSION_LIMITS.maxStringLength} characters)`,
      );
    }
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value) && value.length > EXPRESSION_LIMITS.maxItems) {
    throw limitError(`The expression built an array longer than ${EXPRESSION_LIMITS.maxItems} items`);
  }
  if (jsonSize(value) > EXPRESSION_LIMITS.maxValueBytes) {
    throw limitError(`The expression built a value larger than ${mib(EXPRESSION_LIMITS.maxValueBytes)}`);
  }
}

/** JSONata's `$pad(str, width[, char])`, refusing widths over the string limit before allocating. */
function boundedPad(str: unknown, width: unknown, char?: unknown): string | undefined {
  if (str === undefined) return undefined;
  const w = Math.trunc(Number(width));
  if (!(Math.abs(w) <= EXPRESSION_LIMITS.maxStringLength)) {
    throw limitError(`$pad width ${String(width)} exceeds the string limit of ${EXPRESSION_LIMITS.maxStringLength} characters`);
  }
  const s = String(str);
  const fill = typeof char === 'string' && char.length > 0 ? char : ' ';
  // Length in code points, as JSONata's $length counts.
  const padLength = Math.abs(w) - Array.from(s).length;
  if (padLength <= 0) return s;
  let padding = fill.repeat(Math.ceil(padLength / fill.length));
  if (fill.length > 1) padding = Array.from(padding).slice(0, padLength).join('');
  return w > 0 ? s + padding : padding + s;
}

const RE2_CACHE_SIZE = 100;
const re2Cache = new Map<string, RE2JS>();

/**
 * JSONata's RegexEngine option: runs regex literals on RE2 (re2js, a pure-JS port: linear-time
 * matching, deterministic, no Node built-ins, so it works inside workflow code). JSONata hands
 * over its native RegExp (compiling one does not match anything) and uses only `lastIndex` and
 * `exec`. Patterns RE2 cannot run (lookaround, backreferences) fail with a clear message.
 */
class Re2RegexEngine {
  lastIndex = 0;
  private readonly re: RE2JS;

  constructor(source: RegExp) {
    const flags = (source.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0) | (source.multiline ? RE2JS.MULTILINE : 0);
    const key = `${flags}/${source.source}`;
    let re = re2Cache.get(key);
    if (!re) {
      try {
        re = RE2JS.compile(RE2JS.translateRegExp(source.source), flags);
      } catch (err) {
        throw limitError(
          `Unsupported regular expression /${source.source}/: ${(err as Error).message}. Regular expressions use RE2 syntax (no lookaround or backreferences)`,
          REGEX_CODE,
        );
      }
      if (re2Cache.size >= RE2_CACHE_SIZE) re2Cache.delete(re2Cache.keys().next().value!);
      re2Cache.set(key, re);
    }
    this.re = re;
  }

  exec(str: string): (RegExpExecArray & { index: number }) | null {
    const input = String(str);
    if (this.lastIndex > input.length) {
      this.lastIndex = 0;
      return null;
    }
    const m = this.re.matcher(input);
    if (!m.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    const groups: (string | undefined)[] = [m.group(0) ?? ''];
    for (let i = 1; i <= m.groupCount(); i++) groups.push(m.group(i) ?? undefined);
    this.lastIndex = m.end();
    return Object.assign(groups, { index: m.start(), input }) as unknown as RegExpExecArray;
  }
}

interface CacheEntry {
  expression: jsonata.Expression;
  /** JSONata's AST, when every node of it is in the synchronous subset (syncExpressions.ts). */
  syncAst: unknown;
  /** Guard reads since the expression's evaluations last all finished. */
  budget: { reads: number; active: number };
  /** Compiled with the function bounds (EvaluationOptions.bounded). */
  bounded: boolean;
  /** The synchronous evaluator's limits for this expression. */
  syncLimits: SyncLimits;
}

function stepLimitError(): Error {
  const error = new Error(`Evaluation exceeded ${EXPRESSION_LIMITS.maxSteps} steps. Check for an infinite loop or use less data`);
  return Object.assign(error, { code: STEP_LIMIT_CODE });
}

/** The message when built-in functions' work (expressionBounds.ts) exhausts the step budget. */
export function workLimitMessage(what: string): string {
  return (
    `Evaluation exceeded ${EXPRESSION_LIMITS.maxSteps} steps in ${what}: built-in functions count ${WORK_PER_STEP} items, ` +
    'characters or comparisons as one step, and each regex match or call of a function argument as one. Use less data or a code node'
  );
}

type Charge = (units: number, what: string) => void;

/** Charges native work to an expression's JSONata budget (2 guard reads per step, see guardedOptions). */
function budgetCharge(budget: CacheEntry['budget']): Charge {
  return (units, what) => {
    budget.reads += (2 * units) / WORK_PER_STEP;
    WORK_METER.steps += units / WORK_PER_STEP;
    if (budget.reads > 2 * EXPRESSION_LIMITS.maxSteps) throw Object.assign(new Error(workLimitMessage(what)), { code: STEP_LIMIT_CODE });
  };
}

/** Re2RegexEngine that charges every match attempt (expressionBounds.chargeMatch). */
function meteredRegexEngine(charge: Charge): typeof Re2RegexEngine {
  return class MeteredRe2RegexEngine extends Re2RegexEngine {
    override exec(str: string): (RegExpExecArray & { index: number }) | null {
      const from = this.lastIndex;
      const result = super.exec(str);
      charge(chargeMatch(Math.max(0, (result ? this.lastIndex : String(str).length) - from)), 'regular expression matching');
      return result;
    }
  };
}

/**
 * JSONata options whose `stack` getter doubles as the step counter: JSONata 2.2.x reads
 * `options.stack` twice in the synchronous guard it runs before every step. A getter costs no
 * Promise, unlike JSONata's awaited evaluate-entry hook, which matters in the sandbox. The
 * budget belongs to the cached expression, so concurrent evaluations of the same source share
 * it (they fail sooner, never later). jsonata is pinned; a unit test catches a change of this
 * internal behaviour.
 */
function guardedOptions(budget: CacheEntry['budget'], bounded: boolean): jsonata.JsonataOptions {
  const engine = bounded ? meteredRegexEngine(budgetCharge(budget)) : Re2RegexEngine;
  return {
    RegexEngine: engine as unknown as RegExpConstructor,
    timeout: EXPRESSION_LIMITS.timeoutMs,
    sequence: EXPRESSION_LIMITS.maxSequence,
    get stack() {
      if (++budget.reads > 2 * EXPRESSION_LIMITS.maxSteps) throw stepLimitError();
      WORK_METER.steps += 0.5;
      return EXPRESSION_LIMITS.stackDepth;
    },
  };
}

// ---- Bounded built-in functions (EvaluationOptions.bounded) ----

interface NativeDefinition {
  _jsonata_function: true;
  implementation: (...args: unknown[]) => unknown;
  signature: unknown;
}

const WRAPPED = [
  'sum',
  'max',
  'min',
  'average',
  'string',
  'substring',
  'substringBefore',
  'substringAfter',
  'lowercase',
  'uppercase',
  'length',
  'trim',
  'match',
  'contains',
  'replace',
  'split',
  'join',
  'formatNumber',
  'formatBase',
  'formatInteger',
  'parseInteger',
  'number',
  'boolean',
  'not',
  'map',
  'zip',
  'filter',
  'single',
  'reduce',
  'sift',
  'keys',
  'lookup',
  'append',
  'spread',
  'merge',
  'reverse',
  'each',
  'sort',
  'shuffle',
  'distinct',
  'base64encode',
  'base64decode',
  'encodeUrlComponent',
  'encodeUrl',
  'decodeUrlComponent',
  'decodeUrl',
  'eval',
  'toMillis',
  'fromMillis',
  'clone',
  'now',
] as const;
type WrappedName = (typeof WRAPPED)[number];

/**
 * JSONata's own built-in function definitions, read once from a private expression: JSONata
 * looks `$name` up through the evaluation's frames, and its frame-push hook is called
 * synchronously with the expression's frame when an evaluation starts.
 */
const ORIGINALS: Record<WrappedName, NativeDefinition> = (() => {
  const probe = jsonata('0');
  let frame: { lookup(name: string): unknown } | undefined;
  probe.assign(Symbol.for('jsonata.__createFrame_push') as unknown as string, (parent: { lookup(name: string): unknown }) => {
    frame ??= parent;
  });
  probe.evaluate({}).catch(() => undefined);
  const found = {} as Record<WrappedName, NativeDefinition>;
  for (const name of WRAPPED) {
    const definition = frame?.lookup(name) as NativeDefinition | undefined;
    if (!definition || typeof definition.implementation !== 'function') throw new Error(`jsonata changed: no built-in $${name}`);
    found[name] = definition;
  }
  return found;
})();

/**
 * Runs JSONata's `$toMillis` picture parsing with RE2 standing in for the global RegExp: JSONata
 * compiles the picture to `new RegExp(...)` (`[f][f][f]…` against `111…1x` backtracked for
 * minutes) and offers no hook for it. The swap lasts one synchronous call that runs no user code,
 * so nothing else can observe it; regex literals elsewhere do not go through the global.
 */
function withRe2RegExp<T>(run: () => T): T {
  const scope = globalThis as unknown as { RegExp: RegExpConstructor };
  const NativeRegExp = scope.RegExp;
  scope.RegExp = function Re2RegExp(pattern: string, flags?: string) {
    return new Re2RegexEngine(new NativeRegExp(pattern, flags));
  } as unknown as RegExpConstructor;
  try {
    return run();
  } finally {
    scope.RegExp = NativeRegExp;
  }
}

function checkPictureWidth(picture: unknown): void {
  const width = excessivePictureWidth(picture);
  if (width !== null) throw limitError(`Picture width ${width} exceeds the limit of ${MAX_PICTURE_WIDTH}`);
}

/** Refuses lambda signatures whose native RegExp could backtrack (expressionBounds.signatureProblem). */
function checkSignatures(ast: unknown): void {
  const problem = findSignatureProblem(ast);
  if (problem) throw Object.assign(new Error(problem.message), { code: SIGNATURE_CODE, position: problem.position });
}

/**
 * Bounded replacements of JSONata's built-in functions, registered on every bounded expression:
 * each charges its work (expressionBounds.nativeCost) before calling JSONata's own function, or
 * runs a bounded implementation with JSONata's results ($sort, $distinct). Parameter lists are
 * JSONata's, word for word: JSONata reads a native function's arity and parameter names from its
 * source text (partial application, `$map(xs, $string)`); a unit test compares them.
 */
function boundedNatives(charge: Charge): Record<WrappedName, NativeDefinition> {
  const pre = (name: WrappedName, args: unknown[]) => {
    const units = nativeCost(name, args, jsonSize);
    if (units > 0) charge(units, `$${name}`);
  };
  const call = (name: WrappedName, focus: unknown, args: unknown[]) => {
    pre(name, args);
    return ORIGINALS[name].implementation.apply(focus, args);
  };
  /* eslint-disable @typescript-eslint/no-explicit-any -- JSONata's focus (`this`) is untyped */
  const impl: Record<WrappedName, (this: any, ...args: any[]) => unknown> = {
    sum: function (args) {
      return call('sum', this, [args]);
    },
    max: function (args) {
      return call('max', this, [args]);
    },
    min: function (args) {
      return call('min', this, [args]);
    },
    average: function (args) {
      return call('average', this, [args]);
    },
    string: function (arg, prettify = false) {
      return call('string', this, [arg, prettify]);
    },
    substring: function (str, start, length) {
      return call('substring', this, [str, start, length]);
    },
    substringBefore: function (str, chars) {
      return call('substringBefore', this, [str, chars]);
    },
    substringAfter: function (str, chars) {
      return call('substringAfter', this, [str, chars]);
    },
    lowercase: function (str) {
      return call('lowercase', this, [str]);
    },
    uppercase: function (str) {
      return call('uppercase', this, [str]);
    },
    length: function (str) {
      return call('length', this, [str]);
    },
    trim: function (str) {
      return call('trim', this, [str]);
    },
    match: function (str, regex, limit) {
      return call('match', this, [str, regex, limit]);
    },
    contains: function (str, token) {
      return call('contains', this, [str, token]);
    },
    replace: function (str, pattern, replacement, limit) {
      return call('replace', this, [str, pattern, replacement, limit]);
    },
    split: function (str, separator, limit) {
      return call('split', this, [str, separator, limit]);
    },
    join: function (strs, separator) {
      return call('join', this, [strs, separator]);
    },
    formatNumber: function (value, picture, options) {
      return call('formatNumber', this, [value, picture, options]);
    },
    formatBase: function (value, radix) {
      return call('formatBase', this, [value, radix]);
    },
    formatInteger: function (value, picture) {
      return call('formatInteger', this, [value, picture]);
    },
    parseInteger: function (value, picture) {
      return call('parseInteger', this, [value, picture]);
    },
    number: function (arg) {
      return call('number', this, [arg]);
    },
    boolean: function (arg) {
      return call('boolean', this, [arg]);
    },
    not: function (arg) {
      return call('not', this, [arg]);
    },
    map: function (arr, func) {
      return call('map', this, [arr, func]);
    },
    // JSONata's $zip takes no named parameters (a rest parameter would change its source text).
    zip: function () {
      // eslint-disable-next-line prefer-rest-params
      return call('zip', this, Array.from(arguments));
    },
    filter: function (arr, func) {
      return call('filter', this, [arr, func]);
    },
    single: function (arr, func) {
      return call('single', this, [arr, func]);
    },
    reduce: function (sequence, func, init) {
      return call('reduce', this, [sequence, func, init]);
    },
    sift: function (arg, func) {
      return call('sift', this, [arg, func]);
    },
    keys: function (arg) {
      return call('keys', this, [arg]);
    },
    lookup: function (input, key) {
      return call('lookup', this, [input, key]);
    },
    append: function (arg1, arg2) {
      return call('append', this, [arg1, arg2]);
    },
    spread: function (arg) {
      return call('spread', this, [arg]);
    },
    merge: function (arg) {
      return call('merge', this, [arg]);
    },
    reverse: function (arr) {
      return call('reverse', this, [arr]);
    },
    each: function (obj, func) {
      return call('each', this, [obj, func]);
    },
    sort: function (arr, comparator) {
      pre('sort', [arr, comparator]);
      return boundedSort(arr, comparator);
    },
    shuffle: function (arr) {
      return call('shuffle', this, [arr]);
    },
    distinct: function (arr) {
      pre('distinct', [arr]);
      return boundedDistinct(
        arr,
        () => this.createSequence(),
        (units) => charge(units, '$distinct'),
      );
    },
    base64encode: function (str) {
      return call('base64encode', this, [str]);
    },
    base64decode: function (str) {
      return call('base64decode', this, [str]);
    },
    encodeUrlComponent: function (str) {
      return call('encodeUrlComponent', this, [str]);
    },
    encodeUrl: function (str) {
      return call('encodeUrl', this, [str]);
    },
    decodeUrlComponent: function (str) {
      return call('decodeUrlComponent', this, [str]);
    },
    decodeUrl: function (str) {
      return call('decodeUrl', this, [str]);
    },
    eval: function (expr, focus) {
      if (typeof expr === 'string') {
        let ast: unknown = null;
        try {
          ast = jsonata(expr).ast();
        } catch {
          // JSONata's own $eval reports the syntax error.
        }
        checkSignatures(ast);
      }
      return call('eval', this, [expr, focus]);
    },
    toMillis: function (timestamp, picture) {
      if (typeof picture === 'undefined') return call('toMillis', this, [timestamp, picture]);
      return withRe2RegExp(() => call('toMillis', this, [timestamp, picture]));
    },
    fromMillis: function (millis, picture, timezone) {
      checkPictureWidth(picture);
      return call('fromMillis', this, [millis, picture, timezone]);
    },
    clone: function (arg) {
      return call('clone', this, [arg]);
    },
    // JSONata's $now is $fromMillis of the evaluation's timestamp, which every frame carries.
    now: function (picture, timezone) {
      checkPictureWidth(picture);
      pre('fromMillis', [undefined, picture]);
      return ORIGINALS.fromMillis.implementation.call(this, this.environment.timestamp.getTime(), picture, timezone);
    },
  };
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const out = {} as Record<WrappedName, NativeDefinition>;
  for (const name of WRAPPED) out[name] = { _jsonata_function: true, implementation: impl[name], signature: ORIGINALS[name].signature };
  return out;
}

/** Wrapped and original implementations, for the unit test that compares their parameter lists. */
export function builtinFunctionPairs(): Array<{
  name: string;
  original: (...args: unknown[]) => unknown;
  bounded: (...args: unknown[]) => unknown;
}> {
  const natives = boundedNatives(() => undefined);
  return WRAPPED.map((name) => ({ name, original: ORIGINALS[name].implementation, bounded: natives[name].implementation }));
}

const cache = new Map<string, CacheEntry>();
const EXIT_HOOK = Symbol.for('jsonata.__evaluate_exit');

interface JsonataErrorLike {
  code?: string;
  message?: string;
  position?: number;
  token?: string;
}

function toExpressionError(err: unknown, expr: string, phase: 'syntax' | 'evaluation'): ExpressionError {
  if (err instanceof ExpressionError) return err;
  const e = (err && typeof err === 'object' ? err : { message: String(err) }) as JsonataErrorLike;
  // Native stack overflows surface as RangeError; say what it means for the user.
  const overflow = err instanceof RangeError && /call stack/i.test(err.message);
  const text = overflow
    ? 'Expression is too deeply nested or recursive'
    : e.code === 'D2015' // JSONata's own message reports the attempted size as the limit
      ? `The expression built a sequence longer than ${EXPRESSION_LIMITS.maxSequence} items`
      : e.message || String(err);
  const where = typeof e.position === 'number' ? ` (at position ${e.position})` : '';
  const prefix = phase === 'syntax' ? 'Invalid expression' : 'Expression failed';
  return new ExpressionError(`${prefix}: ${text}${where}`, expr, e.code, typeof e.position === 'number' ? e.position : undefined);
}

/**
 * Compiles (and caches by source text) a JSONata expression with the evaluation guards.
 * Throws ExpressionError with a readable message, e.g.
 * `Invalid expression: Expected ")" before end of expression (at position 5)`.
 * The returned object is shared (its bounded `$pad` and size hook are set here): do not
 * `assign`/`registerFunction` on it, and evaluate through
 * evaluateExpression, which resets the step budget.
 */
export function compileExpression(expr: string, options: EvaluationOptions = {}): jsonata.Expression {
  return compileEntry(expr, options.bounded ?? true).expression;
}

function compileEntry(expr: string, bounded = true): CacheEntry {
  if (typeof expr !== 'string') throw new ExpressionError('Invalid expression: expected a string', String(expr));
  const key = `${bounded ? 'b' : 'u'}:${expr}`;
  const cached = cache.get(key);
  if (cached) {
    // Re-insert so eviction drops the least recently used entry.
    cache.delete(key);
    cache.set(key, cached);
    return cached;
  }
  const budget = { reads: 0, active: 0 };
  let expression: jsonata.Expression;
  let syncLimits = SYNC_LIMITS;
  try {
    expression = jsonata(expr, guardedOptions(budget, bounded));
    if (bounded) {
      checkSignatures(expression.ast());
      const charge = budgetCharge(budget);
      for (const [name, definition] of Object.entries(boundedNatives(charge))) expression.assign(name, definition);
      expression.registerFunction(
        'pad',
        function (str: unknown, width: unknown, char?: unknown) {
          const units = nativeCost('pad', [str, width, char], jsonSize);
          if (Math.abs(Math.trunc(Number(width))) <= EXPRESSION_LIMITS.maxStringLength) charge(units, '$pad');
          return boundedPad(str, width, char);
        },
        '<s-ns?:s>',
      );
      // Called after every evaluation step with its result (an awaited hook: ~1 Promise per step).
      // `&` turns any value into a string (JSONata's $string) without calling a function, and
      // comparisons walk their operands: the same charges as the synchronous evaluator's.
      const operands = comparisonOperands(expression.ast());
      expression.assign(
        EXIT_HOOK as unknown as string,
        (node: { type?: string; value?: unknown }, _input: unknown, _env: unknown, result: unknown) => {
          checkValue(result);
          if (node.type === 'binary' && node.value === '&' && typeof result === 'string') charge(result.length, "'&'");
          const kind = operands.get(node);
          if (kind) charge(operandCost(kind, result, jsonSize), OPERAND_WHAT[kind]);
        },
      );
      syncLimits = {
        ...BOUNDED_SYNC_LIMITS,
        valueCost: (node, value) => {
          const kind = operands.get(node);
          return kind ? operandCost(kind, value, jsonSize) : 0;
        },
      };
    } else {
      expression.registerFunction('pad', boundedPad, '<s-ns?:s>');
      expression.assign(EXIT_HOOK as unknown as string, (_expr: unknown, _input: unknown, _env: unknown, result: unknown) =>
        checkValue(result),
      );
    }
  } catch (err) {
    throw toExpressionError(err, expr, 'syntax');
  }
  if (cache.size >= EXPRESSION_LIMITS.cacheSize) cache.delete(cache.keys().next().value!);
  const ast = expression.ast();
  const entry = { expression, budget, bounded, syncLimits, syncAst: isSyncSupported(ast) ? ast : null };
  cache.set(key, entry);
  return entry;
}

/**
 * Converts a JSONata result to plain JSON: sequences become plain arrays (dropping JSONata's
 * marker properties), `undefined` becomes null at the top level, is dropped from objects and
 * is null inside arrays (as JSON.stringify does). Always copies, so callers never share
 * objects with the input. Functions are not JSON and make it throw.
 */
export function toPlainJson(value: unknown, depth = 0): unknown {
  if (depth > 200) throw new Error('Expression result is nested too deeply');
  if (value === undefined || value === null) return null;
  if (typeof value === 'function') throw new Error('Expression result is a function, which is not JSON');
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('Expression result is not a finite number');
    return value;
  }
  if (typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => toPlainJson(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v !== undefined) out[k] = toPlainJson(v, depth + 1);
  }
  return out;
}

/** How an evaluation may run: `sync: false` forces JSONata's own (async) evaluator. */
export interface EvaluationOptions {
  /**
   * Try the synchronous evaluator first (default true). Runs recorded before it existed replay
   * with false, so their evaluation interleaves with parallel branches as it did then.
   */
  sync?: boolean;
  /**
   * Bound built-in functions, regex matches and lambda signatures (default true; see
   * expressionBounds.ts). Runs recorded before the bounds replay with false: an expression that
   * succeeded then must succeed again.
   */
  bounded?: boolean;
  /**
   * Splits a run's expression work across workflow activations (the run workflow's host sets
   * it; none elsewhere). When a slice is due, the synchronous paths answer null (so the caller
   * takes the async path), and JSONata evaluations go through `run`.
   */
  slice?: WorkSlice;
}

/** See EvaluationOptions.slice. */
export interface WorkSlice {
  /** True when the work done since the current slice began (WORK_METER) reached the slice size. */
  due(): boolean;
  /**
   * Runs one JSONata evaluation after those already queued (one at a time, so parallel branches
   * cannot all start before any of them has done work), ending the slice first when it is due.
   */
  run<T>(evaluate: () => Promise<T>): Promise<T>;
}

/** The same guards as JSONata's options and hooks above, for the synchronous evaluator. */
const SYNC_LIMITS: SyncLimits = {
  maxSteps: EXPRESSION_LIMITS.maxSteps,
  stackDepth: EXPRESSION_LIMITS.stackDepth,
  maxSequence: EXPRESSION_LIMITS.maxSequence,
  checkValue,
};
/** With the function bounds: the same charges as the bounded natives above. */
const BOUNDED_SYNC_LIMITS: SyncLimits = {
  ...SYNC_LIMITS,
  cost: (name, args) => nativeCost(name, args, jsonSize),
  workPerStep: WORK_PER_STEP,
};

/**
 * Evaluates `expr` with `input` as the context (`$`, also `$input`) and `$trigger`/`$nodes`
 * bound. Returns plain JSON (see toPlainJson; "no match" is null). Throws ExpressionError
 * for syntax errors, evaluation errors and exceeded limits (EXPRESSION_LIMITS).
 * Caveat: a top-level JSON array input is one value to JSONata, so `$` is the whole array.
 * Expressions in the synchronous subset (syncExpressions.ts) are evaluated without a Promise;
 * the rest, and every evaluation that fails, by JSONata itself.
 */
export async function evaluateExpression(
  expr: string,
  input: unknown,
  bindings: ExpressionBindings,
  options: EvaluationOptions = {},
): Promise<unknown> {
  const now = options.sync === false ? null : evaluateExpressionSync(expr, input, bindings, options);
  return now ? now.value : evaluateWithJsonata(expr, input, bindings, options);
}

/**
 * The synchronous path of evaluateExpression: `{ value }` with exactly the value JSONata would
 * give, or null when JSONata must evaluate (the expression is outside the subset, or this
 * evaluation fails or reaches a limit: JSONata then reports the error). Throws ExpressionError
 * for a syntax error or a result over maxOutputBytes, as evaluateExpression does.
 */
export function evaluateExpressionSync(
  expr: string,
  input: unknown,
  bindings: ExpressionBindings,
  options: EvaluationOptions = {},
): { value: unknown } | null {
  if (options.slice?.due()) return null;
  const { syncAst, syncLimits } = compileEntry(expr, options.bounded ?? true);
  if (!syncAst) return null;
  const result = evaluateSync(syncAst, input, { input, trigger: bindings.trigger, nodes: bindings.nodes }, syncLimits);
  if (result === FALLBACK) return null;
  return { value: plainResult(expr, result) };
}

/** evaluateExpression through JSONata's own evaluator only. */
export async function evaluateWithJsonata(
  expr: string,
  input: unknown,
  bindings: ExpressionBindings,
  options: EvaluationOptions = {},
): Promise<unknown> {
  const evaluate = async () => {
    const { expression, budget } = compileEntry(expr, options.bounded ?? true);
    if (budget.active === 0) budget.reads = 0;
    budget.active++;
    let result: unknown;
    try {
      result = await expression.evaluate(input, { input, trigger: bindings.trigger, nodes: bindings.nodes });
    } catch (err) {
      throw toExpressionError(err, expr, 'evaluation');
    } finally {
      budget.active--;
    }
    return plainResult(expr, result);
  };
  return options.slice ? options.slice.run(evaluate) : evaluate();
}

function plainResult(expr: string, result: unknown): unknown {
  if (jsonSize(result) > EXPRESSION_LIMITS.maxOutputBytes) {
    throw new ExpressionError(
      `Expression failed: its result is larger than ${mib(EXPRESSION_LIMITS.maxOutputBytes)}`,
      expr,
      SIZE_LIMIT_CODE,
    );
  }
  try {
    return toPlainJson(result);
  } catch (err) {
    throw new ExpressionError((err as Error).message, expr);
  }
}

/**
 * Deep-walks a JSON value and replaces every string starting with `=` by the result of the
 * JSONata expression after it (evaluated like evaluateExpression); other values are copied
 * unchanged. Results are JSON, not stringified: `"=1+1"` becomes 2. Evaluates one string at a
 * time in key order, so the result is deterministic. Throws ExpressionError, whose message
 * names the failing path.
 */
export async function resolveTemplated(
  value: unknown,
  input: unknown,
  bindings: ExpressionBindings,
  options: EvaluationOptions = {},
): Promise<unknown> {
  const now = options.sync === false ? null : resolveTemplatedSync(value, input, bindings, options);
  return now ? now.value : resolveAt(value, input, bindings, '', 0, options);
}

/**
 * The synchronous path of resolveTemplated: `{ value }`, or null when one of the strings needs
 * JSONata (then resolveTemplated evaluates the whole value again, each string the fastest way).
 */
export function resolveTemplatedSync(
  value: unknown,
  input: unknown,
  bindings: ExpressionBindings,
  options: EvaluationOptions = {},
): { value: unknown } | null {
  try {
    return { value: resolveSyncAt(value, input, bindings, '', 0, options) };
  } catch (err) {
    if (err === NEEDS_JSONATA) return null;
    throw err;
  }
}

const NEEDS_JSONATA = Symbol('needs-jsonata');

function withPath(err: unknown, path: string, expr: string): unknown {
  const e = err as ExpressionError;
  return path ? new ExpressionError(`${path}: ${e.message}`, expr, e.code, e.position) : err;
}

function resolveSyncAt(
  value: unknown,
  input: unknown,
  bindings: ExpressionBindings,
  path: string,
  depth: number,
  options: EvaluationOptions,
): unknown {
  if (depth > 64) throw new ExpressionError(`Templated value is nested too deeply at ${path || '(root)'}`, '');
  if (isTemplateExpression(value)) {
    const expr = value.slice(EXPRESSION_PREFIX.length);
    let now: { value: unknown } | null;
    try {
      now = evaluateExpressionSync(expr, input, bindings, options);
    } catch (err) {
      throw withPath(err, path, expr);
    }
    if (!now) throw NEEDS_JSONATA;
    return now.value;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveSyncAt(v, input, bindings, `${path}[${i}]`, depth + 1, options));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = resolveSyncAt(v, input, bindings, path ? `${path}.${k}` : k, depth + 1, options);
    return out;
  }
  return value;
}

async function resolveAt(
  value: unknown,
  input: unknown,
  bindings: ExpressionBindings,
  path: string,
  depth: number,
  options: EvaluationOptions,
): Promise<unknown> {
  if (depth > 64) throw new ExpressionError(`Templated value is nested too deeply at ${path || '(root)'}`, '');
  if (isTemplateExpression(value)) {
    const expr = value.slice(EXPRESSION_PREFIX.length);
    try {
      return await evaluateExpression(expr, input, bindings, options);
    } catch (err) {
      throw withPath(err, path, expr);
    }
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) out.push(await resolveAt(value[i], input, bindings, `${path}[${i}]`, depth + 1, options));
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await resolveAt(v, input, bindings, path ? `${path}.${k}` : k, depth + 1, options);
    return out;
  }
  return value;
}
