/**
 * The one rule for text that may leave the process: U+0000 and lone UTF-16 surrogates are not
 * well-formed. PostgreSQL's `text` and `jsonb` refuse U+0000 (22P05) and `jsonb` refuses lone
 * surrogates (which JSON.stringify writes as `\udXXX` escapes); Temporal's protobuf strings must
 * be valid UTF-8, and a lone surrogate in a failure message makes the SDK's core reject the
 * whole workflow task completion (issue 26, F1).
 * Input that arrives through the API is refused with a clear message (`findUnstorableText`);
 * values the engine produces (node outputs, logs, errors) are made well-formed at the boundaries
 * (`toStorable`, `storableString`, `wellFormedJsonText`), each bad code unit replaced by U+FFFD.
 *
 * Pure and free of Node built-ins: the workflow sandbox loads it (temporal/dataConverter.ts).
 * Values are walked iteratively (no recursion), so deeply nested input cannot overflow the stack.
 */

/** NUL or a UTF-16 surrogate; the callers tell paired surrogates from lone ones. */
// eslint-disable-next-line no-control-regex
const SUSPECT = /[\u0000\ud800-\udfff]/;
// eslint-disable-next-line no-control-regex
const NUL_OR_LONE_SURROGATE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export const REPLACEMENT_CHARACTER = '\ufffd';

/** What is wrong with one string, or null when PostgreSQL can store it. */
export function textProblem(s: string): string | null {
  if (!SUSPECT.test(s)) return null;
  if (s.includes('\u0000')) return 'contains a NUL character (U+0000)';
  NUL_OR_LONE_SURROGATE.lastIndex = 0;
  return NUL_OR_LONE_SURROGATE.test(s) ? 'contains a lone UTF-16 surrogate (invalid Unicode)' : null;
}

/** The string with every NUL and lone surrogate replaced by U+FFFD. */
export function storableString(s: string): string {
  return SUSPECT.test(s) ? s.replace(NUL_OR_LONE_SURROGATE, REPLACEMENT_CHARACTER) : s;
}

const HEX2 = '[0-9a-fA-F]{2}';
/**
 * A `\u0000` or lone-surrogate escape in JSON text, with the even run of backslashes before it
 * (`$1`): the escape must itself be unescaped (`\\u0000` is a backslash, then text). A high
 * surrogate escape followed by a low one, and that low one, are a pair and do not match.
 * One regular expression with a string replacement, no callback: 25 MB of escapes take about
 * half a second rather than ten, which matters inside a workflow activation.
 */
const BAD_JSON_ESCAPE = new RegExp(
  String.raw`(?<!\\)((?:\\\\)*)\\u(?:0000|[dD][89abAB]${HEX2}(?!\\u[dD][c-fC-F]${HEX2})|(?<!(?:^|[^\\])(?:\\\\)*\\u[dD][89abAB]${HEX2}\\u)[dD][c-fC-F]${HEX2})`,
  'g',
);

/**
 * JSON text with every `\u0000` and lone-surrogate escape (what JSON.stringify writes for them)
 * replaced by `\ufffd`, and any raw bad code unit by U+FFFD: the same rule as `toStorable`, applied
 * to serialized JSON without walking the value (the ORM's json columns, Temporal payloads).
 */
export function wellFormedJsonText(json: string): string {
  return storableString(json.includes('\\u') ? json.replace(BAD_JSON_ESCAPE, '$1\\ufffd') : json);
}

/**
 * The parameters of a raw SQL statement (`em.execute`, `client.query`), made storable by the
 * rule the entity types apply (db/wellFormedTypes.ts): each string by `storableString`, plain
 * data (arrays, objects) by `toStorable`; other values as they are. A string is taken for text:
 * JSON text must be serialized from a storable value (`JSON.stringify(toStorable(v))`), since
 * JSON.stringify writes NUL and lone surrogates as the escapes `jsonb` refuses.
 */
export function wellFormedParams<T extends readonly unknown[]>(values: T): T {
  let out: unknown[] | null = null;
  values.forEach((v, i) => {
    const clean = typeof v === 'string' ? storableString(v) : toStorable(v);
    if (clean !== v) (out ??= [...values])[i] = clean;
  });
  return out ?? values;
}

export interface TextFinding {
  /** Dotted path of the offending string (`body.items.2.name`); `key` marks an object key. */
  path: string;
  problem: string;
}

export interface DepthFinding {
  path: string;
  problem: 'too deeply nested';
}

/**
 * The first string (value or object key) in `value` that PostgreSQL cannot store, or the first
 * place nested deeper than `maxDepth`; null when the value is clean. Plain data only (arrays and
 * plain objects, as JSON.parse makes them); other objects are not looked into.
 */
export function findUnstorableText(value: unknown, options: { root?: string; maxDepth?: number } = {}): TextFinding | DepthFinding | null {
  const maxDepth = options.maxDepth ?? Infinity;
  const stack: Array<{ v: unknown; path: string; depth: number }> = [{ v: value, path: options.root ?? '', depth: 0 }];
  while (stack.length > 0) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) return { path, problem };
      continue;
    }
    // Like toStorable, only plain data is walked: not the bytes of a Uint8Array, nor class instances.
    if (!isPlainContainer(v)) continue;
    if (depth >= maxDepth) return { path, problem: 'too deeply nested' };
    const entries = Array.isArray(v) ? v.map((item, i) => [String(i), item] as const) : Object.entries(v);
    for (const [key, item] of entries) {
      const at = path ? `${path}.${key}` : key;
      const keyProblem = Array.isArray(v) ? null : textProblem(key);
      if (keyProblem) return { path: at, problem: `has a key that ${keyProblem}` };
      stack.push({ v: item, path: at, depth: depth + 1 });
    }
  }
  return null;
}

/**
 * A copy of a JSON-like value in which every string and key is storable; the value itself when
 * nothing needs replacing. Values that are not plain data (dates, class instances, byte arrays)
 * are kept as they are, unwalked.
 */
export function toStorable<T>(value: T): T {
  if (findUnstorableText(value) === null) return value;
  return replaceDeep(value) as T;
}

function replaceDeep(root: unknown): unknown {
  if (typeof root === 'string') return storableString(root);
  if (!isPlainContainer(root)) return root;
  const out: Record<string, unknown> | unknown[] = Array.isArray(root) ? [] : {};
  const stack: Array<{ src: unknown; dst: Record<string, unknown> | unknown[] }> = [{ src: root, dst: out }];
  while (stack.length > 0) {
    const { src, dst } = stack.pop()!;
    const entries = Array.isArray(src) ? src.map((item, i) => [i, item] as const) : Object.entries(src as Record<string, unknown>);
    for (const [key, item] of entries) {
      let copy: unknown = item;
      if (typeof item === 'string') copy = storableString(item);
      else if (isPlainContainer(item)) {
        const container: Record<string, unknown> | unknown[] = Array.isArray(item) ? [] : {};
        copy = container;
        stack.push({ src: item, dst: container });
      }
      if (typeof key === 'number') (dst as unknown[])[key] = copy;
      // defineProperty: an own `__proto__` key (JSON.parse makes them) stays a plain key.
      else Object.defineProperty(dst, storableString(key), { value: copy, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

function isPlainContainer(v: unknown): v is Record<string, unknown> | unknown[] {
  if (Array.isArray(v)) return true;
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  // Any realm's Object.prototype (values from a worker thread or a vm context have their own).
  return proto === null || Object.getPrototypeOf(proto) === null;
}
