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

/**
 * A JSON escape: an escaped surrogate pair, one `\uXXXX`, or any other escaped character (taken
 * whole, so the text `\\u0000` — an escaped backslash, then `u0000` — is never read as an escape).
 */
const JSON_ESCAPE = /\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u([0-9a-fA-F]{4})|\\[^u]/g;

const isBadUnit = (hex: string) => {
  const unit = parseInt(hex, 16);
  return unit === 0 || (unit >= 0xd800 && unit <= 0xdfff);
};

/**
 * JSON text with every `\u0000` and lone-surrogate escape (what JSON.stringify writes for them)
 * replaced by `\ufffd`, and any raw bad code unit by U+FFFD: the same rule as `toStorable`, applied
 * to serialized JSON in one pass without walking the value (the ORM's json columns, Temporal payloads).
 */
export function wellFormedJsonText(json: string): string {
  const escaped = json.includes('\\u') ? json.replace(JSON_ESCAPE, (match: string, unit: string | undefined) => (unit !== undefined && isBadUnit(unit) ? '\\ufffd' : match)) : json;
  return storableString(escaped);
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
    const entries = Array.isArray(v) ? v.map((item, i) => [String(i), item] as const) : Object.entries(v as Record<string, unknown>);
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
  const out: unknown = Array.isArray(root) ? [] : {};
  const stack: Array<{ src: unknown; dst: Record<string, unknown> | unknown[] }> = [{ src: root, dst: out as never }];
  while (stack.length > 0) {
    const { src, dst } = stack.pop()!;
    const entries = Array.isArray(src) ? src.map((item, i) => [i, item] as const) : Object.entries(src as Record<string, unknown>);
    for (const [key, item] of entries) {
      let copy: unknown = item;
      if (typeof item === 'string') copy = storableString(item);
      else if (isPlainContainer(item)) {
        copy = Array.isArray(item) ? [] : {};
        stack.push({ src: item, dst: copy as never });
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
  return proto === Object.prototype || proto === null;
}
