/**
 * Issue 26 item 2 (rows F3/F4): every JSONata built-in function, regex and lambda signature is
 * bounded (engine/expressionBounds.ts), on JSONata's evaluator and the synchronous one alike.
 * Each reproduction below stalled or exhausted the heap before the bounds; now each either
 * finishes with JSONata's result or fails with an ExpressionError naming the limit.
 */
import {
  builtinFunctionPairs,
  EXPRESSION_LIMITS,
  ExpressionError,
  compileExpression,
  evaluateExpression,
  evaluateExpressionSync,
  evaluateWithJsonata,
} from '../../../engine/expressions';
import { MAX_PICTURE_WIDTH, WORK_PER_STEP } from '../../../engine/expressionBounds';

const bindings = { trigger: {}, nodes: {} };

async function failure(run: Promise<unknown>): Promise<{ name?: string; code?: string; message: string }> {
  return run.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)?.slice(0, 200)}`);
    },
    (err: ExpressionError) => err,
  );
}

describe('bounded built-in functions', () => {
  // Workflow code sees a frozen clock: the budgets, not JSONata's 1 s timeout, must stop these.
  let frozen: jest.SpyInstance | undefined;
  beforeEach(() => {
    frozen = jest.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
  });
  afterEach(() => frozen?.mockRestore());

  test("$sort of 100,000 numbers sorts (JSONata ran out of heap), with JSONata's order", async () => {
    expect(await evaluateExpression('$count($sort([1..100000]))', {}, bindings)).toBe(100_000);
    expect(await evaluateExpression('[$sort($reverse([1..100000]))[0], $sort($reverse([1..100000]))[-1]]', {}, bindings)).toEqual([
      1, 100_000,
    ]);
    expect(await evaluateExpression('$sort(["b", "a", "B", "aa"])', {}, bindings)).toEqual(['B', 'a', 'aa', 'b']);
    // Stable, with the comparator called as JSONata's merge sort calls it.
    const people = {
      p: [
        { n: 'a', x: 2 },
        { n: 'b', x: 1 },
        { n: 'c', x: 2 },
        { n: 'd', x: 1 },
      ],
    };
    expect(await evaluateExpression('$sort(p, function($l, $r) { $l.x > $r.x }).n', people, bindings)).toEqual(['b', 'd', 'a', 'c']);
    expect(await evaluateExpression('p^(>x).n', people, bindings)).toEqual(['a', 'c', 'b', 'd']);
    await expect(evaluateExpression('$sort([1, "a"])', {}, bindings)).rejects.toMatchObject({ code: 'D3070' });
  }, 60_000);

  test('$sort with a comparator counts one step per comparison', async () => {
    const err = await failure(evaluateExpression('$sort([1..5000], function($a, $b) { $a < $b })', {}, bindings));
    expect(err).toMatchObject({ name: 'ExpressionError', code: 'STEPS' });
    expect(err.message).toContain(`exceeded ${EXPRESSION_LIMITS.maxSteps} steps in $sort`);
  });

  test("$distinct of 60,000 values ends at once (17 s in JSONata) with JSONata's result", async () => {
    expect(await evaluateExpression('$count($distinct([1..60000]))', {}, bindings)).toBe(60_000);
    expect(await evaluateExpression('$distinct(v)', { v: Array.from({ length: 60_000 }, (_, i) => i % 7) }, bindings)).toEqual([
      0, 1, 2, 3, 4, 5, 6,
    ]);
    const input = { v: [1, '1', [1], [1], { a: 1, b: [2] }, { b: [2], a: 1 }, null, null, true, 0, -0, { length: 1, 0: 1 }] };
    const bounded = await evaluateWithJsonata('$distinct(v)', input, bindings);
    const unbounded = await evaluateWithJsonata('$distinct(v)', input, bindings, { bounded: false });
    expect(bounded).toEqual(unbounded);
    // JSONata finds `{ length: 1, 0: 1 }` equal to `[1]`; so does the bounded version.
    expect(bounded).toEqual([1, '1', [1], { a: 1, b: [2] }, null, true, 0]);
  }, 60_000);

  test('the synchronous evaluator applies the same charges: $distinct and $string over trigger data', async () => {
    const items = Array.from({ length: 60_000 }, (_, i) => i);
    const now = evaluateExpressionSync('$count($distinct(items))', { items }, bindings);
    expect(now).toEqual({ value: 60_000 });
    // $string of a ~600 KB value in every one of 100 items: 100 × ~600 steps of work.
    const big = { rows: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row ${i}` })) };
    const input = { items: Array.from({ length: 100 }, (_, i) => i), big };
    expect(evaluateExpressionSync('items.$length($string($$.big))', input, bindings)).toBeNull();
    const err = await failure(evaluateExpression('items.$length($string($$.big))', input, bindings));
    expect(err).toMatchObject({ code: 'STEPS', message: expect.stringContaining('steps in $string') });
    // Within the budget both paths agree with JSONata unbounded.
    const small = { items: [1, 2], big: { a: [1, 2, 3] } };
    const expected = await evaluateWithJsonata('items.$length($string($$.big))', small, bindings, { bounded: false });
    expect(evaluateExpressionSync('items.$length($string($$.big))', small, bindings)).toEqual({ value: expected });
    expect(await evaluateWithJsonata('items.$length($string($$.big))', small, bindings)).toEqual(expected);
  }, 60_000);

  test('a million regex matches stop on the budget (12 s in JSONata), with the reason', async () => {
    const err = await failure(evaluateExpression('$length($replace($pad("", 1000000, "a"), /a/, "b"))', {}, bindings));
    expect(err).toMatchObject({ name: 'ExpressionError', code: 'STEPS' });
    expect(err.message).toContain('steps in regular expression matching');
    await expect(evaluateExpression('$count($match($pad("", 100000, "a"), /a/))', {}, bindings)).rejects.toMatchObject({ code: 'STEPS' });
    await expect(evaluateExpression('$count($split($pad("", 100000, "a"), /a/))', {}, bindings)).rejects.toMatchObject({ code: 'STEPS' });
    // JSONata's own limit argument keeps a large input usable.
    expect(await evaluateExpression('$count($match($pad("", 100000, "a"), /a/, 5))', {}, bindings)).toBe(5);
    expect(await evaluateExpression('$replace("a-b-c", /-/, "+")', {}, bindings)).toBe('a+b+c');
  }, 60_000);

  test('$toMillis pictures run on RE2: no backtracking, the global RegExp is restored', async () => {
    const picture = '[f][f][f][f][f][f][f][f][f][f]';
    const timestamp = '1'.repeat(40) + 'x';
    const unmatched = await evaluateExpression(`$toMillis("${timestamp}", "${picture}")`, {}, bindings);
    expect(unmatched).toBeNull();
    expect(RegExp).toBe(/x/.constructor);
    // Results are JSONata's where pictures match.
    for (const [ts, pic] of [
      ['2024-03-05 10:20:30', '[Y0001]-[M01]-[D01] [H01]:[m01]:[s01]'],
      ['20240305', '[Y0001][M01][D01]'],
      ['5th March 2024', '[D1o] [MNn] [Y0001]'],
    ]) {
      const expr = `$toMillis("${ts}", "${pic}")`;
      expect(await evaluateWithJsonata(expr, {}, bindings)).toBe(await evaluateWithJsonata(expr, {}, bindings, { bounded: false }));
    }
    await expect(evaluateExpression('$toMillis("2024", "[Y0001")', {}, bindings)).rejects.toBeInstanceOf(ExpressionError);
    expect(RegExp).toBe(/x/.constructor);
  });

  test('picture widths are bounded before JSONata allocates them', async () => {
    for (const expr of ['$fromMillis(0, "[Y,100000000]")', '$now("[Y0001,2-100000000]")']) {
      await expect(evaluateExpression(expr, {}, bindings)).rejects.toMatchObject({
        code: 'SIZE',
        message: expect.stringContaining(`exceeds the limit of ${MAX_PICTURE_WIDTH}`),
      });
    }
    expect(await evaluateExpression('$fromMillis(0, "[Y0001]-[M01]-[D01]")', {}, bindings)).toBe('1970-01-01');
    const padded = '$fromMillis(0, "[Y,6-6]")';
    expect(await evaluateExpression(padded, {}, bindings)).toBe(await evaluateWithJsonata(padded, {}, bindings, { bounded: false }));
  });

  test('lambda signatures that could backtrack are refused when compiled, also through $eval', async () => {
    const signature = `<${'n+'.repeat(12)}:n>`;
    const expr = `(function($x)${signature}{ $x })(${Array.from({ length: 30 }, () => 1).join(', ')}, "x")`;
    expect(() => compileExpression(expr)).toThrow(ExpressionError);
    expect(() => compileExpression(expr)).toThrow(/Invalid expression: Function signature <n\+n\+.*is too complex/);
    await expect(evaluateExpression(expr, {}, bindings)).rejects.toMatchObject({ code: 'SIGNATURE' });
    await expect(evaluateExpression(`$eval(${JSON.stringify(expr)})`, {}, bindings)).rejects.toMatchObject({ code: 'SIGNATURE' });
    // Ordinary signatures still work.
    expect(await evaluateExpression('(function($a, $b)<n-n?:n>{ $a + ($b ? $b : 0) })(1, 2)', {}, bindings)).toBe(3);
    const plus = '(function($a, $b)<n+s:n>{ $a })(1, 2, "x")';
    expect(await evaluateExpression(plus, {}, bindings)).toEqual(await evaluateWithJsonata(plus, {}, bindings, { bounded: false }));
  });

  test('higher-order functions count a step per call of their function argument', async () => {
    await expect(evaluateExpression('$count($map([1..20000], $string))', {}, bindings)).rejects.toMatchObject({
      code: 'STEPS',
      message: expect.stringContaining('steps in $map'),
    });
    expect(await evaluateExpression('$map([1..3], $string)', {}, bindings)).toEqual(['1', '2', '3']);
  });

  test("'&' counts the characters it builds, on both paths", async () => {
    const input = { items: Array.from({ length: 200 }, (_, i) => i), s: 'x'.repeat(100_000) };
    expect(evaluateExpressionSync('$sum(items.$length($$.s & "!"))', input, bindings)).toBeNull();
    await expect(evaluateExpression('$sum(items.$length($$.s & "!"))', input, bindings)).rejects.toMatchObject({
      code: 'STEPS',
      message: expect.stringContaining("steps in '&'"),
    });
    expect(evaluateExpressionSync('$sum(items.$length($$.s & "!"))', input, bindings, { bounded: false })).toEqual({
      value: 200 * 100_001,
    });
  });

  test("'=', '!=' and 'in' count the values they compare, on both paths; wildcards the nodes they collect", async () => {
    const rows = () => Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row ${i}` }));
    const input = {
      items: Array.from({ length: 100 }, (_, i) => i),
      big: rows(),
      big2: rows(),
      list: Array.from({ length: 100_000 }, (_, i) => -i),
    };
    for (const [expr, what] of [
      ['$count(items[$$.big = $$.big2])', "'=' or '!=' of large values"],
      ['$count(items[$ in $$.list])', "'in' over a long array"],
    ]) {
      expect(evaluateExpressionSync(expr, input, bindings)).toBeNull();
      expect(evaluateExpressionSync(expr, input, bindings, { bounded: false })).not.toBeNull();
      await expect(evaluateExpression(expr, input, bindings)).rejects.toMatchObject({
        code: 'STEPS',
        message: expect.stringContaining(`steps in ${what}`),
      });
    }
    const tenItems = { items: Array.from({ length: 10 }, (_, i) => i), wrapped: { rows: input.big } };
    await expect(evaluateExpression('$sum(items.$count($$.wrapped.**))', tenItems, bindings)).rejects.toMatchObject({
      code: 'STEPS',
      message: expect.stringContaining("steps in '*' or '**' over large values"),
    });
    const small = { ...input, items: [0, 1] };
    expect(await evaluateExpression('$sum(items.$count($$.wrapped.**))', { ...small, wrapped: { rows: [{ a: 1 }] } }, bindings)).toBe(6);
    expect(evaluateExpressionSync('$count(items[$ in $$.list])', small, bindings)).toEqual({ value: 1 });
    expect(await evaluateWithJsonata('$count(items[$$.big = $$.big2])', small, bindings)).toBe(2);
  }, 60_000);

  test('the transform operator counts what it copies (through $clone, which it looks up), however it is applied', async () => {
    // ~3.6 MB: each copy costs ~3,600 steps.
    const big = { rows: Array.from({ length: 90_000 }, (_, i) => ({ id: i, name: `row ${i}` })) };
    const input = { items: Array.from({ length: 50 }, (_, i) => i), big };
    for (const expr of [
      '($t := |$|{"x": 1}|; $count(items.($t($$.big))))',
      '$count(items.($$.big ~> |$|{"x": 1}|))',
      '$count($map(items, function($i) { $$.big ~> |$|{"y": $i}| }))',
    ]) {
      await expect(evaluateExpression(expr, input, bindings)).rejects.toMatchObject({
        code: 'STEPS',
        message: expect.stringContaining('steps in $clone'),
      });
    }
    const small = { items: [1, 2], big: { rows: [{ id: 1 }] } };
    for (const expr of ['($t := |$|{"x": 1}|; items.($t($$.big)))', '$$.big ~> |rows|{"y": 2}, ["id"]|']) {
      expect(await evaluateWithJsonata(expr, small, bindings)).toEqual(
        await evaluateWithJsonata(expr, small, bindings, { bounded: false }),
      );
    }
  }, 60_000);

  test('runs recorded before the bounds replay without them (bounded: false)', async () => {
    const expr = `(function($x)<${'n+'.repeat(2)}:n>{ $x })(1, 2)`;
    expect(() => compileExpression(expr)).toThrow(/too complex/);
    expect(await evaluateExpression(expr, {}, bindings, { bounded: false })).toBe(1);
    expect(await evaluateExpression('$count($map([1..20000], $string))', {}, bindings, { bounded: false })).toBe(20_000);
  });

  test("the bounded functions keep JSONata's parameter lists (arity and names drive partial application)", async () => {
    const params = (fn: (...args: unknown[]) => unknown) => /\(([^)]*)\)/.exec(fn.toString())![1].replace(/\s+/g, ' ').trim();
    for (const { name, original, bounded } of builtinFunctionPairs()) {
      expect({ name, length: bounded.length, params: params(bounded) }).toEqual({
        name,
        length: original.length,
        params: params(original),
      });
    }
    expect(await evaluateExpression('$substring(?, 0, 2)("hello")', {}, bindings)).toBe('he');
    expect(await evaluateExpression('["a", "b"] ~> $map($uppercase)', {}, bindings)).toEqual(['A', 'B']);
    expect(WORK_PER_STEP).toBe(1000);
  });

  test("within the limits every wrapped function gives JSONata's outcome (value, or error code and message)", async () => {
    const input = {
      s: 'Hello, World',
      n: 1234.5678,
      a: [3, 1, 2, 1],
      o: { x: 1, y: [1, 2], z: { w: 'v' } },
      people: [
        { name: 'b', age: 3 },
        { name: 'a', age: 3 },
        { name: 'c', age: 1 },
      ],
    };
    const cases = [
      '$sum(a)',
      '$max(a)',
      '$min(a)',
      '$average(a)',
      '$string(o)',
      '$string(o, true)',
      '$substring(s, 2, 3)',
      '$substringBefore(s, ",")',
      '$substringAfter(s, ",")',
      '$lowercase(s)',
      '$uppercase(s)',
      '$length(s)',
      '$trim("  a  b ")',
      '$match(s, /o/)',
      '$contains(s, "World")',
      '$contains(s, /w/i)',
      '$replace(s, /(o)/, "[$1]")',
      '$replace(s, "o", "0", 1)',
      '$replace(s, /l+/, function($m) { $uppercase($m.match) })',
      '$split(s, ", ")',
      '$split(s, /[, ]+/, 1)',
      '$join(["a", "b"], "-")',
      '$formatNumber(n, "#,##0.00")',
      '$formatBase(255, 16)',
      '$formatInteger(1999, "I")',
      '$parseInteger("MCMXCIX", "I")',
      '$number("12.5")',
      '$boolean(a)',
      '$not(s)',
      '$map(a, function($v, $i) { $v * $i })',
      '$zip(a, [1, 2])',
      '$filter(a, function($v) { $v > 1 })',
      '$single(a, function($v) { $v = 3 })',
      '$single(a, function($v) { $v = 1 })',
      '$reduce(a, function($p, $c) { $p + $c }, 10)',
      '$sift(o, function($v, $k) { $k != "x" })',
      '$keys(people)',
      '$lookup(people, "name")',
      '$append(a, [9])',
      '$spread(o)',
      '$merge(people)',
      '$reverse(a)',
      '$each(o, function($v, $k) { $k })',
      '$sort(a)',
      '$sort(people, function($l, $r) { $l.age > $r.age }).name',
      'people^(age, >name).name',
      '$distinct(a)',
      '$distinct(people.age)',
      '$base64encode(s)',
      '$base64decode("SGk=")',
      '$encodeUrlComponent("a b&c")',
      '$encodeUrl("https://x.y/a b")',
      '$decodeUrlComponent("a%20b")',
      '$decodeUrl("https://x.y/a%20b")',
      '$eval("1 + $")',
      '$eval("$$.s", o)',
      '$toMillis("2024-01-02T03:04:05Z")',
      '$toMillis("2024-01-02", "[Y0001]-[M01]-[D01]")',
      '$fromMillis(1e12, "[D01]/[M01]/[Y0001] [h#1][P]")',
      '$fromMillis(1e12, "[H01]:[m01]", "+0530")',
      '$clone(o)',
      '$pad(s, 15, "*")',
      '$sort(["b", 1])',
      '$substring(1)',
      '$toMillis("nope")',
      '$formatNumber(n, "#.#.#")',
      '$map(a, $string)',
      '$substring(?, 0, 2)(s)',
      '$lookup($spread(o), "z")',
      '$shuffle([1])',
    ];
    for (const expr of cases) {
      const outcomeOf = (bounded: boolean) =>
        evaluateWithJsonata(expr, input, bindings, { bounded }).then(
          (value) => ({ value }),
          (err: ExpressionError) => ({ error: { code: err.code, message: err.message } }),
        );
      expect({ expr, outcome: await outcomeOf(true) }).toEqual({ expr, outcome: await outcomeOf(false) });
    }
  });
});
