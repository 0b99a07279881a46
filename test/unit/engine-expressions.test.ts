import { EXPRESSION_LIMITS, ExpressionError, compileExpression, evaluateExpression, resolveTemplated } from '../../engine/expressions';

const bindings = { trigger: { user: 'ada', url: 'https://example.com' }, nodes: { fetch: { status: 200, body: { items: [1, 2, 3] } } } };

describe('evaluateExpression', () => {
  test('input is the context and $input; $trigger and $nodes are bound', async () => {
    const input = { price: 10, qty: 3 };
    expect(await evaluateExpression('price * qty', input, bindings)).toBe(30);
    expect(await evaluateExpression('$input.price', input, bindings)).toBe(10);
    expect(await evaluateExpression('$trigger.user', input, bindings)).toBe('ada');
    expect(await evaluateExpression('$sum($nodes.fetch.body.items)', input, bindings)).toBe(6);
    expect(await evaluateExpression('{ "who": $trigger.user, "total": price * qty, "status": $nodes.fetch.status }', input, bindings)).toEqual({
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
      await expect(evaluateExpression('$count(items[even])', { items: [...items, ...items, ...items, ...items] }, bindings)).rejects.toMatchObject({ code: 'STEPS' });
    });

    test('concurrent evaluations of one expression share its budget, others are independent', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => evaluateExpression(`$sum([1..100].($ * ${i}))`, {}, bindings)));
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
