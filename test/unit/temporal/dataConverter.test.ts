/**
 * The Temporal boundary's converters (temporal/dataConverter.ts): failures and payloads leave
 * with well-formed text, so their protobuf encoding is valid UTF-8 (F1 of issue 26).
 */
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { failureConverter, FAILURE_TEXT_MAX_CHARS, payloadConverter } from '../../../temporal/dataConverter';

const Failure = temporal.api.failure.v1.Failure;
/** Whether bytes are valid UTF-8 (a fatal decoder refuses the bytes protobufjs writes for a lone surrogate). */
const validUtf8 = (bytes: Uint8Array) => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
};

test('a failure with lone surrogates and NUL, in its message, type, stack, cause and details, encodes as valid UTF-8 with U+FFFD', () => {
  const cause = new Error('cause \udc00');
  const err = ApplicationFailure.create({ message: 'e\ud800 and \u0000', type: 'Type\ud800', details: [{ s: '\ud800' }], cause });
  err.stack = `Error: e\ud800\n    at x`;
  const failure = failureConverter.errorToFailure(err, payloadConverter);
  expect(failure.message).toBe('e\ufffd and \ufffd');
  expect(failure.applicationFailureInfo?.type).toBe('Type\ufffd');
  expect(failure.stackTrace).toContain('e\ufffd');
  expect(failure.cause?.message).toBe('cause \ufffd');
  const bytes = Failure.encode(failure).finish();
  // The message text itself is checked: protobuf framing bytes are not UTF-8.
  expect(validUtf8(new TextEncoder().encode(Failure.decode(bytes).message))).toBe(true);
  expect(Buffer.from(bytes).includes(Buffer.from([0xed, 0xa0, 0x80]))).toBe(false); // no CESU-8 surrogate bytes
  const back = failureConverter.failureToError(Failure.decode(bytes), payloadConverter) as ApplicationFailure;
  expect(back.details).toEqual([{ s: '\ufffd' }]);
});

test('failure messages and stacks are bounded, cut on a code point', () => {
  const failure = failureConverter.errorToFailure(new Error('\u{1F600}'.repeat(FAILURE_TEXT_MAX_CHARS)), payloadConverter);
  expect(failure.message!.length).toBeLessThan(FAILURE_TEXT_MAX_CHARS + 100);
  expect(failure.message).toMatch(/… \(\d+ more characters cut\)$/);
  expect(failure.message).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
});

test('payloads carry well-formed JSON text; binary and undefined are as the SDK converts them', () => {
  const payload = payloadConverter.toPayload({ s: 'x\u0000\ud800', ['k\udc00']: 1, fine: '\u{1F600}' });
  expect(payloadConverter.fromPayload(payload)).toEqual({ s: 'x\ufffd\ufffd', 'k\ufffd': 1, fine: '\u{1F600}' });
  const bytes = new Uint8Array([0, 0xff]);
  expect(payloadConverter.fromPayload(payloadConverter.toPayload(bytes))).toEqual(bytes);
  expect(payloadConverter.fromPayload(payloadConverter.toPayload(undefined))).toBeUndefined();
});
