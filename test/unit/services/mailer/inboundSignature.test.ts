/**
 * The signed inbound window at its edges, on an injected clock (the integration test keeps
 * well away from them: a request's own latency would decide the case).
 */
import { createHmac } from 'node:crypto';
import { verifyMailSignature } from '../../../../services/mailer/inbound';

const SECRET = 'whsec-test';
const RAW = Buffer.from('{"subject":"Order 42"}');
const NOW_MS = 1_800_000_000_000;

const headersAt = (timestamp: number, secret = SECRET) => ({
  'x-svc-timestamp': String(timestamp),
  'x-svc-signature': `v1=${createHmac('sha256', secret).update(`${timestamp}.`).update(RAW).digest('hex')}`,
});
const verdict = (headers: Record<string, string>, nowMs = NOW_MS) => {
  try {
    verifyMailSignature(SECRET, RAW, headers, nowMs);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
};

test('a timestamp exactly five minutes old or ahead is accepted; one millisecond further is stale', () => {
  const nowS = NOW_MS / 1000;
  expect(verdict(headersAt(nowS - 300))).toBe('accepted');
  expect(verdict(headersAt(nowS + 300))).toBe('accepted');
  expect(verdict(headersAt(nowS - 300), NOW_MS + 1)).toBe('Stale x-svc-timestamp.');
  expect(verdict(headersAt(nowS + 300), NOW_MS - 1)).toBe('Stale x-svc-timestamp.');
});

test('the signature is checked before the window: a forged stale request reads "Invalid", not "Stale"', () => {
  expect(verdict(headersAt(NOW_MS / 1000 - 3_600, 'not-the-secret'))).toBe('Invalid x-svc-signature.');
});

test('one of several comma-separated signatures may match (secret rotation)', () => {
  const good = headersAt(NOW_MS / 1000);
  expect(verdict({ ...good, 'x-svc-signature': `v1=${'0'.repeat(64)}, ${good['x-svc-signature']}` })).toBe('accepted');
});
