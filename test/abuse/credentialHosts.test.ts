/**
 * Malformed `allowedHosts` on the credentials routes (issue 27 item 5, a new input path): huge
 * lists, huge or odd entries, wrong shapes. Each is a 400 naming the field, never a 5xx, and
 * nothing is stored.
 */
import { createWorkspace, http, startTestApp, type TestApp, type WorkspaceFixture } from '../support/harness';

const C = '/api/v1/credentials';
let app: TestApp;
let ws: WorkspaceFixture;

beforeAll(async () => {
  app = await startTestApp({
    credentials: { key: undefined, previousKeys: [], envAllowlist: [], testTimeoutMs: 2_000, providerBaseUrls: {} },
  });
  ws = await createWorkspace(app, 'Credential hosts abuse');
});
afterAll(() => app?.close());

const hostile: Array<[string, unknown]> = [
  ['5 000 hosts', Array.from({ length: 5_000 }, (_, i) => `h${i}.example.test`)],
  ['one 1 MB host', ['a'.repeat(1_000_000)]],
  ['a 300-character label', [`${'a'.repeat(300)}.example.test`]],
  ['not an array', 'api.example.test'],
  ['an object', { 0: 'api.example.test' }],
  ['nested arrays', [['api.example.test']]],
  ['numbers', [127001]],
  ['null entries', [null]],
  ['a NUL byte', ['api.example.test\u0000.evil.test']],
  ['a right-to-left override', ['api.\u202eexample.test']],
  ['a line break', ['api.example.test\r\nx-injected: 1']],
  ['percent-encoding', ['api%2eexample.test']],
  ['a backslash', ['api.example.test\\evil.test']],
  ['a wildcard in the middle', ['api.*.example.test']],
  ['many colons', ['api.example.test:80:81']],
  ['an unbracketed IPv6 address', ['::1']],
];

test.each(hostile)('%s: 400 on create and on PATCH, nothing stored', async (_label, allowedHosts) => {
  const created = await http(app, 'POST', C, {
    token: ws.token,
    body: { name: 'abuse', type: 'bearer', value: 'abuse-token-0123456789', allowedHosts },
  });
  expect(created.status).toBe(400);
  expect(created.text).toMatch(/allowedHosts/);
  const base = await http(app, 'POST', C, {
    token: ws.token,
    body: { name: 'abuse base', type: 'bearer', value: 'abuse-base-0123456789' },
  });
  const patched = await http(app, 'PATCH', `${C}/${base.body.credential.id}`, {
    token: ws.token,
    body: { value: 'abuse-base-0123456789', allowedHosts },
  });
  expect(patched.status).toBe(400);
  const list = (await http(app, 'GET', C, { token: ws.token })).body.credentials as Array<{ name: string; allowedHosts: string[] }>;
  expect(list.some((c) => c.name === 'abuse')).toBe(false);
  expect(list.find((c) => c.name === 'abuse base')!.allowedHosts).toEqual([]);
});
