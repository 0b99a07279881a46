import {
  findUnstorableText,
  storableString,
  textProblem,
  toStorable,
  wellFormedJsonText,
  wellFormedParams,
} from '../../../../services/kernel/storableText';

describe('storable text (issue 10, item 3)', () => {
  test('NUL and lone surrogates are problems; paired surrogates and ordinary text are not', () => {
    expect(textProblem('a\u0000b')).toMatch(/NUL/);
    expect(textProblem('\ud800')).toMatch(/surrogate/);
    expect(textProblem('x\udc00')).toMatch(/surrogate/);
    expect(textProblem('\ud83d\ude00 ü \t\n')).toBeNull();
  });

  test('storableString replaces each bad code unit with U+FFFD and keeps pairs', () => {
    expect(storableString('a\u0000b\ud800c\udc00\ud83d\ude00')).toBe('a\ufffdb\ufffdc\ufffd\u{1F600}');
  });

  test('findUnstorableText names the path, object keys included, and bounds depth without recursion', () => {
    expect(findUnstorableText({ a: [1, { b: 'x\u0000' }] }, { root: 'body' })).toEqual({
      path: 'body.a.1.b',
      problem: expect.stringMatching(/NUL/),
    });
    expect(findUnstorableText({ ['k\ud800']: 1 })).toEqual({ path: 'k\ud800', problem: expect.stringMatching(/key that contains a lone/) });
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findUnstorableText(deep, { maxDepth: 100 })?.problem).toBe('too deeply nested');
    expect(findUnstorableText({ fine: ['text', 1, null] })).toBeNull();
  });

  test('toStorable copies only when needed, keeps __proto__ as a plain key, and handles deep values', () => {
    const clean = { a: 'ok' };
    expect(toStorable(clean)).toBe(clean);
    const parsed = JSON.parse('{"__proto__":{"x":"\\u0000"},"list":["\\ud800"]}');
    const out = toStorable(parsed);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'list']);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"x":"\ufffd"},"list":["\ufffd"]}');
    let deep: unknown = 'a\u0000';
    for (let i = 0; i < 50_000; i++) deep = { d: deep };
    expect(() => toStorable(deep)).not.toThrow();
  });
});

describe('wellFormedJsonText', () => {
  test('replaces the escapes JSON.stringify writes for NUL and lone surrogates, keeps pairs and escaped backslashes', () => {
    const json = JSON.stringify({ a: 'x\u0000y', ['k\ud800']: ['\udc00', '\ud83d\ude00'], text: '\\u0000 is text', pairEscaped: 1 });
    expect(JSON.parse(wellFormedJsonText(json))).toEqual({
      a: 'x\ufffdy',
      'k\ufffd': ['\ufffd', '\u{1F600}'],
      text: '\\u0000 is text',
      pairEscaped: 1,
    });
    // Hand-written JSON may escape a pair; it stays a pair.
    expect(JSON.parse(wellFormedJsonText('"\\ud83d\\ude00 \\uD800"'))).toBe('\u{1F600} \ufffd');
    const clean = JSON.stringify({ fine: 'é \u{1F600} \\n' });
    expect(wellFormedJsonText(clean)).toBe(clean);
  });

  test('agrees with toStorable on generated values', () => {
    const units = ['a', '\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\\', 'u0000', '"', '\u{1F600}'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 500; i++) {
      const s = Array.from({ length: 1 + Math.floor(next() * 10) }, () => units[Math.floor(next() * units.length)]).join('');
      const value = { [s]: [s, { s }] };
      expect(JSON.parse(wellFormedJsonText(JSON.stringify(value)))).toEqual(toStorable(value));
    }
  });

  test('wellFormedParams cleans string and plain-data parameters, keeps the rest, and copies only when needed', () => {
    const date = new Date(0);
    const bytes = Buffer.from([0, 1]);
    const clean = ['id', 1, null, date, bytes, ['a'], { k: 'v' }];
    expect(wellFormedParams(clean)).toBe(clean);
    const out = wellFormedParams(['a\u0000', '\ud800', ['x\udc00'], { ['k\u0000']: 'v' }, date, bytes, 7]);
    expect(out).toEqual(['a\ufffd', '\ufffd', ['x\ufffd'], { 'k\ufffd': 'v' }, date, bytes, 7]);
    expect(out[4]).toBe(date);
    expect(out[5]).toBe(bytes);
  });
});
