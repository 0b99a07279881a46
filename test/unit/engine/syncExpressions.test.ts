/**
 * Differential test of the synchronous expression evaluator (engine/syncExpressions.ts) against
 * JSONata itself: a seeded generator writes thousands of expressions from the supported grammar
 * (plus some outside it, which must fall back) and random JSON inputs; every pair must give the
 * same outcome on both paths (deep-equal value, or the same error code and message).
 */
import {
  EXPRESSION_LIMITS,
  evaluateExpression,
  evaluateExpressionSync,
  evaluateWithJsonata,
  resolveTemplated,
  type ExpressionBindings,
} from '../../../engine/expressions';
import { isSyncSupported } from '../../../engine/syncExpressions';
import jsonata from 'jsonata';

/** mulberry32: small, seeded, deterministic. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
type Rng = ReturnType<typeof rng>;

const KEYS = ['a', 'b', 'name', 'price', 'qty', 'items', 'tags', 'x', 'flag', 'n'] as const;
const STRINGS = ['', 'abc', 'ABC', '12', '3.5', ' a  b ', 'Ünïcødé', 'x,y', 'true', '-7', 'a\tb\nc', '😀ok'];
const NUMBERS = [0, 1, 2, 3, -1, 0.5, 2.25, 10, 100, -3.75, 1e21, 0.1, 7];

function randomValue(r: Rng, depth: number): unknown {
  const roll = r.int(depth > 2 ? 5 : 9);
  switch (roll) {
    case 0:
      return r.pick(NUMBERS);
    case 1:
      return r.pick(STRINGS);
    case 2:
      return r.chance(0.5);
    case 3:
      return null;
    case 4:
      return r.int(20);
    case 5:
    case 6:
      return randomObject(r, depth + 1);
    case 7:
      return Array.from({ length: r.int(5) }, () => randomValue(r, depth + 1));
    default:
      return Array.from({ length: r.int(4) }, () => randomObject(r, depth + 1));
  }
}

function randomObject(r: Rng, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of KEYS) if (r.chance(0.45)) out[key] = randomValue(r, depth + 1);
  return out;
}

const FUNCTIONS: Array<[string, number, number]> = [
  ['string', 0, 2],
  ['number', 0, 1],
  ['length', 0, 1],
  ['uppercase', 0, 1],
  ['lowercase', 0, 1],
  ['trim', 0, 1],
  ['substring', 1, 3],
  ['substringBefore', 1, 2],
  ['substringAfter', 1, 2],
  ['contains', 1, 2],
  ['join', 1, 2],
  ['count', 1, 1],
  ['sum', 1, 1],
  ['max', 1, 1],
  ['min', 1, 1],
  ['average', 1, 1],
  ['exists', 1, 1],
  ['boolean', 0, 1],
  ['not', 0, 1],
  ['keys', 0, 1],
  ['lookup', 1, 2],
  ['round', 0, 2],
  ['floor', 0, 1],
  ['ceil', 0, 1],
  ['abs', 0, 1],
  ['sqrt', 0, 1],
  ['power', 1, 2],
  ['append', 2, 2],
  ['merge', 1, 1],
  ['reverse', 1, 1],
  ['type', 1, 1],
  ['distinct', 1, 1],
];
/** Outside the subset: these must fall back to JSONata. */
const OUTSIDE = [
  '$map(items, function($v) { $v.price })',
  '[1..3]',
  'items.*',
  '**.name',
  '$pad(name, 5)',
  '$sort(tags)',
  '$x := 1',
  '($a := price; $a * 2)',
  'items#$i.name',
  'items^(price)',
  '$split(name, ",")',
  'name ~> $uppercase()',
  "$replace(name, 'a', 'b')",
  '$base64encode(name)',
  'items@$i.name',
  '$formatNumber(price, "#0.00")',
  'items{name: price}',
];

function path(r: Rng, depth: number): string {
  const head = r.chance(0.25) ? r.pick(['$', '$$', '$input', '$trigger', '$nodes.n1', '$nodes.n2', '$nodes']) : r.pick(KEYS);
  const parts = [head];
  const steps = r.int(3);
  for (let i = 0; i < steps; i++) parts.push(r.chance(0.15) ? `(${expression(r, depth + 1)})` : r.pick(KEYS));
  let text = parts.join('.');
  if (r.chance(0.3)) text += predicate(r, depth);
  if (r.chance(0.1)) text += '[]';
  if (r.chance(0.15)) text += '.' + r.pick(KEYS);
  return text;
}

function predicate(r: Rng, depth: number): string {
  switch (r.int(4)) {
    case 0:
      return `[${r.pick([0, 1, 2, -1, -2, 0.7, 5])}]`;
    case 1:
      return `[${r.pick(KEYS)} ${r.pick(['>', '<', '=', '!=', '>='])} ${literal(r)}]`;
    case 2:
      return `[${r.pick(KEYS)}]`;
    default:
      return `[${expression(r, depth + 1)}]`;
  }
}

function literal(r: Rng): string {
  switch (r.int(5)) {
    case 0:
      return JSON.stringify(r.pick(STRINGS));
    case 1:
      return String(r.pick(NUMBERS.filter((n) => n >= 0 && n < 1e20)));
    case 2:
      return r.pick(['true', 'false']);
    case 3:
      return 'null';
    default:
      return String(r.int(10));
  }
}

function expression(r: Rng, depth = 0): string {
  if (depth > 3) return r.chance(0.5) ? literal(r) : path(r, depth);
  switch (r.int(14)) {
    case 0:
    case 1:
    case 2:
      return path(r, depth);
    case 3:
      return literal(r);
    case 4:
    case 5:
      return `${expression(r, depth + 1)} ${r.pick(['+', '-', '*', '/', '%', '&', '=', '!=', '<', '<=', '>', '>=', 'and', 'or', 'in'])} ${expression(r, depth + 1)}`;
    case 6:
      return `-${r.chance(0.5) ? path(r, depth) : `(${expression(r, depth + 1)})`}`;
    case 7:
      return `${expression(r, depth + 1)} ? ${expression(r, depth + 1)}${r.chance(0.7) ? ` : ${expression(r, depth + 1)}` : ''}`;
    case 8:
      return `[${Array.from({ length: r.int(4) }, () => expression(r, depth + 1)).join(', ')}]${r.chance(0.2) ? predicate(r, depth) : ''}`;
    case 9: {
      const pairs = Array.from({ length: r.int(4) }, () => {
        const key = r.chance(0.8) ? JSON.stringify(r.pick(['k', 'total', 'name', 'k'])) : r.pick(KEYS);
        return `${key}: ${expression(r, depth + 1)}`;
      });
      const object = `{ ${pairs.join(', ')} }`;
      return r.chance(0.3) ? `${r.pick(['items', '$', 'tags', 'a'])}.${object}` : object;
    }
    case 10:
    case 11: {
      const [name, min, max] = r.pick(FUNCTIONS);
      const arity = min + r.int(max - min + 1);
      return `$${name}(${Array.from({ length: arity }, () => expression(r, depth + 1)).join(', ')})`;
    }
    case 12:
      return `(${Array.from({ length: 1 + r.int(2) }, () => expression(r, depth + 1)).join('; ')})`;
    default:
      return r.chance(0.5) ? r.pick(OUTSIDE) : `items.(${expression(r, depth + 1)})`;
  }
}

type Outcome = { value: unknown } | { error: { name: string; message: string; code?: string; position?: number } };

async function outcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { value: await run() };
  } catch (err) {
    const e = err as { name: string; message: string; code?: string; position?: number };
    return { error: { name: e.name, message: e.message, code: e.code, position: e.position } };
  }
}

const clone = <T>(value: T): T => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

describe('synchronous evaluator = JSONata (differential)', () => {
  test('thousands of generated expression/input pairs give identical outcomes; most take the sync path', async () => {
    const r = rng(20261123);
    // 2,000 pairs by default (about 20 s on 2 busy cores); SYNC_DIFFERENTIAL_PAIRS=20000 goes deeper.
    const total = Number(process.env.SYNC_DIFFERENTIAL_PAIRS ?? 2000);
    let sync = 0;
    let errors = 0;
    let unsupported = 0;
    for (let i = 0; i < total; i++) {
      const expr = expression(r);
      const input = r.chance(0.15) ? randomValue(r, 0) : randomObject(r, 0);
      const bindings: ExpressionBindings = { trigger: randomObject(r, 1), nodes: { n1: randomObject(r, 1), n2: randomValue(r, 1) } };
      const fresh = () => [clone(input), clone(bindings)] as const;

      const reference = await outcome(() => evaluateWithJsonata(expr, ...fresh()));
      // The function bounds (expressionBounds.ts) change no result of these small inputs.
      const unbounded = await outcome(() => evaluateWithJsonata(expr, ...fresh(), { bounded: false }));
      const combined = await outcome(() => evaluateExpression(expr, ...fresh()));
      let direct: Outcome | null;
      try {
        const now = evaluateExpressionSync(expr, ...fresh());
        direct = now ? { value: now.value } : null;
      } catch (err) {
        const e = err as { name: string; message: string; code?: string; position?: number };
        direct = { error: { name: e.name, message: e.message, code: e.code, position: e.position } };
      }
      const context = `expression ${JSON.stringify(expr)} with input ${JSON.stringify(input)}`;
      expect({ context, outcome: combined }).toStrictEqual({ context, outcome: reference });
      expect({ context, outcome: unbounded }).toStrictEqual({ context, outcome: reference });
      if (direct) {
        sync++;
        expect({ context, outcome: direct }).toStrictEqual({ context, outcome: reference });
      }
      if ('error' in reference) errors++;
      let supported = false;
      try {
        supported = isSyncSupported(jsonata(expr).ast());
      } catch {
        supported = false;
      }
      if (!supported) unsupported++;
      // Inside the subset, JSONata is asked only when the evaluation fails.
      if (supported && 'value' in reference) expect({ context, sync: direct !== null }).toEqual({ context, sync: true });
    }
    console.log(
      `differential: ${total} pairs, ${sync} on the sync path, ${total - sync} by JSONata (${unsupported} outside the subset or invalid, ${errors} errors)`,
    );
    expect(sync).toBeGreaterThan(total / 2);
  }, 600_000);

  const bindings: ExpressionBindings = { trigger: { user: 'ada' }, nodes: { fetch: { body: { items: [1, 2, 3] } } } };

  test('hand-picked cases: sequences, singletons, missing values, bindings, errors', async () => {
    const input = {
      items: [{ x: 1, t: ['a'] }, { x: 2, t: ['b', 'c'] }, { x: 3 }],
      nested: [
        [1, 2],
        [3, [4]],
      ],
      s: 'Hello',
      n: null,
    };
    const cases = [
      'items.x',
      'items[x > 1].x',
      'items[0]',
      'items[-1].x',
      'items.t',
      'items.t[0]',
      'items.t[]',
      'items[x=2].t[]',
      'nested',
      'nested[0]',
      'nested[1][1]',
      'missing',
      'missing.deeper',
      'n',
      '$.items[1]',
      '$$.s',
      '$input.s',
      '$trigger.user',
      '$nodes.fetch.body.items[1]',
      '$sum($nodes.fetch.body.items)',
      '{ "a": items.x, "b": missing }',
      'items.{ "x2": x * 2 }',
      '{ "k": items.x }',
      '[items.x, 4]',
      '[[1], [2]]',
      '$string(items)',
      '$keys(items)',
      '$count(items[x > 5])',
      '$exists(missing)',
      's & " " & 1.5 & true & null',
      '$uppercase()',
      's.$length()',
      'items.x + 1',
      '1 + "a"',
      'items.x > 1',
      '"a" < 1',
      '$substring(s, -3, 2)',
      '$round(2.5) & $round(3.5) & $round(1.005, 2)',
      '$number("0x1F") + $number("1e2")',
      '$join(items.t, "-")',
      '$lookup(items, "x")',
      '$distinct([1, 1, "1", [1], [1]])',
      '$boolean([0, ""]) or $not({})',
      '{ "a": 1, "a": 2 }',
      'items.{ "a": x }',
      '$max([]) = null',
      '2 in [1, 2]',
      '-(items.x)',
    ];
    let sync = 0;
    for (const expr of cases) {
      const reference = await outcome(() => evaluateWithJsonata(expr, clone(input), bindings));
      const combined = await outcome(() => evaluateExpression(expr, clone(input), bindings));
      expect({ expr, outcome: combined }).toStrictEqual({ expr, outcome: reference });
      const now = evaluateExpressionSync(expr, clone(input), bindings);
      if (now) {
        sync++;
        expect({ expr, outcome: { value: now.value } }).toStrictEqual({ expr, outcome: reference });
      } else {
        // Only errors (and constructs outside the subset, none here) leave the sync path.
        expect('error' in reference).toBe(true);
      }
    }
    expect(sync).toBeGreaterThan(cases.length - 8);
  });

  test('the step budget holds on the sync path exactly where JSONata counts it', async () => {
    // `$count(items[even])` takes 4 + 2 × items steps: 10 000 steps at 4 998 items.
    expect(EXPRESSION_LIMITS.maxSteps).toBe(10_000);
    for (const n of [4997, 4998, 4999, 5000]) {
      const input = { items: Array.from({ length: n }, (_, i) => ({ even: i % 2 === 0 })) };
      const reference = await outcome(() => evaluateWithJsonata('$count(items[even])', input, bindings));
      const now = evaluateExpressionSync('$count(items[even])', input, bindings);
      // JSONata also has a 1 s wall-clock limit (D1012); on a loaded machine ~10,000 steps can
      // reach it first. The sync path has no clock, so its answer is checked regardless.
      const timedOut = (reference as { error?: { code?: string } }).error?.code === 'D1012';
      if (n <= 4998) {
        if (!timedOut) expect(reference).toEqual({ value: Math.ceil(n / 2) });
        expect(now).toEqual({ value: Math.ceil(n / 2) });
      } else {
        if (!timedOut) expect(reference).toMatchObject({ error: { code: 'STEPS' } });
        expect(now).toBeNull();
        // The fallback reports JSONata's own limit error: the step budget, or on a loaded
        // machine its 1 s wall-clock timeout (D1012) first, as this second evaluation pays twice.
        const failed = await evaluateExpression('$count(items[even])', input, bindings).then(
          () => null,
          (err: { code?: string }) => err,
        );
        expect(['STEPS', 'D1012']).toContain(failed?.code);
      }
    }
  });

  test('size limits and errors fall back to JSONata, which reports them', async () => {
    const big = { s: 'x'.repeat(EXPRESSION_LIMITS.maxStringLength) };
    expect(evaluateExpressionSync('s & "!"', big, bindings)).toBeNull();
    await expect(evaluateExpression('s & "!"', big, bindings)).rejects.toMatchObject({ code: 'SIZE' });
    expect(evaluateExpressionSync('1 + "a"', {}, bindings)).toBeNull();
    await expect(evaluateExpression('1 + "a"', {}, bindings)).rejects.toMatchObject({ code: 'T2002', position: 3 });
    expect(evaluateExpressionSync('$map([1], function($v) { $v })', {}, bindings)).toBeNull();
  });

  test('resolveTemplated takes the sync path string by string and falls back as a whole', async () => {
    const template = { a: '=$trigger.user', b: ['=1 + 1', 'plain'], c: '=$map([1, 2], function($v) { $v * 2 })' };
    expect(await resolveTemplated(template, {}, bindings)).toEqual({ a: 'ada', b: [2, 'plain'], c: [2, 4] });
    expect(await resolveTemplated(template, {}, bindings, { sync: false })).toEqual({ a: 'ada', b: [2, 'plain'], c: [2, 4] });
    await expect(resolveTemplated({ x: { y: '=1 + "a"' } }, {}, bindings)).rejects.toThrow(/^x\.y: Expression failed/);
  });
});
