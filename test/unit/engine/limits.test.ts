/** The size rules of engine/limits.ts and the run value cap of services/runs/views.ts. */
import { boundedMessage, jsonBytes, NODE_OUTPUT_LIMIT_BYTES, oversizedOutput, utf8Bytes } from '../../../engine/limits';
import { capValue, RUN_VALUE_CAP_BYTES } from '../../../services/runs/views';

describe('engine limits', () => {
  test.each(['', 'ascii', 'é', '€uro', '😀 emoji', 'lone \ud800 surrogate', 'mixed ü € 😀'.repeat(5)])(
    'jsonBytes(%j) matches Buffer.byteLength of the JSON text',
    (text) => {
      expect(jsonBytes(text)).toBe(Buffer.byteLength(JSON.stringify(text), 'utf8'));
      expect(utf8Bytes('😀€é')).toBe(4 + 3 + 2);
    },
  );

  test('a node output over 1.5 MiB gets the size message; one at the limit passes', () => {
    const fits = 'a'.repeat(NODE_OUTPUT_LIMIT_BYTES - 2); // plus two quotes
    expect(oversizedOutput(fits)).toBeNull();
    const over = fits + 'a';
    expect(oversizedOutput(over)).toBe(`Node output is ${NODE_OUTPUT_LIMIT_BYTES + 1} bytes, over the 1.5 MB limit`);
    expect(oversizedOutput(undefined)).toBeNull();
  });
});

describe('run value cap', () => {
  test('values up to 256 KiB of JSON stay as they are; larger ones become a marker with a preview', () => {
    const fits = { s: 'b'.repeat(RUN_VALUE_CAP_BYTES - 8) }; // {"s":"…"} is 8 bytes of syntax
    expect(capValue(fits)).toBe(fits);
    const over = { s: 'b'.repeat(RUN_VALUE_CAP_BYTES - 7) };
    expect(capValue(over)).toEqual({ truncated: true, bytes: RUN_VALUE_CAP_BYTES + 1, preview: JSON.stringify(over).slice(0, 1024) });
    // Multi-byte text is measured in UTF-8, not in characters.
    const wide = '€'.repeat(Math.ceil(RUN_VALUE_CAP_BYTES / 3));
    expect(capValue(wide)).toMatchObject({ truncated: true, bytes: Buffer.byteLength(JSON.stringify(wide)) });
    for (const small of [null, 1, true, 'x', [1, 2], { a: 1 }]) expect(capValue(small)).toBe(small);
  });
});

describe('boundedMessage', () => {
  test('keeps short text, cuts long text on a code point and says how much was cut', () => {
    expect(boundedMessage('short', 10)).toBe('short');
    expect(boundedMessage('abcdefghijkl', 10)).toBe('abcdefghij… (2 more characters cut)');
    // Cutting between the halves of a pair would leave a lone surrogate: the pair goes whole.
    expect(boundedMessage('abc\u{1F600}xyz', 4)).toBe('abc… (5 more characters cut)');
  });
});
