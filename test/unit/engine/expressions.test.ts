import { EXPRESSION_LIMITS, ExpressionError, compileExpression, evaluateExpression, resolveTemplated } from '../../../engine/expressions';

const bindings = { trigger: { user: 'ada', url: 'https://example.com' }, nodes: { fetch: { status: 200, body: { items: [1, 2, 3] } } } };

describe('evaluateExpression', () => {
  test('input is the context and $input; $trigger and $nodes are bound', async () => {
    const input = { price: 10, qty: 3 };
    expect(await evaluateExpression('price * qty', input, bindings)).toBe(30);
    expect(await evaluateExpression('$input.price', input, bindings)).toBe(10);
    expect(await evaluateExpression('$trigger.user', input, bindings)).toBe('ada');
    expect(await evaluateExpression('$sum($nodes.fetch.body.items)', input, bindings)).toBe(6);
    expect(
      await evaluateExpression('{ "who": $trigger.user, "total": price * qty, "status": $nodes.fetch.status }', input, bindings),
    ).toEqual({
      who: 'ada',
      total: 30,
      status: 200,
    });
  });

  test('results are plain JSON: sequences become plain arrays, no match becomes null', async () => {
    const input = { items: [{ x: 1 }, { x: 2 }, { x: 3 }] };
    const seq = await evaluateExpression('items.x', input, bindings);
    expect(seq).toStrictEqual([1, 2, 3]);
    expect(Object.keys(seq as object)).toEqual(['0', '1', '2']); // no JSONata marker properties
    expect(await evaluateExpression('items[x > 1]', input, bindings)).toStrictEqual([{ x: 2 }, { x: 3 }]);
    expect(await evaluateExpression('missing', input, bindings)).toBeNull();
    expect(await evaluateExpression('{ "a": missing, "b": 1 }', input, bindings)).toStrictEqual({ b: 1 });
    expect(JSON.parse(JSON.stringify(await evaluateExpression('$', input, bindings)))).toEqual(input);
  });

  test('results never share objects with the input', async () => {
    const input = { nested: { a: 1 } };
    const out = (await evaluateExpression('nested', input, bindings)) as { a: number };
    out.a = 2;
    expect(input.nested.a).toBe(1);
  });

  test('a top-level array input is one value', async () => {
    expect(await evaluateExpression('$count($)', [1, 2, 3], bindings)).toBe(3);
    expect(await evaluateExpression('$[1]', [1, 2, 3], bindings)).toBe(2);
  });

  test('syntax errors are readable ExpressionErrors with a position', async () => {
    expect(() => compileExpression('$sum(')).toThrow(ExpressionError);
    expect(() => compileExpression('$sum(')).toThrow('Invalid expression: Expected ")" before end of expression (at position 5)');
    expect(() => compileExpression('')).toThrow(/Invalid expression: Unexpected end of expression/);
    await expect(evaluateExpression('1 +', {}, bindings)).rejects.toMatchObject({ name: 'ExpressionError', code: 'S0207' });
  });

  test('evaluation errors are ExpressionErrors too', async () => {
    await expect(evaluateExpression('1 + "a"', {}, bindings)).rejects.toThrow(/^Expression failed: .*"\+" operator/);
    await expect(evaluateExpression('$unknownFunction()', {}, bindings)).rejects.toBeInstanceOf(ExpressionError);
    await expect(evaluateExpression('function($x) { $x }', {}, bindings)).rejects.toThrow(/function, which is not JSON/);
  });

  test('compiled expressions are cached by source', () => {
    expect(compileExpression('a.b.c')).toBe(compileExpression('a.b.c'));
  });

  describe('guards', () => {
    // Workflow code sees a frozen clock, so the step and size budgets, not the wall-clock
    // timeout, are what stop an expression there; freezing it here keeps these tests about
    // the budgets on a loaded machine too.
    let frozen: jest.SpyInstance | undefined;
    beforeEach(() => {
      frozen = jest.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
    });
    afterEach(() => frozen?.mockRestore());
    test('endless tail recursion stops on the step budget even with a frozen clock (as in a workflow)', async () => {
      const now = jest.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
      try {
        await expect(evaluateExpression('($loop := function($n) { $loop($n + 1) }; $loop(0))', {}, bindings)).rejects.toMatchObject({
          code: 'STEPS',
          message: expect.stringContaining(`${EXPRESSION_LIMITS.maxSteps} steps`),
        });
      } finally {
        now.mockRestore();
      }
    });

    test('the budget counts JSONata steps (pins the jsonata guard internals the counter relies on)', async () => {
      // `[1..n].($ * 2)` takes 4 steps per item plus a few: just under and just over 10 000.
      expect(EXPRESSION_LIMITS.maxSteps).toBe(10_000);
      expect(await evaluateExpression('$count([1..2490].($ * 2))', {}, bindings)).toBe(2490);
      await expect(evaluateExpression('$count([1..2510].($ * 2))', {}, bindings)).rejects.toMatchObject({ code: 'STEPS' });
    });

    test('deep recursion hits the stack limit; moderate recursion works', async () => {
      const countdown = '($f := function($n) { $n = 0 ? 0 : 1 + $f($n - 1) }; $f(N))';
      expect(await evaluateExpression(countdown.replace('N', '100'), {}, bindings)).toBe(100);
      await expect(evaluateExpression(countdown.replace('N', '100000'), {}, bindings)).rejects.toMatchObject({ code: 'D1011' });
    });

    test('huge sequences are refused', async () => {
      await expect(evaluateExpression('[1..1000000]', {}, bindings)).rejects.toThrow(`longer than ${EXPRESSION_LIMITS.maxSequence} items`);
      expect(await evaluateExpression('$count([1..10000])', {}, bindings)).toBe(10_000);
    });

    test('the step budget resets for each evaluation and allows moderate data', async () => {
      const items = Array.from({ length: 3000 }, (_, i) => ({ id: i, even: i % 2 === 0 }));
      for (let i = 0; i < 3; i++) expect(await evaluateExpression('$count(items[even])', { items }, bindings)).toBe(1500);
      await expect(
        evaluateExpression('$count(items[even])', { items: [...items, ...items, ...items, ...items] }, bindings),
      ).rejects.toMatchObject({ code: 'STEPS' });
    });

    // Issue 10 item 2: one expression allocating ~100 MB in one step, or backtracking for ever.
    test('$pad with a huge width fails fast without allocating (reproduction)', async () => {
      const before = process.memoryUsage().rss;
      await expect(evaluateExpression("$length($pad('', 100000000))", {}, bindings)).rejects.toMatchObject({
        code: 'SIZE',
        message: expect.stringContaining(`exceeds the string limit of ${EXPRESSION_LIMITS.maxStringLength} characters`),
      });
      expect(process.memoryUsage().rss - before).toBeLessThan(50 * 1024 * 1024);
      expect(await evaluateExpression("$pad('ab', -5, '#') & '|' & $pad('ab', 5) & '|' & $pad('x', 4, 'ab')", {}, bindings)).toBe(
        '###ab|ab   |xaba',
      );
    });

    test('catastrophic-backtracking regexes run in linear time on RE2 (reproduction)', async () => {
      // With backtracking these would not finish within the test's timeout.
      expect(await evaluateExpression("$contains($pad('', 30, 'a') & '!', /(a+)+$/)", {}, bindings)).toBe(false);
      const long = 'a'.repeat(EXPRESSION_LIMITS.maxStringLength - 1) + '!';
      expect(await evaluateExpression('$contains(s, /(a+)+$/)', { s: long }, bindings)).toBe(false);
    });

    test('regex functions keep JSONata semantics on RE2; lookaround and backreferences are refused clearly', async () => {
      expect(await evaluateExpression("$match('xxBdBc', /(b)(c)?/i)", {}, bindings)).toEqual([
        { match: 'B', index: 2, groups: ['B', null] },
        { match: 'Bc', index: 4, groups: ['B', 'c'] },
      ]);
      expect(await evaluateExpression("$replace('hello world', /o/, '0')", {}, bindings)).toBe('hell0 w0rld');
      expect(await evaluateExpression("$split('a1b22c', /[0-9]+/)", {}, bindings)).toEqual(['a', 'b', 'c']);
      expect(await evaluateExpression("$contains('l1\nl2', /^l2$/m)", {}, bindings)).toBe(true);
      expect(await evaluateExpression("'ab' ~> /^a/ ~> $exists()", {}, bindings)).toBe(true);
      await expect(evaluateExpression("$contains('abc', /a(?=b)/)", {}, bindings)).rejects.toMatchObject({
        code: 'REGEX',
        message: expect.stringContaining('Unsupported regular expression /a(?=b)/'),
      });
      await expect(evaluateExpression("$contains('aa', /(a)\\1/)", {}, bindings)).rejects.toMatchObject({ code: 'REGEX' });
    });

    test('strings, arrays and values are bounded by size, not only by steps', async () => {
      const doubling = (body: string) => `($f := function($a, $n) { $n = 0 ? $a : $f(${body}, $n - 1) }; $f(SEED, 40))`;
      await expect(evaluateExpression(doubling('$a & $a').replace('SEED', "'a'"), {}, bindings)).rejects.toThrow(
        'string longer than 1 MiB',
      );
      await expect(evaluateExpression("$join([1..1000].$pad('', 2000), '')", {}, bindings)).rejects.toThrow('string longer than 1 MiB');
      await expect(evaluateExpression('$append(a, a)', { a: Array.from({ length: 60_000 }, () => 1) }, bindings)).rejects.toThrow(
        /longer than 100000 items/,
      );
      // Shared parts: 2^40 leaves in a few hundred bytes of memory, which $string would expand.
      const tree = doubling("{ 'l': $a, 'r': $a }").replace('SEED', "'xxxx'");
      await expect(evaluateExpression(`$string(${tree})`, {}, bindings)).rejects.toThrow('value larger than 8 MiB');
      await expect(evaluateExpression(tree.replace('40))', '18))'), {}, bindings)).rejects.toThrow('result is larger than 4 MiB');
      expect(await evaluateExpression(`$length($string(${tree.replace('40))', '10))')}))`, {}, bindings)).toBeGreaterThan(10_000);
    });

    test('concurrent evaluations of one expression share its budget, others are independent', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => evaluateExpression(`$sum([1..100].($ * ${i}))`, {}, bindings)),
      );
      expect(results[3]).toBe(15_150);
      const same = await Promise.allSettled(Array.from({ length: 20 }, () => evaluateExpression('$sum([1..2000].($ * 2))', {}, bindings)));
      expect(same.some((r) => r.status === 'rejected')).toBe(true);
      expect(await evaluateExpression('$sum([1..2000].($ * 2))', {}, bindings)).toBe(4_002_000);
    });
  });
});

describe('resolveTemplated', () => {
  test('replaces every "=" string deep inside, leaves the rest alone', async () => {
    const template = {
      url: '=$trigger.url & "/items"',
      literal: 'plain text',
      count: '=$count($nodes.fetch.body.items)',
      list: ['a', '=$input.n + 1', 3, null, true],
      nested: { deeper: { value: '=n' }, 'odd key': '=$string(n)' },
      escaped: '="=not an expression"',
    };
    const before = JSON.parse(JSON.stringify(template));
    expect(await resolveTemplated(template, { n: 41 }, bindings)).toStrictEqual({
      url: 'https://example.com/items',
      literal: 'plain text',
      count: 3,
      list: ['a', 42, 3, null, true],
      nested: { deeper: { value: 41 }, 'odd key': '41' },
      escaped: '=not an expression',
    });
    expect(template).toEqual(before);
  });

  test('scalars pass through; a lone string is resolved too', async () => {
    expect(await resolveTemplated('hello', {}, bindings)).toBe('hello');
    expect(await resolveTemplated(7, {}, bindings)).toBe(7);
    expect(await resolveTemplated(null, {}, bindings)).toBeNull();
    expect(await resolveTemplated(undefined, {}, bindings)).toBeUndefined();
    expect(await resolveTemplated('=$trigger.user', {}, bindings)).toBe('ada');
    expect(await resolveTemplated('=nothing', {}, bindings)).toBeNull();
  });

  test('errors name the path of the failing string', async () => {
    await expect(resolveTemplated({ headers: { auth: '=$sum(' } }, {}, bindings)).rejects.toThrow(/^headers\.auth: Invalid expression/);
    await expect(resolveTemplated({ body: ['ok', '=1 + "x"'] }, {}, bindings)).rejects.toThrow(/^body\[1\]: Expression failed/);
  });
});
