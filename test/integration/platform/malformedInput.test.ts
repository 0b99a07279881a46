/** Issue 10, item 4: each malformed input the attack test found answers a 4xx, never a 500. */
import { allRoutes } from '../../../api/app';
import { koaPath } from '../../../api/http/route';
import { deployWebhook, useTestStack, webhookChain, node } from '../../kit';
import { rawHttp } from '../../support/rawHttp';

const stack = useTestStack({ worker: false });
let webhookPath: string;

beforeAll(async () => {
  ({ webhookPath } = await deployWebhook(stack, webhookChain(node.transform('echo', 'x'))));
});

const routesWithParams = allRoutes.filter((r) => r.path.includes('{'));

test.each(routesWithParams.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
  'a NUL byte in the path id of %s is a 400 naming the parameter',
  async (_name, route) => {
    const path = koaPath(route.path).replace(/:(\w+)/g, (_m, name: string) => (name === 'version' ? '1' : 'id_%00x'));
    for (const token of [stack.ws.token, undefined]) {
      const res = await rawHttp(stack.app, route.method.toUpperCase(), path, {
        token,
        body: route.method === 'get' || route.method === 'delete' ? undefined : '{}',
      });
      expect(res.status).toBeLessThan(500);
      if (res.status !== 401 && res.status !== 403) {
        expect(res.status).toBe(400);
        // Bare family `{ error: "…" }`, envelope family `{ error: { code, message } }`.
        const message = typeof res.body.error === 'string' ? res.body.error : res.body.error?.message;
        expect(message).toMatch(/path parameters/i);
      }
    }
  },
);

test('the public resume route refuses a NUL byte in its token with a 400', async () => {
  const res = await rawHttp(stack.app, 'POST', '/api/hooks/resume/rt_%00abc', { body: '{}' });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatch(/token/);
});

test('an id with control characters, spaces or 300 characters is a 400, an unknown well-formed one a 404', async () => {
  for (const id of ['a%01b', 'a%20b', 'x'.repeat(300)]) {
    expect((await rawHttp(stack.app, 'GET', `/api/v1/runs/${id}`, { token: stack.ws.token })).status).toBe(400);
  }
  expect((await rawHttp(stack.app, 'GET', '/api/v1/runs/run_doesnotexist', { token: stack.ws.token })).status).toBe(404);
});

test.each(['/api/v1/runs', '/api/v1/logs/stats', '/api/v1/logs/export'])('query=%%00 on %s is a 400', async (path) => {
  const res = await rawHttp(stack.app, 'GET', `${path}?query=a%00b`, { token: stack.ws.token });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatch(/NUL character/);
});

test.each([
  ['a \\u0000 in a JSON body', '{"name":"a\\u0000b","nodes":[],"edges":[]}', /NUL character/],
  ['a lone surrogate in a JSON body', '{"name":"\\udc00","nodes":[],"edges":[]}', /lone UTF-16 surrogate/],
  ['a \\u0000 in a JSON key', '{"name":"ok","nodes":[],"edges":[],"x":{"\\u0000":1}}', /key that contains a NUL/],
])('%s is a 400 on an API-key route', async (_name, body, message) => {
  const res = await rawHttp(stack.app, 'POST', '/api/v1/workflows', { token: stack.ws.token, body });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatch(message);
});

test.each([
  ['a \\u0000', '{"a":"\\u0000"}'],
  ['a lone surrogate', '{"a":"\\ud800"}'],
  ['a NUL in a text body', 'plain\u0000text'],
])('%s in the body of the public webhook is a 400', async (_name, body) => {
  const res = await rawHttp(stack.app, 'POST', webhookPath, {
    body,
    contentType: body.startsWith('{') ? 'application/json' : 'text/plain',
  });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatch(/NUL character|surrogate/);
});

test.each([3_000, 5_000])('JSON nested %i levels deep is a 400, on the webhook and on an API-key route', async (depth) => {
  const body = `{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  for (const [path, token] of [
    [webhookPath, undefined],
    ['/api/v1/workflows', stack.ws.token],
  ] as const) {
    const res = await rawHttp(stack.app, 'POST', path, { token, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/nested more than 100 levels/);
  }
});

test.each(['/api/v1/runs', '/api/v1/logs/stats'])('dateFrom=99999-01-01 on %s is a 400 naming dateFrom', async (path) => {
  for (const q of ['dateFrom=99999-01-01', 'dateFrom=%2B275760-09-13T00:00:00Z', 'dateTo=0000-01-01']) {
    const res = await rawHttp(stack.app, 'GET', `${path}?${q}`, { token: stack.ws.token });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/date(From|To)/);
  }
  expect((await rawHttp(stack.app, 'GET', `${path}?dateFrom=2021-01-01&dateTo=all`, { token: stack.ws.token })).status).toBe(200);
});

test('a version number past PostgreSQL integer range is a 400', async () => {
  const res = await rawHttp(stack.app, 'POST', '/api/v1/workflows/wf_x/versions/99999999999999999999/restore', { token: stack.ws.token });
  expect(res.status).toBe(400);
});

test.each(['TRACE', 'PROPFIND'])('an unknown method (%s) on a known path is a 405 with Allow; on an unknown path a 404', async (method) => {
  const res = await rawHttp(stack.app, method, '/api/v1/workflows', { token: stack.ws.token });
  expect(res.status).toBe(405);
  expect(String(res.headers.allow)).toContain('GET');
  expect(res.body).toEqual({ error: 'Method not allowed' });
  const public405 = await rawHttp(stack.app, method, '/api/hooks/resume/rt_abc');
  expect(public405.status).toBe(405);
  expect(String(public405.headers.allow)).toContain('POST');
  const unknown = await rawHttp(stack.app, method, '/api/v1/nope');
  expect(unknown.status).toBe(404);
  expect(unknown.headers.allow).toBeUndefined();
});
