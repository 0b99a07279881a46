/**
 * JSONata evaluation for workflow graphs (see the expression convention in nodes.ts).
 * Bundled into workflow code: no I/O, no clock of our own. Inside a workflow JSONata's
 * `$now()`/`$millis()` read Temporal's deterministic clock, so they are replay-safe.
 */
import jsonata from 'jsonata';
import { RE2JS } from 're2js';
import { EXPRESSION_PREFIX, isTemplateExpression } from './expression-fields';
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

/**
 * Approximate JSON size of values, memoized per object: JSONata does not mutate a value once a
 * step has produced it, so a value built from shared parts (`[$a, $a]`) is sized in O(1) per
 * new node although its tree size doubles. Sizes over the limit are stored as limit + 1.
 */
const sizes = new WeakMap<object, number>();

function jsonSize(value: unknown, depth = 0): number {
  if (value === null || value === undefined) return 4;
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
    case 'boolean':
      return 8;
    case 'function':
      return 8;
    case 'object':
      break;
    default:
      return 8;
  }
  const obj = value as object;
  // JSONata functions (lambdas, partial applications) carry their environment: not data.
  if ('_jsonata_lambda' in obj || '_jsonata_function' in obj) return 8;
  const known = sizes.get(obj);
  if (known !== undefined) return known;
  const limit = EXPRESSION_LIMITS.maxValueBytes;
  let total = 2;
  if (depth > 500) total = limit + 1;
  else if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length && total <= limit; i++) total += 1 + jsonSize(obj[i], depth + 1);
  } else {
    for (const key in obj) {
      if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
      total += key.length + 4 + jsonSize((obj as Record<string, unknown>)[key], depth + 1);
      if (total > limit) break;
    }
  }
  if (total > limit) total = limit + 1;
  sizes.set(obj, total);
  return total;
}

/** Fails the evaluation when a step produced a value over the allocation limits. */
function checkValue(value: unknown): void {
  if (typeof value === 'string') {
    if (value.length > EXPRESSION_LIMITS.maxStringLength) {
      throw limitError(`The expression built a string longer than ${mib(EXPRESSION_LIMITS.maxStringLength)} (${EXPRESSION_LIMITS.maxStringLength} characters)`);
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
}

/**
 * JSONata options whose `stack` getter doubles as the step counter: JSONata 2.2.x reads
 * `options.stack` twice in the synchronous guard it runs before every step. A getter costs no
 * Promise, unlike JSONata's awaited evaluate-entry hook, which matters in the sandbox. The
 * budget belongs to the cached expression, so concurrent evaluations of the same source share
 * it (they fail sooner, never later). jsonata is pinned; a unit test catches a change of this
 * internal behaviour.
 */
function guardedOptions(budget: CacheEntry['budget']): jsonata.JsonataOptions {
  return {
    RegexEngine: Re2RegexEngine as unknown as RegExpConstructor,
    timeout: EXPRESSION_LIMITS.timeoutMs,
    sequence: EXPRESSION_LIMITS.maxSequence,
    get stack() {
      if (++budget.reads > 2 * EXPRESSION_LIMITS.maxSteps) {
        const error = new Error(`Evaluation exceeded ${EXPRESSION_LIMITS.maxSteps} steps. Check for an infinite loop or use less data`);
        throw Object.assign(error, { code: STEP_LIMIT_CODE });
      }
      return EXPRESSION_LIMITS.stackDepth;
    },
  };
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
export function compileExpression(expr: string): jsonata.Expression {
  return compileEntry(expr).expression;
}

function compileEntry(expr: string): CacheEntry {
  if (typeof expr !== 'string') throw new ExpressionError('Invalid expression: expected a string', String(expr));
  const cached = cache.get(expr);
  if (cached) {
    // Re-insert so eviction drops the least recently used entry.
    cache.delete(expr);
    cache.set(expr, cached);
    return cached;
  }
  const budget = { reads: 0, active: 0 };
  let expression: jsonata.Expression;
  try {
    expression = jsonata(expr, guardedOptions(budget));
    expression.registerFunction('pad', boundedPad, '<s-ns?:s>');
    // Called after every evaluation step with its result (an awaited hook: ~1 Promise per step).
    expression.assign(EXIT_HOOK as unknown as string, (_expr: unknown, _input: unknown, _env: unknown, result: unknown) => checkValue(result));
  } catch (err) {
    throw toExpressionError(err, expr, 'syntax');
  }
  if (cache.size >= EXPRESSION_LIMITS.cacheSize) cache.delete(cache.keys().next().value!);
  const ast = expression.ast();
  const entry = { expression, budget, syncAst: isSyncSupported(ast) ? ast : null };
  cache.set(expr, entry);
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
}

/** The same guards as JSONata's options and hooks above, for the synchronous evaluator. */
const SYNC_LIMITS: SyncLimits = {
  maxSteps: EXPRESSION_LIMITS.maxSteps,
  stackDepth: EXPRESSION_LIMITS.stackDepth,
  maxSequence: EXPRESSION_LIMITS.maxSequence,
  checkValue,
};

/**
 * Evaluates `expr` with `input` as the context (`$`, also `$input`) and `$trigger`/`$nodes`
 * bound. Returns plain JSON (see toPlainJson; "no match" is null). Throws ExpressionError
 * for syntax errors, evaluation errors and exceeded limits (EXPRESSION_LIMITS).
 * Caveat: a top-level JSON array input is one value to JSONata, so `$` is the whole array.
 * Expressions in the synchronous subset (syncExpressions.ts) are evaluated without a Promise;
 * the rest, and every evaluation that fails, by JSONata itself.
 */
export async function evaluateExpression(expr: string, input: unknown, bindings: ExpressionBindings, options: EvaluationOptions = {}): Promise<unknown> {
  const now = options.sync === false ? null : evaluateExpressionSync(expr, input, bindings);
  return now ? now.value : evaluateWithJsonata(expr, input, bindings);
}

/**
 * The synchronous path of evaluateExpression: `{ value }` with exactly the value JSONata would
 * give, or null when JSONata must evaluate (the expression is outside the subset, or this
 * evaluation fails or reaches a limit: JSONata then reports the error). Throws ExpressionError
 * for a syntax error or a result over maxOutputBytes, as evaluateExpression does.
 */
export function evaluateExpressionSync(expr: string, input: unknown, bindings: ExpressionBindings): { value: unknown } | null {
  const { syncAst } = compileEntry(expr);
  if (!syncAst) return null;
  const result = evaluateSync(syncAst, input, { input, trigger: bindings.trigger, nodes: bindings.nodes }, SYNC_LIMITS);
  if (result === FALLBACK) return null;
  return { value: plainResult(expr, result) };
}

/** evaluateExpression through JSONata's own evaluator only. */
export async function evaluateWithJsonata(expr: string, input: unknown, bindings: ExpressionBindings): Promise<unknown> {
  const { expression, budget } = compileEntry(expr);
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
}

function plainResult(expr: string, result: unknown): unknown {
  if (jsonSize(result) > EXPRESSION_LIMITS.maxOutputBytes) {
    throw new ExpressionError(`Expression failed: its result is larger than ${mib(EXPRESSION_LIMITS.maxOutputBytes)}`, expr, SIZE_LIMIT_CODE);
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
export async function resolveTemplated(value: unknown, input: unknown, bindings: ExpressionBindings, options: EvaluationOptions = {}): Promise<unknown> {
  const now = options.sync === false ? null : resolveTemplatedSync(value, input, bindings);
  return now ? now.value : resolveAt(value, input, bindings, '', 0, options);
}

/**
 * The synchronous path of resolveTemplated: `{ value }`, or null when one of the strings needs
 * JSONata (then resolveTemplated evaluates the whole value again, each string the fastest way).
 */
export function resolveTemplatedSync(value: unknown, input: unknown, bindings: ExpressionBindings): { value: unknown } | null {
  try {
    return { value: resolveSyncAt(value, input, bindings, '', 0) };
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

function resolveSyncAt(value: unknown, input: unknown, bindings: ExpressionBindings, path: string, depth: number): unknown {
  if (depth > 64) throw new ExpressionError(`Templated value is nested too deeply at ${path || '(root)'}`, '');
  if (isTemplateExpression(value)) {
    const expr = value.slice(EXPRESSION_PREFIX.length);
    let now: { value: unknown } | null;
    try {
      now = evaluateExpressionSync(expr, input, bindings);
    } catch (err) {
      throw withPath(err, path, expr);
    }
    if (!now) throw NEEDS_JSONATA;
    return now.value;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveSyncAt(v, input, bindings, `${path}[${i}]`, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = resolveSyncAt(v, input, bindings, path ? `${path}.${k}` : k, depth + 1);
    return out;
  }
  return value;
}

async function resolveAt(value: unknown, input: unknown, bindings: ExpressionBindings, path: string, depth: number, options: EvaluationOptions): Promise<unknown> {
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
