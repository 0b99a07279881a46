/**
 * JSONata evaluation for workflow graphs (see the expression convention in nodes.ts).
 * Bundled into workflow code: no I/O, no clock of our own. Inside a workflow JSONata's
 * `$now()`/`$millis()` read Temporal's deterministic clock, so they are replay-safe.
 */
import jsonata from 'jsonata';
import { EXPRESSION_PREFIX, isTemplateExpression } from './expression-fields';

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
 * predict real runs. Not guarded: a few steps building huge strings (`$pad("", 1e8)`).
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

interface CacheEntry {
  expression: jsonata.Expression;
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
 * The returned object is shared: do not `assign`/`registerFunction` on it, and evaluate through
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
  } catch (err) {
    throw toExpressionError(err, expr, 'syntax');
  }
  if (cache.size >= EXPRESSION_LIMITS.cacheSize) cache.delete(cache.keys().next().value!);
  const entry = { expression, budget };
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

/**
 * Evaluates `expr` with `input` as the context (`$`, also `$input`) and `$trigger`/`$nodes`
 * bound. Returns plain JSON (see toPlainJson; "no match" is null). Throws ExpressionError
 * for syntax errors, evaluation errors and exceeded limits (EXPRESSION_LIMITS).
 * Caveat: a top-level JSON array input is one value to JSONata, so `$` is the whole array.
 */
export async function evaluateExpression(expr: string, input: unknown, bindings: ExpressionBindings): Promise<unknown> {
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
export async function resolveTemplated(value: unknown, input: unknown, bindings: ExpressionBindings): Promise<unknown> {
  return resolveAt(value, input, bindings, '', 0);
}

async function resolveAt(value: unknown, input: unknown, bindings: ExpressionBindings, path: string, depth: number): Promise<unknown> {
  if (depth > 64) throw new ExpressionError(`Templated value is nested too deeply at ${path || '(root)'}`, '');
  if (isTemplateExpression(value)) {
    const expr = value.slice(EXPRESSION_PREFIX.length);
    try {
      return await evaluateExpression(expr, input, bindings);
    } catch (err) {
      const e = err as ExpressionError;
      throw path ? new ExpressionError(`${path}: ${e.message}`, expr, e.code, e.position) : err;
    }
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) out.push(await resolveAt(value[i], input, bindings, `${path}[${i}]`, depth + 1));
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await resolveAt(v, input, bindings, path ? `${path}.${k}` : k, depth + 1);
    return out;
  }
  return value;
}
