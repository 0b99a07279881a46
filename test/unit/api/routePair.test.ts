/**
 * defineRoutePair (api/http/route.ts): one declaration mounted as the v1 envelope route and its
 * bare session twin, each with its own path, operationId, access, summary and error responses.
 */
import { z } from 'zod';
import { defineRoutePair, sessionTwin, type AnyRoute } from '../../../api/http/route';

const ok = { description: 'ok', schema: z.object({}) };
const envelopeError = { description: 'envelope error', schema: z.object({ error: z.object({}) }) };
const bareError = { description: 'bare error', schema: z.object({ error: z.string() }) };

test('one declaration gives the envelope route and its bare twin, in that order', async () => {
  const [envelope, bare] = defineRoutePair(
    {
      method: 'get',
      summary: 'Things',
      tags: ['Things'],
      params: z.object({ id: z.string() }),
      responses: { 200: ok },
      handler: async () => ({ status: 200, body: {} }),
    },
    {
      envelope: {
        path: '/api/v1/things/{id}',
        operationId: 'getThing',
        access: { kind: 'apiKey', scopes: 'workspace', roles: 'read' },
        responses: { 401: envelopeError },
      },
      bare: {
        path: '/api/things/{id}',
        operationId: 'getThingSession',
        summary: 'Things of the session',
        access: { kind: 'session', roles: 'read' },
        responses: { 401: bareError },
      },
    },
  );
  expect(envelope).toMatchObject({ family: 'envelope', path: '/api/v1/things/{id}', operationId: 'getThing', summary: 'Things' });
  expect(envelope.responses).toEqual({ 200: ok, 401: envelopeError });
  expect(bare).toMatchObject({
    family: 'bare',
    path: '/api/things/{id}',
    operationId: 'getThingSession',
    summary: 'Things of the session',
  });
  expect(bare.access).toEqual({ kind: 'session', roles: 'read' });
  expect(bare.responses).toEqual({ 200: ok, 401: bareError });
  expect(bare.handler).toBe(envelope.handler);
  expect(bare.params).toBe(envelope.params);
});

test('a session twin keeps the role of its key route', () => {
  const route = { path: '/api/v1/x', operationId: 'x', access: { kind: 'apiKey', scopes: 'workspace', roles: 'write' } } as AnyRoute;
  expect(sessionTwin(route, '/api/x', 'sessionX')).toMatchObject({
    path: '/api/x',
    operationId: 'sessionX',
    access: { kind: 'session', roles: 'write' },
  });
});
