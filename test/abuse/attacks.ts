/**
 * The payloads of each attack class of issue 26 (F1–F8), without jest, so the tests in this
 * folder and the abuse benchmark (scripts/bench/abuse.ts) send exactly the same things.
 */

/** A message that names a limit or a refusal, as every bounded failure must. */
export const CLEAR_LIMIT_MESSAGE =
  /limit|exceed|too (large|long|many|big|deep|complex)|at most|refused|unsupported|not allowed|not supported|RE2|budget|memory|time/i;

/** `n` copies of `ch`. */
const times = (ch: string, n: number) => ch.repeat(n);

/**
 * F1: text that is not well-formed UTF-16 (or that PostgreSQL cannot store) in what a live
 * code node throws, logs or returns. Each source is a code node's body.
 */
export const F1_SOURCES = {
  'a thrown message with a lone high surrogate': 'throw new Error("poison" + String.fromCharCode(0xd800));',
  'a thrown message with a lone low surrogate': 'throw new Error("poison" + String.fromCharCode(0xdc00) + "tail");',
  'a thrown message with NUL': 'throw new Error("poison" + String.fromCharCode(0) + "tail");',
  'a thrown error whose name has a lone surrogate': 'const e = new Error("poison"); e.name = "Bad" + String.fromCharCode(0xd800); throw e;',
  'a thrown non-Error object with a lone surrogate':
    'throw { message: "poison" + String.fromCharCode(0xd800), code: String.fromCharCode(0xdbff) };',
  'a 1 MiB thrown message ending in a lone surrogate': 'throw new Error("poison" + "x".repeat(1024 * 1024) + String.fromCharCode(0xd800));',
} as const;

/** F1 variants where the code node succeeds but logs or returns the bad text. */
export const F1_SUCCEEDING_SOURCES = {
  'a log line with a lone surrogate and NUL':
    'console.log("poison" + String.fromCharCode(0xd800), { k: String.fromCharCode(0) }); return { logged: true };',
  'an output with a lone surrogate in a key and a value':
    'const o = {}; o["k" + String.fromCharCode(0xd800)] = "v" + String.fromCharCode(0xdc00); return { o, logged: true };',
} as const;

/** F2: SQL whose values are huge, on POST /api/v1/databases/query (2.6 KB of SQL for a 600 MB value). */
export const F2_SQL = {
  'one 600 MB value': `select replace(replace('${times('a', 600)}','a','${times('a', 1000)}'),'a','${times('a', 1000)}') as v`,
  'a wide row of 40 columns of 1 MB': `select ${Array.from({ length: 40 }, (_, i) => `replace('${times('a', 1000)}','a','${times('a', 1000)}') as c${i}`).join(', ')}`,
  'many rows of 1 MB each': `select n, replace('${times('a', 1000)}','a','${times('a', 1000)}') as v from generate_series(1, 500) as g(n)`,
} as const;

/**
 * F3 (dry runs, evaluated by the API process) and F4 (the same in live runs, on the worker):
 * JSONata that was unbounded in work, memory or regular-expression backtracking.
 */
export const F3_EXPRESSIONS = {
  '$sort of 100,000 numbers': '$count($sort([1..100000]))',
  '$distinct of 60,000 numbers': '$count($distinct([1..60000]))',
  '$replace over a 1,000,000-character string': '$length($replace($pad("", 1000000, "a"), /a/, "b"))',
  '$toMillis with a ten-[f] picture': `$toMillis("${times('1', 30)}x", "[f][f][f][f][f][f][f][f][f][f]")`,
  'a lambda signature <n+n+…:n> called with a mismatch': `($f := function($a)<${Array.from({ length: 12 }, () => 'n+').join('')}:n>{ 1 }; $f(${Array.from({ length: 30 }, () => '1').join(', ')}, "x"))`,
} as const;

/** What each expression may legitimately yield when the service computes it within its bounds instead of refusing it. */
export const F3_ACCEPTED: Record<keyof typeof F3_EXPRESSIONS, { message: RegExp; result?: unknown }> = {
  '$sort of 100,000 numbers': { message: CLEAR_LIMIT_MESSAGE, result: 100000 },
  '$distinct of 60,000 numbers': { message: CLEAR_LIMIT_MESSAGE, result: 60000 },
  '$replace over a 1,000,000-character string': { message: CLEAR_LIMIT_MESSAGE, result: 1000000 },
  // A picture or a signature that cannot match may fail as such, as long as it says so.
  // JSONata answers "no value" for a string the picture does not match.
  '$toMillis with a ten-[f] picture': { message: /picture|match|parse|limit|unsupported|RE2|refused/i, result: null },
  'a lambda signature <n+n+…:n> called with a mismatch': { message: /signature|match|limit|unsupported|RE2|refused/i },
};

/** The check of a run that succeeded under an F3 expression: it must carry the accepted result (null: no value). */
export function f3Result(name: keyof typeof F3_EXPRESSIONS): ((run: { output?: unknown }) => boolean) | undefined {
  const accepted = F3_ACCEPTED[name];
  if (!('result' in accepted)) return undefined;
  return (run) => (accepted.result === null ? run.output == null : run.output === accepted.result);
}

/** F4: the picture that aborted the whole process from a worker thread. */
export const F4_EXPRESSION = F3_EXPRESSIONS['$toMillis with a ten-[f] picture'];

/**
 * F4 by volume: nodes that each use up an expression's whole work budget (10,000 steps) and fail,
 * chained with onError continue. Done in one workflow activation, their work grows with the
 * number of nodes (up to 500) past the SDK's isolateExecutionTimeout, whose interrupt aborted
 * the process. Distinct sources, since evaluations of one cached expression share a budget.
 */
export const F4_CHAIN_LENGTH = 12;
export const f4ChainExpression = (i: number) => `$length($replace($pad("", 1000000, "a"), /a/, "b")) + ${i}`;

/** F5: parallel read-only queries of A. */
export const F5_PARALLEL = 30;
/** F5: a read-only query that keeps a PostgreSQL backend busy for seconds (pg_sleep is refused by the checker). */
export const F5_CPU_SQL = 'select count(*) as n from generate_series(1, 100000000) as g(n)';

/** F6: code nodes of one dry run that spin for ever. */
export const F6_SPINNERS = 40;
export const F6_SOURCE = 'while (true) {}';

/** F7: allocations outside the QuickJS heap's usual accounting (300 × 1 MiB). */
export const F7_SOURCES = {
  '300 × 1 MiB Uint8Array':
    'const keep = []; for (let i = 0; i < 300; i++) keep.push(new Uint8Array(1024 * 1024)); return { n: keep.length };',
  '300 × 1 MiB ArrayBuffer':
    'const keep = []; for (let i = 0; i < 300; i++) keep.push(new ArrayBuffer(1024 * 1024)); return { n: keep.length };',
  '300 × 1 MiB Float64Array views over fresh buffers':
    'const keep = []; for (let i = 0; i < 300; i++) keep.push(new Float64Array(128 * 1024)); return { n: keep.length };',
  // padEnd builds flat strings (a doubling `s + s` makes ropes, which allocate almost nothing).
  '300 × 1 MiB strings':
    'const keep = []; for (let i = 0; i < 300; i++) keep.push(String(i).padEnd(1024 * 1024, "x")); return { n: keep.length };',
} as const;

/** F8: what a dry run's code node returns, logs or throws. */
export const F8_SOURCES = {
  'returns "x\\u0000y"': 'return { text: "x\\u0000y" };',
  'returns a lone surrogate': 'return { text: "x" + String.fromCharCode(0xd800) };',
  'logs NUL and a lone surrogate': 'console.log("x\\u0000y", String.fromCharCode(0xdc00)); return { ok: true };',
  'throws a lone surrogate': 'throw new Error("x" + String.fromCharCode(0xd800));',
  'returns a NUL in a key': 'const o = {}; o["k\\u0000"] = 1; return o;',
} as const;
/** F8: dry runs with bad text before A's and B's live runs must still be admitted. */
export const F8_FLOOD = 50;
