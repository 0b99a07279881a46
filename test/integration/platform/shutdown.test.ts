/**
 * Graceful shutdown of the real HTTP server: in-flight requests finish, new connections are
 * refused, /readyz turns 503 while draining.
 */
import { z } from 'zod';
import { defineRoute } from '../../../api/http/route';
import { readyzRoute } from '../../../api/routes/health';
import { listen } from '../../../api/server';
import { createApp } from '../../../api/app';
import { http, useTestStack } from '../../kit';

let release: () => void = () => undefined;
// Resolved when the slow request is inside its handler: the test closes the server only then
// (a fixed pause was not always enough on a loaded machine, and the request then found it closed).
let entered: Promise<void> = Promise.resolve();
let markEntered: () => void = () => undefined;
const slowRoute = defineRoute({
  method: 'get',
  path: '/slow',
  operationId: 'slow',
  summary: 'waits until the test releases it',
  tags: ['Test'],
  family: 'bare',
  access: { kind: 'public' },
  responses: { 200: { description: 'done', schema: z.object({ done: z.boolean() }) } },
  handler: async () => {
    markEntered();
    await new Promise<void>((resolve) => (release = resolve));
    return { status: 200, body: { done: true } };
  },
});

const stack = useTestStack({ worker: false });

test('close() lets in-flight requests finish and refuses new ones', async () => {
  const lifecycle = { shuttingDown: false };
  const deps = { ...stack.app.deps, lifecycle };
  const server = await listen(createApp(deps, [slowRoute, readyzRoute]), { port: 0, host: '127.0.0.1', lifecycle });

  entered = new Promise<void>((resolve) => (markEntered = resolve));
  const inFlight = http<{ done: boolean }>(server, 'GET', '/slow');
  await entered;
  const closing = server.close(10_000);
  expect(lifecycle.shuttingDown).toBe(true);

  await expect(fetch(`${server.url}/readyz`)).rejects.toThrow();
  release();
  const res = await inFlight;
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ done: true });
  expect(res.headers.get('connection')).toBe('close');
  await closing;
});

test('/readyz reports shutting_down with 503 once draining starts', async () => {
  const lifecycle = { shuttingDown: true };
  const server = await listen(createApp({ ...stack.app.deps, lifecycle }, [readyzRoute]), {
    port: 0,
    host: '127.0.0.1',
    lifecycle: { shuttingDown: false },
  });
  try {
    const res = await http<{ status: string }>(server, 'GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('shutting_down');
  } finally {
    await server.close(1_000);
  }
});
