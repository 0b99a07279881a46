import { eventually, http, useTestStack, type ApiError } from '../../kit';

/** GET /readyz: the checks and the live workers. */
type Readiness = { status: string; checks: Record<string, { ok: boolean }>; workers: { running: number } };
/** The parts of the OpenAPI document the test reads. */
type OpenApiDoc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        security?: unknown;
        parameters: unknown[];
        responses: Record<string, unknown>;
        requestBody: { content: Record<string, { schema: { properties: Record<string, { enum?: string[] }> } }> };
      }
    >
  >;
};
import { killWorker, spawnWorker } from '../../support/workerProcess';

const stack = useTestStack({ worker: false, config: { bodyLimit: '64kb' } });

describe('HTTP conventions', () => {
  test('unknown route is a 404 in the bare family, with or without a key', async () => {
    for (const token of [undefined, stack.ws.token]) {
      const res = await http(stack.app, 'GET', '/api/v1/nope', { token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Not found' });
    }
  });

  test('a known path with the wrong method is a 405 with Allow, not a 404 or 500', async () => {
    const res = await http<ApiError>(stack.app, 'PUT', '/api/v1/workspaces', { token: stack.ws.token });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
    expect(res.body.error).toEqual(expect.any(String));
  });

  test('malformed JSON is a 400 with a readable message and no stack trace', async () => {
    const res = await http(stack.app, 'POST', '/api/v1/workspace-members', { token: stack.ws.token, rawBody: '{"email": ' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Request body is not valid JSON.' });
    expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
  });

  test('a body over the limit is a 413', async () => {
    const res = await http(stack.app, 'POST', '/api/v1/workspace-members', {
      token: stack.ws.token,
      body: { email: 'a@example.test', role: 'member', pad: 'x'.repeat(100 * 1024) },
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'Request body is too large.' });
  });

  test('every response carries a request id; a sane caller id is echoed, a hostile one replaced', async () => {
    const generated = await http(stack.app, 'GET', '/healthz');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await http(stack.app, 'GET', '/healthz', { headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
    const hostile = await http(stack.app, 'GET', '/healthz', {
      headers: { 'x-request-id': 'bad id\u0007'.replace('\u0007', '') + ' <script>' },
    });
    expect(hostile.headers.get('x-request-id')).not.toContain('<script>');
    const onError = await http(stack.app, 'GET', '/api/v1/workspaces');
    expect(onError.headers.get('x-request-id')).toBeTruthy();
  });

  test('/healthz answers and /readyz checks PostgreSQL, Temporal and a running worker process for real', async () => {
    expect((await http(stack.app, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
    // No worker process beats yet: nothing accepted would run, so the API is not ready.
    const without = await http(stack.app, 'GET', '/readyz');
    expect(without.status).toBe(503);
    expect(without.body).toMatchObject({
      status: 'not_ready',
      checks: { database: { ok: true }, temporal: { ok: true }, worker: { ok: false, error: expect.any(String) } },
    });
    // Bundled at start from the sources, as `npm run start:worker` runs (the other tests' workers load global setup's bundle).
    const worker = await spawnWorker({ WORKFLOW_BUNDLE_PATH: '' });
    try {
      const ready = await eventually(
        () => http<Readiness>(stack.app, 'GET', '/readyz'),
        (r) => r.status === 200,
      );
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({
        status: 'ready',
        checks: { database: { ok: true }, temporal: { ok: true }, worker: { ok: true } },
      });
      expect(ready.body.workers.running).toBeGreaterThanOrEqual(1);
      expect(ready.text).not.toMatch(/postgres:\/\/|DATABASE_URL|TEMPORAL_ADDRESS/);
    } finally {
      await killWorker(worker);
    }
    // Killed -9, it cannot say goodbye: its beat goes stale and readiness follows.
    const after = await eventually(
      () => http<Readiness>(stack.app, 'GET', '/readyz'),
      (r) => r.status === 503,
    );
    expect(after.body.checks.worker.ok).toBe(false);
  });

  test('the OpenAPI 3.1 document is generated from the route schemas', async () => {
    const res = await http<OpenApiDoc>(stack.app, 'GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const member = res.body.paths['/api/v1/workspace-members'].post;
    expect(member.security).toEqual([{ bearerAuth: [] }]);
    const bodySchema = member.requestBody.content['application/json'].schema;
    expect(bodySchema.properties.role.enum).toEqual(['admin', 'member', 'viewer']);
    expect(res.body.paths['/api/api-keys/{id}'].delete.parameters[0]).toMatchObject({ name: 'id', in: 'path' });
    expect(res.body.paths['/api/v1/workspaces'].get.responses['401']).toBeDefined();
  });
});
